package load

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

var update = flag.Bool("update", false, "rewrite the stderr of testdata/errors")

// TestLoadErrors holds what snuggen gen prints on stderr for each load
// error (testdata/errors/NAME.txt): the case breaks one file of the frozen
// copy of schemas/ in gen/testdata/spec (-- file --, -- old --, -- new --: a replacement that must apply
// once) or adds one (-- add NAME --), and -- stderr -- is the whole report,
// file, line, column, pointer, message and fix. go test ./gen/load -update
// rewrites the reports; review them like code.
func TestLoadErrors(t *testing.T) {
	paths, err := filepath.Glob("testdata/errors/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			doc, sections, order := splitSections(string(raw))
			fsys := copySpec(t, "../testdata/spec")
			if f, ok := sections["file"]; ok {
				name := strings.TrimSpace(f)
				old, new := strings.TrimSuffix(sections["old"], "\n"), strings.TrimSuffix(sections["new"], "\n")
				data := string(fsys[name].Data)
				if strings.Count(data, old) != 1 {
					t.Fatalf("%s holds %q %d times, want once", name, old, strings.Count(data, old))
				}
				fsys[name] = &fstest.MapFile{Data: []byte(strings.Replace(data, old, new, 1))}
			}
			for _, s := range order {
				if name, ok := strings.CutPrefix(s, "add "); ok {
					fsys[name] = &fstest.MapFile{Data: []byte(sections[s])}
				}
			}
			_, err = Load(fsys, "schemas")
			if err == nil {
				t.Fatal("Load accepted the broken spec")
			}
			if _, ok := err.(Diagnostics); !ok {
				t.Fatalf("Load returned %T, want Diagnostics: %v", err, err)
			}
			got := err.Error() + "\n" // snuggen gen prints it with Fprintln
			if *update {
				sections["stderr"] = got
				if err := os.WriteFile(path, []byte(joinSections(doc, sections, order)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != sections["stderr"] {
				t.Errorf("stderr:\n%s\nwant:\n%s(go test ./gen/load -run TestLoadErrors -update to accept)", got, sections["stderr"])
			}
		})
	}
}

// splitSections reads "-- name --" sections; the text before the first is
// the case's description.
func splitSections(s string) (doc string, sections map[string]string, order []string) {
	sections = map[string]string{}
	cur := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "-- "); ok && strings.HasSuffix(name, " --") {
			cur = strings.TrimSuffix(name, " --")
			order = append(order, cur)
			sections[cur] = ""
			continue
		}
		if cur == "" {
			doc += line
		} else {
			sections[cur] += line
		}
	}
	return doc, sections, order
}

func joinSections(doc string, sections map[string]string, order []string) string {
	var b strings.Builder
	b.WriteString(doc)
	for _, name := range order {
		b.WriteString("-- " + name + " --\n" + sections[name])
	}
	return b.String()
}
