package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/gen"
)

type genOptions struct {
	schemas string // directory of the spec
	root    string // repository root the generated paths are relative to
	check   bool
}

func newGenCmd(io *IO) *cobra.Command {
	o := &genOptions{}
	c := &cobra.Command{
		Use:   "gen",
		Short: "Regenerate frame, runtime-js and docs/protocol.md from schemas/ (in a snuggen source tree only)",
		// Hidden from the user binary's help: it works on a snuggen source
		// tree only (its schemas/, runtime-js/src and outputs).
		Hidden: true,
		Long: `gen reads the frame schemas and rules.json from schemas/, checks them, and
writes the generated Go package frame, the generated JS under runtime-js/
and docs/protocol.md, and removes generated files no emitter writes any more. With
--check it writes nothing and exits 1 listing every file that is stale or
orphaned (what CI runs). It works on a snuggen source tree only: run it at
the repository root (go run ./gen/cmd/gen does the same without building
the rest of snuggen, for when generated code does not compile).`,
		Example: `  snuggen gen
  snuggen gen --check
  snuggen gen --schemas ./schemas --root .`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGen(io, o) },
	}
	c.Flags().StringVar(&o.schemas, "schemas", "schemas", "directory holding *.schema.json and rules.json")
	c.Flags().StringVar(&o.root, "root", ".", "repository root the generated files are written under")
	c.Flags().BoolVar(&o.check, "check", false, "write nothing; exit 1 when any generated file would change")
	return c
}

func runGen(io *IO, o *genOptions) error {
	if st, err := os.Stat(o.schemas); err != nil || !st.IsDir() {
		return usageError("gen: %s is not a directory of schemas (run from the repository root or pass --schemas)", o.schemas)
	}
	m, err := gen.Load(os.DirFS(o.schemas), filepath.ToSlash(o.schemas))
	if err != nil {
		fmt.Fprintln(io.Err, err)
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("gen: the spec in %s has errors", o.schemas)}
	}
	files, err := gen.Generate(m, os.DirFS(o.root))
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	changes, err := gen.Sync(o.root, files, !o.check)
	if err != nil {
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("gen: %w", err)}
	}
	if o.check {
		if len(changes) == 0 {
			return nil
		}
		for _, c := range changes {
			fmt.Fprintln(io.Out, c)
		}
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("gen --check: %d generated file(s) out of date; run snuggen gen", len(changes))}
	}
	for _, c := range changes {
		if c.Orphan {
			fmt.Fprintf(io.Out, "removed %s\n", c.Name)
		} else {
			fmt.Fprintf(io.Out, "wrote %s\n", c.Name)
		}
	}
	return nil
}
