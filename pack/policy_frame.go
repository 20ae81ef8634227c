package pack

// TEMPORARY until hostkit/frame is generated: the same values read from
// schemas/rules.json. Replaced by frame.CDNAllowlist, frame.SandboxCSP and
// frame.BlockedLinkRels.

import (
	"encoding/json"
	"strings"

	"github.com/snuggen/snuggen/schemas"
)

type cspDirective struct {
	Name    string
	Sources []string
}

var rulesPolicy = func() (p struct {
	lists map[string][]string
	csp   []cspDirective
}) {
	raw, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil {
		panic(err)
	}
	var r struct {
		Lists   map[string][]string `json:"lists"`
		Sandbox struct {
			Prefix string `json:"listSourcePrefix"`
			CSP    []struct {
				Name    string   `json:"name"`
				Sources []string `json:"sources"`
			} `json:"csp"`
		} `json:"sandbox"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		panic(err)
	}
	p.lists = r.Lists
	for _, d := range r.Sandbox.CSP {
		var src []string
		for _, s := range d.Sources {
			if name, ok := strings.CutPrefix(s, "$"); ok {
				for _, v := range r.Lists[name] {
					src = append(src, r.Sandbox.Prefix+v)
				}
				continue
			}
			src = append(src, s)
		}
		p.csp = append(p.csp, cspDirective{Name: d.Name, Sources: src})
	}
	return p
}()

func cdnAllowlist() []string     { return rulesPolicy.lists["CDN_ALLOWLIST"] }
func blockedLinkRels() []string  { return rulesPolicy.lists["BLOCKED_LINK_RELS"] }
func sandboxCSP() []cspDirective { return rulesPolicy.csp }
