// Command gen regenerates frame, runtime-js and docs/protocol.md from
// schemas/. It is the maintainer's tool, kept out of the snuggen binary
// (snuggen gen runs it): it builds only the generator, so it also works when
// the generated code of the tree does not compile (a schema change that
// renames a type). Run it at the repository root:
//
//	go run ./gen/cmd/gen            # write stale files, remove orphans
//	go run ./gen/cmd/gen --check    # write nothing; exit 1 when anything would change
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/snuggen/snuggen/gen"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = `gen reads the frame schemas and rules.json from schemas/, checks them, and
writes the generated Go package frame, the generated JS under runtime-js/
and docs/protocol.md, and removes generated files no emitter writes any more.
With --check it writes nothing and exits 1 listing every file that is stale
or orphaned (what CI runs). It works on a snuggen source tree only: run it at
the repository root.

  go run ./gen/cmd/gen
  go run ./gen/cmd/gen --check
  go run ./gen/cmd/gen --schemas ./schemas --root .

Flags:
`

// run is the command with its arguments and output; it returns the exit
// code: 0 done, 1 the spec has errors or --check found changes, 2 usage.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schemas := fs.String("schemas", "schemas", "directory holding *.schema.json and rules.json")
	root := fs.String("root", ".", "repository root the generated files are written under")
	check := fs.Bool("check", false, "write nothing; exit 1 when any generated file would change")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(stdout)
			fs.Usage()
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "gen: unexpected argument %q (gen takes flags only)\n", fs.Arg(0))
		return 2
	}
	if st, err := os.Stat(*schemas); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "gen: %s is not a directory of schemas (run from the repository root or pass --schemas)\n", *schemas)
		return 2
	}
	m, err := gen.Load(os.DirFS(*schemas), filepath.ToSlash(*schemas))
	if err != nil {
		fmt.Fprintln(stderr, err)
		fmt.Fprintf(stderr, "gen: the spec in %s has errors\n", *schemas)
		return 1
	}
	files, err := gen.Generate(m, os.DirFS(*root))
	if err != nil {
		fmt.Fprintln(stderr, "gen:", err)
		return 1
	}
	changes, err := gen.Sync(*root, files, !*check)
	if err != nil {
		fmt.Fprintln(stderr, "gen:", err)
		return 1
	}
	if *check {
		if len(changes) == 0 {
			return 0
		}
		for _, c := range changes {
			fmt.Fprintln(stdout, c)
		}
		fmt.Fprintf(stderr, "gen --check: %d generated file(s) out of date; run go run ./gen/cmd/gen\n", len(changes))
		return 1
	}
	for _, c := range changes {
		if c.Orphan {
			fmt.Fprintf(stdout, "removed %s\n", c.Name)
		} else {
			fmt.Fprintf(stdout, "wrote %s\n", c.Name)
		}
	}
	return 0
}
