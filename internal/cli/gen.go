package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/spf13/cobra"
)

// genCommand is the generator's main package in a snuggen source tree. The
// generator is a maintainer's tool: it is not linked into this binary, and
// snuggen gen runs it with the Go toolchain.
const genCommand = "./gen/cmd/gen"

func newGenCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "gen",
		Short: "Regenerate frame, runtime-js and docs/protocol.md from schemas/ (in a snuggen source tree only)",
		// Hidden from the user binary's help: it works on a snuggen source
		// tree only (its schemas/, runtime-js/src and outputs).
		Hidden: true,
		Long: `gen regenerates the generated Go package frame, the generated JS under
runtime-js/ and docs/protocol.md from schemas/, in a snuggen source tree
only: it runs "go run ./gen/cmd/gen" at the repository root, which holds the
generator (kept out of this binary). Its flags are the generator's:
--check writes nothing and exits 1 listing every stale or orphaned file (what
CI runs); --schemas and --root name other directories.`,
		Example: `  snuggen gen
  snuggen gen --check`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				if a == "-h" || a == "--help" || a == "-help" {
					return cmd.Help()
				}
			}
			return runGen(cmd, io, args)
		},
	}
}

func runGen(cmd *cobra.Command, io *IO, args []string) error {
	if st, err := os.Stat(filepath.FromSlash(genCommand)); err != nil || !st.IsDir() {
		return usageError("gen: %s is not here: gen works in a snuggen source tree; run it at the repository root", genCommand)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("gen: the Go toolchain runs the generator (go run %s): %w", genCommand, err)}
	}
	run := exec.CommandContext(cmd.Context(), goTool, append([]string{"run", genCommand}, args...)...)
	run.Stdin, run.Stdout, run.Stderr = nil, io.Out, io.Err
	if err := run.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return &ExitError{Code: ee.ExitCode(), Err: fmt.Errorf("gen: go run %s exited %d", genCommand, ee.ExitCode())}
		}
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("gen: go run %s: %w", genCommand, err)}
	}
	return nil
}
