package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print snuggen's version and the protocol versions it speaks",
		Example: "  snuggen version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			_, err := fmt.Fprintf(io.Out, "snuggen %s (protocol v%d)\n", v, protocolVersion)
			return err
		},
	}
}
