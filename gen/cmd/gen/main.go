// Command gen regenerates frame and runtime-js from schemas/, like snuggen
// gen, but builds only the generator: it works when the generated code of
// the tree does not compile (a schema change that renames a type), which the
// snuggen binary cannot. Run it at the repository root:
//
//	go run ./gen/cmd/gen          # write stale files, remove orphans
//	go run ./gen/cmd/gen -check   # write nothing; exit 1 when anything would change
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/snuggen/snuggen/gen"
)

func main() {
	check := flag.Bool("check", false, "write nothing; exit 1 when any generated file would change")
	flag.Parse()
	m, err := gen.Load(os.DirFS("schemas"), "schemas")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	files, err := gen.Generate(m, os.DirFS("."))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	changes, err := gen.Sync(".", files, !*check)
	for _, c := range changes {
		fmt.Println(c)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if *check && len(changes) > 0 {
		os.Exit(1)
	}
}
