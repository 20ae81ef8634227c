package cli

import "github.com/spf13/cobra"

func init() { register(newCheckCmd) }

// checkCommands lists the subcommands of "snuggen check"; each one's file
// calls registerCheck from init.
var checkCommands []func(*IO) *cobra.Command

func registerCheck(f func(*IO) *cobra.Command) { checkCommands = append(checkCommands, f) }

func newCheckCmd(io *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "check",
		Short: "Check one frame, agent reply or chat envelope the way a host does",
		Example: `  snuggen check frame frame.json
  echo '{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1"}' | snuggen check frame -
  snuggen check reply reply.txt
  snuggen check envelope message.txt`,
		Args: cobra.NoArgs,
	}
	for _, f := range checkCommands {
		c.AddCommand(f(io))
	}
	return c
}
