package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNothingNeedsCgo: snuggen is installed with CGO_ENABLED=0 (README), a
// static binary whose DNS goes through Go's own resolver. Of the packages it
// links, only the standard library's runtime/cgo and net may have cgo files
// (net's libc resolver, with a pure-Go fallback); a dependency that needs
// cgo would build a different program, or none, without it.
func TestNothingNeedsCgo(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if .CgoFiles}}{{.ImportPath}}{{end}}", ".")
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg != "runtime/cgo" && pkg != "net" {
			t.Errorf("%s has cgo files: snuggen is built with CGO_ENABLED=0", pkg)
		}
	}
}
