package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLeavesOutStartupCosts: packages whose init costs every snuggen
// process start are not linked in. santhosh-tekuri/jsonschema/v5 compiles
// five drafts' meta-schemas in its package init (7.6 ms of the 11 ms of
// `snuggen version`'s init, GODEBUG=inittrace=1); the host validates apps'
// response schemas with its own validator (hostkit/agent), and v5 remains
// the oracle of that validator's tests and of gen/load's. html/template's
// init (0.08M instructions) served one page, the MCP grant page, which
// hostkit/mcpapps now writes with html.EscapeString (byte-identical).
func TestBinaryLeavesOutStartupCosts(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"github.com/santhosh-tekuri/jsonschema/v5", "html/template"} {
			if pkg == banned || strings.HasPrefix(pkg, banned+"/") {
				t.Errorf("snuggen links %s", pkg)
			}
		}
	}
}

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
