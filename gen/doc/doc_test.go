package doc

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/schemas"
)

// TestProtocolStatesTheSpec: the generated page names every frame, field,
// error code, limit, list, event and frame rule of the model, and R1–R7.
func TestProtocolStatesTheSpec(t *testing.T) {
	m, err := load.Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m)
	if err != nil {
		t.Fatal(err)
	}
	page := string(files[0].Contents)
	if !strings.HasPrefix(page, Header+"\n") {
		t.Error("the page does not start with the generated-code header")
	}
	want := []string{}
	for _, f := range m.Frames {
		want = append(want, "### `"+f.Type+"`")
		for _, fl := range f.Body.Fields {
			want = append(want, "| `"+fl.Name+"` |")
		}
	}
	for _, r := range m.Rules.Principles {
		want = append(want, "**"+r.ID+" ")
	}
	for _, e := range m.Rules.Errors {
		want = append(want, "| `"+e.Code+"` |")
	}
	for _, l := range m.Rules.Limits {
		want = append(want, "| `"+l.Name+"` |")
	}
	for _, l := range m.Rules.Lists {
		want = append(want, "| `"+l.Name+"` |")
	}
	for _, e := range m.Rules.Events {
		want = append(want, "| `"+e.Name+"` |")
	}
	for _, r := range m.Rules.FrameRules {
		want = append(want, "| `"+r.ID+"` |")
	}
	for _, x := range m.Rules.Refinements {
		want = append(want, "`"+x.ID+"`")
	}
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("docs/protocol.md lacks %q", w)
		}
	}
	for _, id := range []string{"R1", "R2", "R3", "R4", "R5", "R6", "R7"} {
		if !strings.Contains(page, "**"+id+" ") {
			t.Errorf("docs/protocol.md does not state %s", id)
		}
	}
}

// TestDocsStayInTheRepository: every relative link of the docs and the
// READMEs names a file in this repository, so a newcomer needs nothing
// outside it.
func TestDocsStayInTheRepository(t *testing.T) {
	root, _ := filepath.Abs("../..")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, p := range []string{"README.md", "runtime-js/README.md", "testdata/README.md"} {
		docs = append(docs, filepath.Join(root, p))
	}
	code := regexp.MustCompile("`[^`\n]*`")
	filePath := regexp.MustCompile("^`\\.\\./(?:[^`\\s]*/)?[^`\\s./][^`\\s/]*\\.[A-Za-z0-9]+`$")
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, d := range docs {
		b, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		var targets []string
		// A file path in code that climbs out (`../shared/x.md`) counts too;
		// other code (a hostile name such as `../../etc` or `../../.bashrc`
		// in a test's description) is not a reference.
		for _, c := range code.FindAllString(string(b), -1) {
			if filePath.MatchString(c) {
				targets = append(targets, strings.Trim(c, "`"))
			}
		}
		for _, m := range link.FindAllStringSubmatch(code.ReplaceAllString(string(b), ""), -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			abs := filepath.Join(filepath.Dir(d), filepath.FromSlash(target))
			rel, err := filepath.Rel(root, abs)
			if err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s points outside the repository: %s", d[len(root)+1:], target)
				continue
			}
			if _, err := os.Stat(abs); err != nil {
				t.Errorf("%s links to %s, which does not exist", d[len(root)+1:], target)
			}
		}
	}
}
