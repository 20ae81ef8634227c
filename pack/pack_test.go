package pack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/evanw/esbuild/pkg/api"

	"golang.org/x/net/html"

	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// TestFSMatchesDisk builds the full fixture from an fs.FS (as hostkit does)
// and from disk: same page, byte for byte.
func TestFSMatchesDisk(t *testing.T) {
	disk, err := Build(context.Background(), Options{Path: "testdata/app/in/index.html", Runtime: []byte(testRuntime)})
	if err != nil {
		t.Fatal(err)
	}
	fsys := os.DirFS("testdata/app/in")
	mem, err := Build(context.Background(), Options{Path: "index.html", FS: fsys, Runtime: []byte(testRuntime)})
	if err != nil {
		t.Fatalf("FS build: %v\n%s", err, diagText(mem.Diagnostics))
	}
	if !bytes.Equal(disk.HTML, mem.HTML) {
		t.Errorf("FS and disk builds differ\n--- fs\n%s\n--- disk\n%s", clip(mem.HTML), clip(disk.HTML))
	}
}

// TestHTMLOnlyReadsNothing: a page given as bytes alone (raw LLM output)
// cannot reach files on disk, not even beside the working directory.
func TestHTMLOnlyReadsNothing(t *testing.T) {
	page := []byte(`<!doctype html><meta name="snug:app-id" content="raw"><meta name="snug:display-name" content="Raw">
<img src="../../../../../../etc/passwd"><link rel="stylesheet" href="golden_test.go"><script type="module">import "./pack.go";</script>`)
	res, err := Build(context.Background(), Options{Path: "raw.html", HTML: page, Runtime: []byte(testRuntime)})
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("err = %v, want ErrFailed", err)
	}
	n := 0
	for _, d := range res.Diagnostics {
		if d.Code == "ref.missing" || d.Code == "ref.outside" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("want 3 ref.missing or ref.outside, got:\n%s", diagText(res.Diagnostics))
	}
	if len(res.Inputs) != 0 {
		t.Errorf("read %v", res.Inputs)
	}
}

func TestInMemoryFS(t *testing.T) {
	fsys := fstest.MapFS{
		"app/index.html":                       {Data: []byte(`<!doctype html><meta name="snug:app-id" content="mem"><meta name="snug:display-name" content="Mem"><script type="module" src="./main.ts"></script>`)},
		"app/main.ts":                          {Data: []byte(`import { n } from "./n"; import { up } from "pkg"; const x: number = n; document.title = up(String(x));`)},
		"app/n.js":                             {Data: []byte(`export const n = 42;`)},
		"node_modules/pkg/package.json":        {Data: []byte(`{"exports": {".": {"import": "./esm/index.js", "require": "./cjs.js"}}}`)},
		"node_modules/pkg/esm/index.js":        {Data: []byte(`export const up = (s) => s + "!";`)},
		"app/node_modules/.keep":               {Data: nil},
		"app/../outside.js":                    {Data: []byte("never")},
		"node_modules/pkg/esm/unused-never.js": {Data: []byte("NEVER")},
	}
	res, err := Build(context.Background(), Options{Path: "app/index.html", FS: fsys, Runtime: []byte(testRuntime)})
	if err != nil {
		t.Fatalf("%v\n%s", err, diagText(res.Diagnostics))
	}
	if !bytes.Contains(res.HTML, []byte("42")) || !bytes.Contains(res.HTML, []byte(`+"!"`)) {
		t.Errorf("bundle lacks the module code:\n%s", res.HTML)
	}
	if strings.Join(res.Inputs, ",") != "app/index.html,app/main.ts,app/n.js,node_modules/pkg/esm/index.js" {
		t.Errorf("inputs = %v", res.Inputs)
	}
}

func TestEscapeJSContexts(t *testing.T) {
	cases := []struct{ in, want string }{
		{`a="<!--"`, `a="\x3C!--"`},
		{`a='<script>'`, `a='\x3Cscript>'`},
		{"a=`<!--${b}<SCRIPT`", "a=`\\x3C!--${b}\\x3CSCRIPT`"},
		{`a=/<!--/`, `a=/\x3C!--/`},
		{`a=b/2,c="<!--"`, `a=b/2,c="\x3C!--"`},
		{`if(x)/<!--/.test(y)`, `if(x)/\x3C!--/.test(y)`},
		{`a<!--b`, `a< !--b`},
		{`a<script`, `a< script`},
		{`x=a</script/.test(b)`, `x=a< /script/.test(b)`},
		{"a=`${`<!--`}`", "a=`${`\\x3C!--`}`"},
		{`/*<!--*/a`, `/*\x3C!--*/a`},
		{`a="ok"`, `a="ok"`},
	}
	for _, c := range cases {
		got, _ := escapeJS(c.in)
		if got != c.want {
			t.Errorf("escapeJS(%q) = %q, want %q", c.in, got, c.want)
		}
		if hasDanger(got) {
			t.Errorf("escapeJS(%q) left a dangerous sequence: %q", c.in, got)
		}
	}
}

