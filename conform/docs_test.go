package conform

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// docs/conformance.md lists every case of the kit with the rule it checks,
// and no case the kit does not have.
func TestDocsListEveryCase(t *testing.T) {
	src, err := kitFS.ReadFile("kit/cases.js")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../docs/conformance.md")
	if err != nil {
		t.Fatal(err)
	}
	kit := map[string]string{} // case id -> rule id
	for _, m := range regexp.MustCompile(`add\("([^"]+)", RULE_([A-Z0-9_]+),`).FindAllStringSubmatch(string(src), -1) {
		rule := strings.ToLower(strings.ReplaceAll(m[2], "_", "-"))
		for _, nr := range frame.NormativeRules {
			if strings.EqualFold(nr.ID, rule) {
				rule = nr.ID
			}
		}
		if RuleTitle(rule) == "" {
			t.Errorf("case %s names RULE_%s, no rule of rules.json", m[1], m[2])
		}
		kit[m[1]] = rule
	}
	if len(kit) < 40 {
		t.Fatalf("found %d cases in cases.js; the pattern no longer matches", len(kit))
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9.-]+)` \\| ([A-Za-z0-9-]+)").FindAllStringSubmatch(string(doc), -1) {
		documented[m[1]] = true
		if rule, ok := kit[m[1]]; !ok {
			t.Errorf("docs/conformance.md lists %s, which the kit does not have", m[1])
		} else if m[2] != rule {
			t.Errorf("docs/conformance.md says %s checks %s; the kit says %s", m[1], m[2], rule)
		}
	}
	for id := range kit {
		if !documented[id] {
			t.Errorf("docs/conformance.md does not list %s", id)
		}
	}
}
