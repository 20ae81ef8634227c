package golang

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/schemas"
)

// specDir is the frozen copy of schemas/ the cases build on (see
// gen/testdata/README.md), so that a change to the real spec does not move
// every case's output.
const specDir = "../testdata/spec"

var update = flag.Bool("update", false, "rewrite the expected output of testdata/cases")

// TestCases pins what each generator feature emits. A case
// (testdata/cases/NAME.txt) is one small frame, snug:x-case: its rules.json
// entry and its schema, each using one feature (a strict frame, a size
// class, a 62-field bitmask, an enum, a pattern, a nested object, …). The
// case's frame is added to a frozen copy of the spec (gen/testdata/spec)
// and the frame package generated
// with and without it; the expected output is what the case adds and
// changes, file by file, as changed lines (-old, +new), or the generator's
// error for a case it must refuse. go test ./gen/golang -update rewrites
// them; review the diff like code.
func TestCases(t *testing.T) {
	base, err := generated(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := filepath.Glob("testdata/cases/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txt"), func(t *testing.T) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c := parseCase(t, string(raw))
			var got string
			files, err := generated(t, c)
			if err != nil {
				got = "error: " + err.Error() + "\n"
			} else {
				got = changes(base, files)
			}
			if *update {
				c.sections["want"] = got
				if err := os.WriteFile(path, []byte(c.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != c.sections["want"] {
				t.Errorf("%s: the generator's output changed (go test ./gen/golang -run TestCases -update to accept):\n%s", path, got)
			}
		})
	}
}

// A testCase is the sections of a case file: "-- name --" lines start
// each; the text before the first is its description.
type testCase struct {
	doc      string
	order    []string
	sections map[string]string
}

func parseCase(t *testing.T, s string) *testCase {
	t.Helper()
	c := &testCase{sections: map[string]string{}}
	cur := ""
	for _, line := range strings.SplitAfter(s, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "-- "); ok && strings.HasSuffix(name, " --") {
			cur = strings.TrimSuffix(name, " --")
			c.order = append(c.order, cur)
			c.sections[cur] = ""
			continue
		}
		if cur == "" {
			c.doc += line
		} else {
			c.sections[cur] += line
		}
	}
	for _, need := range []string{"rules", "schema", "want"} {
		if _, ok := c.sections[need]; !ok {
			t.Fatalf("case has no -- %s -- section", need)
		}
	}
	return c
}

func (c *testCase) String() string {
	var b strings.Builder
	b.WriteString(c.doc)
	for _, name := range c.order {
		fmt.Fprintf(&b, "-- %s --\n%s", name, c.sections[name])
	}
	return b.String()
}

// generated runs the Go emitter over the spec plus c's frame (none for nil).
func generated(t *testing.T, c *testCase) (map[string]string, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	spec := os.DirFS(specDir)
	err := fs.WalkDir(spec, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		b, err := fs.ReadFile(spec, p)
		fsys[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		const anchor = `"frames": [`
		rules := string(fsys[schemas.RulesFile].Data)
		if !strings.Contains(rules, anchor) {
			t.Fatalf("%s has no %s", schemas.RulesFile, anchor)
		}
		rules = strings.Replace(rules, anchor, anchor+"\n    "+strings.TrimSpace(c.sections["rules"])+",", 1)
		fsys[schemas.RulesFile] = &fstest.MapFile{Data: []byte(rules)}
		fsys["x-case.schema.json"] = &fstest.MapFile{Data: []byte(c.sections["schema"])}
	}
	m, err := load.Load(fsys, "schemas")
	if err != nil {
		return nil, err
	}
	files, err := Generate(m)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range files {
		out[f.Name] = string(f.Contents)
	}
	return out, nil
}

// changes lists, per file, the lines that differ between base and files:
// each run of changed lines is an "@@" line, then -old and +new lines.
func changes(base, files map[string]string) string {
	var b strings.Builder
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	for name := range base {
		if _, ok := files[name]; !ok {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		d := lineDiff(strings.SplitAfter(base[name], "\n"), strings.SplitAfter(files[name], "\n"))
		if d != "" {
			fmt.Fprintf(&b, "== %s ==\n%s", name, d)
		}
	}
	return b.String()
}

// lineDiff is a longest-common-subsequence diff of a and b without context.
func lineDiff(a, b []string) string {
	// Common prefix and suffix first: the table covers only the middle.
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	inRun := false
	line := func(sign byte, s string) {
		if !inRun {
			out.WriteString("@@\n")
			inRun = true
		}
		out.WriteByte(sign)
		out.WriteString(strings.TrimRight(s, "\n"))
		out.WriteByte('\n')
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			inRun = false
			i++
			j++
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			line('+', b[j])
			j++
		default:
			line('-', a[i])
			i++
		}
	}
	return out.String()
}
