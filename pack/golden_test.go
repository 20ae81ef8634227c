package pack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// testRuntime stands in for the Snug runtime in goldens, so a runtime
// change does not rewrite every golden page.
const testRuntime = "/* snug runtime (test) */window.snug={ready:Promise.resolve({capabilities:{}})};"

type caseOptions struct {
	MaxAssetBytes int64 `json:"maxAssetBytes"`
	Strict        bool  `json:"strict"`
}

func caseOpts(t *testing.T, dir string) Options {
	t.Helper()
	opts := Options{Path: filepath.Join(dir, "in", "index.html"), Runtime: []byte(testRuntime)}
	if raw, err := os.ReadFile(filepath.Join(dir, "options.json")); err == nil {
		var co caseOptions
		if err := json.Unmarshal(raw, &co); err != nil {
			t.Fatalf("options.json: %v", err)
		}
		opts.MaxAssetBytes, opts.Strict = co.MaxAssetBytes, co.Strict
	}
	return opts
}

func diagText(ds []Diagnostic) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "[%s] %s\n", d.Code, d.String())
	}
	return b.String()
}

// golden compares got with the file, or rewrites it with -update. An
// empty got means the file must not exist.
func golden(t *testing.T, file string, got []byte) {
	t.Helper()
	if *update {
		if got == nil {
			os.Remove(file)
			return
		}
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if got == nil {
		if err == nil {
			t.Errorf("%s exists but the build produced no such output", file)
		}
		return
	}
	if err != nil {
		t.Fatalf("%v (run go test ./pack -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (run go test ./pack -update and review the diff)\n--- got\n%s\n--- want\n%s", file, clip(got), clip(want))
	}
}

func clip(b []byte) string {
	if len(b) > 3000 {
		return string(b[:3000]) + "..."
	}
	return string(b)
}

// TestGolden builds every folder under testdata/*/in and compares the page,
// the diagnostics and the manifest with the files beside it.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/in")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, in := range dirs {
		dir := filepath.Dir(in)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			opts := caseOpts(t, dir)
			res, err := Build(context.Background(), opts)
			if res == nil {
				t.Fatalf("Build: %v", err)
			}
			golden(t, filepath.Join(dir, "diagnostics.txt"), []byte(diagText(res.Diagnostics)))
			if res.Errors() > 0 {
				if !errors.Is(err, ErrFailed) {
					t.Errorf("errors reported but Build returned %v, want ErrFailed", err)
				}
				if res.HTML != nil {
					t.Errorf("a failed build returned HTML")
				}
				for _, d := range res.Diagnostics {
					if d.Severity == SeverityError && d.Line == 0 {
						t.Errorf("error without a place: %s", d)
					}
				}
				golden(t, filepath.Join(dir, "out.html"), nil)
				golden(t, filepath.Join(dir, "manifest.json"), nil)
				return
			}
			if err != nil {
				t.Fatalf("Build: %v", err)
			}
			golden(t, filepath.Join(dir, "out.html"), res.HTML)
			m, _ := json.MarshalIndent(res.Manifest, "", "  ")
			golden(t, filepath.Join(dir, "manifest.json"), append(m, '\n'))
			checkSelfContained(t, res.HTML)
			again, err := Build(context.Background(), opts)
			if err != nil || !bytes.Equal(again.HTML, res.HTML) {
				t.Errorf("a second build of the same input differs (err %v)", err)
			}
		})
	}
}

// checkSelfContained parses a built page and checks it references no local
// file: every URL attribute is data:, blob:, a fragment, or https on the
// CDN allowlist; and the runtime is the first script, after the CSP meta.
func checkSelfContained(t *testing.T, page []byte) {
	t.Helper()
	root, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	var firstScript, cspMeta *html.Node
	var order []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			order = append(order, n)
			if n.Data == "script" && firstScript == nil {
				firstScript = n
			}
			if n.Data == "meta" && strings.EqualFold(attr(n, "http-equiv"), "content-security-policy") {
				cspMeta = n
			}
			for _, a := range n.Attr {
				switch a.Key {
				case "src", "href", "poster", "data", "action", "srcset":
				default:
					continue
				}
				if n.Data == "a" {
					continue // a link is navigation, checked as a warning
				}
				refs := []string{a.Val}
				if a.Key == "srcset" {
					refs = regexp.MustCompile(`,\s+`).Split(a.Val, -1)
				}
				for _, ref := range refs {
					f := strings.Fields(ref)
					if len(f) == 0 {
						continue
					}
					kind := classifyRef(f[0])
					if a.Key == "action" && kind != refLocal {
						continue
					}
					switch kind {
					case refLocal, refScheme:
						t.Errorf("output references %q in <%s %s>", f[0], n.Data, a.Key)
					case refRemote:
						if _, _, _, ok := remoteCheck(f[0], "x"); !ok {
							t.Errorf("output references non-allowlisted %q", f[0])
						}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	if cspMeta == nil || firstScript == nil {
		t.Fatalf("no CSP meta or no script in the output")
	}
	if firstScript.FirstChild == nil || !strings.Contains(firstScript.FirstChild.Data, "snug runtime (test)") {
		t.Errorf("the first script is not the runtime")
	}
	pos := map[*html.Node]int{}
	for i, n := range order {
		pos[n] = i
	}
	if pos[cspMeta] > pos[firstScript] {
		t.Errorf("the CSP meta comes after the first script")
	}
	if firstScript.Parent == nil || firstScript.Parent.Data != "head" {
		t.Errorf("the runtime is not in <head>")
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// TestEveryDiagnosticHasACase holds the goldens to covering every code the
// packager emits.
func TestEveryDiagnosticHasACase(t *testing.T) {
	codes := []string{
		"sandbox.network", "sandbox.storage", "sandbox.navigation", "sandbox.modal", "sandbox.worker",
		"html.form-action", "html.inline-handler", "html.resource-hint", "html.csp-replaced", "html.manifest",
		"html.base", "html.embed", "html.svg-script", "html.importmap", "html.unclosed",
		"meta.missing", "meta.too-long", "meta.empty", "meta.unknown", "meta.icon-color",
		"cdn.not-allowed", "ref.missing", "ref.outside", "ref.not-file", "ref.local-link", "import.cycle", "bundle", "asset.too-large", "utf8.invalid",
		"snug.api",
	}
	files, _ := filepath.Glob("testdata/*/diagnostics.txt")
	seen := map[string]bool{}
	for _, f := range files {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "[") {
				seen[line[1:strings.IndexByte(line, ']')]] = true
			}
		}
	}
	var missing []string
	for _, c := range codes {
		if !seen[c] {
			missing = append(missing, c)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("no golden case shows %v", missing)
	}
}