// FuzzEscapeJS: whatever string an app holds, after esbuild and escaping
// the page parses with the script element intact and the code still
// parses as JavaScript.
func FuzzEscapeJS(f *testing.F) {
	for _, s := range []string{"</script><!--<script>", "<!--", "<script", "</SCRIPT", "`${'<!--'}`", "<\\/script>", "a\u2028b", "<!-- <script> </script> -->"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !strings.Contains(s, "<") {
			return
		}
		page := []byte(`<!doctype html><meta name="snug:app-id" content="f"><meta name="snug:display-name" content="F"><link rel="stylesheet" href="s.css"><script src="c.js"></script><script type="module" src="m.js"></script>`)
		lit := jsString(s)
		fsys := fstest.MapFS{
			"index.html": {Data: page},
			"m.js":       {Data: []byte("export const s = " + lit + ";\ndocument.title = s + `" + strings.NewReplacer("\\", "\\\\", "`", "\\`", "${", "\\${").Replace(s) + "`;\n")},
			"c.js":       {Data: []byte("var c = " + lit + "; var r = /" + regexp.QuoteMeta(strings.NewReplacer("/", "", "\n", "", "\r", "", "\u2028", "", "\u2029", "").Replace(s)) + "/;\n")},
			"s.css":      {Data: []byte(".x::after { content: " + cssString(s) + "; }\n")},
		}
		res, err := Build(context.Background(), Options{Path: "index.html", FS: fsys, Runtime: []byte(testRuntime)})
		if err != nil {
			if res != nil && strings.Contains(diagText(res.Diagnostics), "utf8") {
				return
			}
			t.Fatalf("%v\n%s", err, diagText(res.Diagnostics))
		}
		root, err := html.Parse(bytes.NewReader(res.HTML))
		if err != nil {
			t.Fatal(err)
		}
		scripts, styles := 0, 0
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && n.Data == "script" {
				scripts++
			}
			if n.Type == html.ElementNode && n.Data == "style" {
				styles++
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(root)
		if scripts != 3 || styles != 1 {
			t.Errorf("%d scripts and %d styles after parsing, want 3 (runtime, classic, module) and 1", scripts, styles)
		}
	})
}

