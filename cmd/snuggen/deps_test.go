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
