package cli

import "github.com/spf13/cobra"

func newCheckCmd(io *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "check",
		Short: "Check one frame, agent reply or chat envelope the way a host does",
		Example: `  snuggen check frame frame.json
  echo '{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1"}' | snuggen check frame -
  snuggen check reply reply.txt
  snuggen check envelope message.txt`,
	}
	return group(c, newCheckFrameCmd(io), newCheckReplyCmd(io), newCheckEnvelopeCmd(io))
}