func cssString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, "\\%x ", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func jsString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// BenchmarkBuild packages the bench fixture (bench/build-app);
// BenchmarkEsbuildBaseline runs esbuild alone on the same JS and CSS, the
// floor the packager is measured against (go test -bench . ./pack).
func BenchmarkBuild(b *testing.B) {
	opts := Options{Path: filepath.Join("..", "bench", "build-app", "index.html")}
	for i := 0; i < b.N; i++ {
		if _, err := Build(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEsbuildBaseline(b *testing.B) {
	dir, _ := filepath.Abs(filepath.Join("..", "bench", "build-app"))
	for i := 0; i < b.N; i++ {
		r := api.Build(api.BuildOptions{
			EntryPoints: []string{"src/main.js", "style.css"}, AbsWorkingDir: dir, Outdir: "/out", Write: false,
			Bundle: true, MinifyWhitespace: true, MinifyIdentifiers: true, MinifySyntax: true, Format: api.FormatESModule,
			Loader: map[string]api.Loader{".svg": api.LoaderDataURL},
		})
		if len(r.Errors) > 0 {
			b.Fatal(r.Errors[0].Text)
		}
	}
}

// TestExamplesBuild builds every example app with the real runtime: no
// errors, and a self-contained page.
func TestExamplesBuild(t *testing.T) {
	pages, _ := filepath.Glob(filepath.Join("..", "examples", "*", "*.html"))
	if len(pages) == 0 {
		t.Fatal("no example apps found under examples/")
	}
	for _, p := range pages {
		res, err := Build(context.Background(), Options{Path: p})
		if err != nil {
			t.Errorf("%s: %v\n%s", p, err, diagText(res.Diagnostics))
			continue
		}
		if !bytes.Contains(res.HTML, []byte("globalThis.snug")) {
			t.Errorf("%s: the runtime is missing", p)
		}
		if res.Manifest.AppID == "" || len(res.Manifest.Capabilities) == 0 {
			t.Errorf("%s: manifest %+v", p, res.Manifest)
		}
	}
}

// TestVerifyCatchesABrokenElement: the proof step refuses output where an
// inlined body does not come back whole.
func TestVerifyCatchesABrokenElement(t *testing.T) {
	s := &slot{open: "<script>", close: "</script>", content: `var a = "</script><p>";`, script: true}
	doc := []byte("<!doctype html><head>" + s.open + s.content + s.close + "</head>")
	if err := verify(doc, []*slot{s}); err == nil {
		t.Fatal("verify accepted a script that ends early")
	}
	s.content, _ = escapeJS(`var a = "</script><p>";`)
	s.content = strings.ReplaceAll(s.content, "</script", `<\/script`)
	doc = []byte("<!doctype html><head>" + s.open + s.content + s.close + "</head>")
	if err := verify(doc, []*slot{s}); err != nil {
		t.Fatalf("verify refused an escaped script: %v", err)
	}
}

// FuzzBuildPage: any page (no local files) either fails with diagnostics
// or gives a page that parses with the runtime first in <head>.
func FuzzBuildPage(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*/in/index.html")
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("<script>a</script><html><head></head></html>"))
	f.Add([]byte("<svg><script>1</script></svg><style>x{}</style><a href=javascript:1>x</a>"))
	f.Fuzz(func(t *testing.T, page []byte) {
		res, err := Build(context.Background(), Options{Path: "p.html", HTML: page, Runtime: []byte(testRuntime)})
		if err != nil {
			if res == nil || res.Errors() == 0 {
				t.Fatalf("failed without an error diagnostic: %v", err)
			}
			return
		}
		root, perr := html.Parse(bytes.NewReader(res.HTML))
		if perr != nil {
			t.Fatal(perr)
		}
		var first *html.Node
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if first == nil && n.Type == html.ElementNode && n.Data == "script" {
				first = n
			}
			for c := n.FirstChild; c != nil && first == nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(root)
		if first == nil || first.FirstChild == nil || !strings.Contains(first.FirstChild.Data, "snug runtime (test)") {
			t.Fatalf("the first script is not the runtime:\n%s", res.HTML)
		}
	})
}

func TestReadMetaReadsWhatBuildWrites(t *testing.T) {
	page := []byte(`<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="com.example.m"><META NAME="snug:display-name" content="Meta test">
<meta name="snug:icon-emoji" content="🧪"><meta name="other" content="x"><title>t</title></head>
<body><meta name="snug:description" content="in the body: not metadata"></body></html>`)
	res, err := Build(context.Background(), Options{Path: "app.html", HTML: page, FS: fstest.MapFS{}})
	if err != nil {
		t.Fatal(err)
	}
	got := ReadMeta(res.HTML)
	want := map[string]string{"appId": "com.example.m", "displayName": "Meta test", "iconEmoji": "🧪"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("ReadMeta[%s] = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if _, ok := got["description"]; ok {
		t.Errorf("a meta tag in the body was read: %v", got)
	}
}

// TestModalsOnlyWhenUsed: an app whose scripts say alert, or whose page
// says dialog, gets runtimejs.Modals after the Snug runtime (one script,
// one hash), for a Snug host or an MCP Apps host alike (whose sandbox need
// not allow modals: TestCarelessHabitsInAnMCPAppsHost); any other app does
// not.
func TestModalsOnlyWhenUsed(t *testing.T) {
	head := `<!doctype html><meta name="snug:app-id" content="t.m"><meta name="snug:display-name" content="M">`
	modals := string(runtimejs.Injected(runtimejs.Modals))
	for _, c := range []struct {
		name, body string
		mcp, want  bool
	}{
		{"alert", `<script>document.body.onclick = () => alert("hi");</script>`, false, true},
		{"window.alert", `<script type="module">window.alert("hi");</script>`, false, true},
		{"computed alert", `<script>window["alert"]("hi");</script>`, false, true},
		{"dialog element", `<dialog id="d"><form method="dialog"><button value="ok">OK</button></form></dialog><script>d.showModal();</script>`, false, true},
		{"dialog from script", `<script>const d = document.createElement("dialog"); document.body.append(d);</script>`, false, true},
		{"neither", `<p role="status">alerts: 0</p><script>const alerts = []; myAlert(); function myAlert() {}</script>`, false, false},
		{"MCP Apps build", `<script>alert("hi");</script>`, true, true},
		{"MCP Apps build, neither", `<p>no modals</p><script>snug.ready;</script>`, true, false},
	} {
		opts := Options{Path: "app.html", HTML: []byte(head + c.body)}
		if c.mcp {
			opts.Runtime = runtimejs.ScriptMCP
		}
		res, err := Build(context.Background(), opts)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Contains(string(res.HTML), modals); got != c.want {
			t.Errorf("%s: modals appended %v, want %v", c.name, got, c.want)
		}
	}
}

// hasWordFold answers as (?i)\bdialog\b does, on the cases that matter
// (case, boundaries, neighbours, multi-byte text) and on random text.
func TestHasWordFoldIsTheRegexp(t *testing.T) {
	re := regexp.MustCompile(`(?i)\bdialog\b`)
	cases := []string{"", "dialog", "DIALOG", "Dialog", "<dialog open>", `method="dialog"`, "dialogs", "xdialog", "_dialog", "dialog_", "dialog1", "$dialog",
		"a.dialog()", "diálog", "dialo", "ialog", "é dialog é", "éd\u0130alog", "dİalog", "d\u0131alog", "showDialog", "show-dialog", "dialog\n", "\u212adialog"}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"d", "D", "i", "I", "a", "l", "L", "o", "g", "G", " ", "_", "-", "1", "é", "\u0130", "<", "dialog", "DiAlOg"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		cases = append(cases, b.String())
	}
	for _, c := range cases {
		if got, want := hasWordFold(c, "dialog"), re.MatchString(c); got != want {
			t.Errorf("hasWordFold(%q) = %v, the regexp says %v", c, got, want)
		}
	}
}
