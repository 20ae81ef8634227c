package pack

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// secretMarker is the content of every file outside the app's folder. A
// build that leaks shows it in its output (raw or base64) or diagnostics.
const secretMarker = "SNUG-HOST-SECRET-4f1c9e"

// hostTree lays out, in a fresh temporary directory, the files an attacker
// wants (under secret/) next to an app folder (app/). It returns the app
// folder and the secret folder.
func hostTree(t *testing.T) (app, secret string) {
	t.Helper()
	root := t.TempDir()
	secret = filepath.Join(root, "secret")
	app = filepath.Join(root, "app")
	files := map[string]string{
		"secret/hostname":         secretMarker + "\n",
		"secret/s.css":            `.leak{content:"` + secretMarker + `"}`,
		"secret/s.js":             `export default "` + secretMarker + `"; window.leak = "` + secretMarker + `";`,
		"secret/s.json":           `{"leak":"` + secretMarker + `"}`,
		"secret/p.png":            secretMarker,
		"secret/x.svg":            `<svg xmlns="http://www.w3.org/2000/svg"><text>` + secretMarker + `</text></svg>`,
		"secret/s.map":            `{"version":3,"sources":["` + secretMarker + `"],"mappings":""}`,
		"secret/pkg/package.json": `{"name":"pkg","main":"index.js"}`,
		"secret/pkg/index.js":     `export default "` + secretMarker + `";`,
		"app/ok.png":              "PNGOK",
		"app/sub/inside.png":      "INSIDE",
		"app/sub/inside.js":       `export const inside = "inside-ok";`,
	}
	for name, data := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return app, secret
}

const confineHead = `<!doctype html><html><head><meta name="snug:app-id" content="leak"><meta name="snug:display-name" content="Leak"></head><body>
`

// buildApp writes files into app (page at index.html) and builds it with a
// deadline, so a build that blocks (on a FIFO) fails the test instead of
// hanging it.
func buildApp(t *testing.T, app string, files map[string]string, strict bool) (*Result, error) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(app, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	type out struct {
		res *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := Build(context.Background(), Options{Path: filepath.Join(app, "index.html"), Runtime: []byte(testRuntime), Strict: strict})
		done <- out{res, err}
	}()
	select {
	case o := <-done:
		return o.res, o.err
	case <-time.After(20 * time.Second):
		t.Fatal("the build blocked (it opened something that never answers)")
		return nil, nil
	}
}

// assertNoLeak fails when anything outside the app's folder reached the
// build's output, diagnostics or inputs.
func assertNoLeak(t *testing.T, res *Result, secret string) {
	t.Helper()
	if res == nil {
		return
	}
	b64 := []string{base64.StdEncoding.EncodeToString([]byte(secretMarker)), base64.StdEncoding.EncodeToString([]byte(secretMarker + "\n"))}
	if bytes.Contains(res.HTML, []byte(secretMarker)) || bytes.Contains(res.HTML, []byte(b64[0][:16])) {
		t.Errorf("the output embeds a file from outside the app's folder:\n%s", clip(res.HTML))
	}
	for _, d := range res.Diagnostics {
		if strings.Contains(d.String()+d.LineText, secretMarker) {
			t.Errorf("a diagnostic quotes a file from outside the app's folder: %s | %s", d, d.LineText)
		}
	}
	for _, in := range res.Inputs {
		if strings.HasPrefix(in, secret) || strings.Contains(in, "secret") {
			t.Errorf("the build read %s", in)
		}
	}
}

// wantRefused asserts the build failed with code at file:line:col.
func wantRefused(t *testing.T, res *Result, err error, code, file string, line int) {
	t.Helper()
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("Build = %v, want ErrFailed (a refused reference)", err)
	}
	if res.HTML != nil {
		t.Errorf("a failed build returned HTML")
	}
	for _, d := range res.Diagnostics {
		if d.Code == code && d.Severity == SeverityError {
			if d.File != file || d.Line != line || d.Column <= 0 {
				t.Errorf("%s at %s:%d:%d, want %s:%d:col", code, d.File, d.Line, d.Column, file, line)
			}
			if d.Fix == "" || d.Why == "" {
				t.Errorf("%s without why and fix: %s", code, d)
			}
			return
		}
	}
	t.Errorf("no %s error; got:\n%s", code, diagText(res.Diagnostics))
}

// TestRefusesReferencesOutsideTheApp mounts each path-traversal form an
// app can write against a real folder tree; every one is a build error at
// the reference, in strict mode and not, and nothing outside the app's
// folder is read.
func TestRefusesReferencesOutsideTheApp(t *testing.T) {
	deepUp := func(secret string) string {
		return strings.Repeat("../", 24) + strings.TrimPrefix(filepath.ToSlash(secret), "/")
	}
	type tc struct {
		name  string
		files func(secret string) map[string]string
		links map[string]string // in app: name -> target (an absolute target is written "@secret/...")
		code  string
		file  string // where the diagnostic points
		line  int
	}
	page := func(body string) func(string) map[string]string {
		return func(string) map[string]string {
			return map[string]string{"index.html": confineHead + body + "\n</body></html>"}
		}
	}
	withFile := func(body, name, content string) func(string) map[string]string {
		return func(string) map[string]string {
			return map[string]string{"index.html": confineHead + body + "\n</body></html>", name: content}
		}
	}
	cases := []tc{
		{name: "img dotdot", files: page(`<img src="../secret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img deep dotdot to absolute", files: func(s string) map[string]string {
			return map[string]string{"index.html": confineHead + `<img src="` + deepUp(s) + `/hostname">`}
		}, code: "ref.outside", file: "index.html", line: 2},
		{name: "img spaces around dotdot", files: page("<img src=\"  ../secret/hostname \t\">"), code: "ref.outside", file: "index.html", line: 2},
		{name: "img tab inside dotdot", files: page("<img src=\".\t./secret/hostname\">"), code: "ref.outside", file: "index.html", line: 2},
		{name: "img dotdot after a folder", files: page(`<img src="sub/../../secret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img encoded dotdot after a folder", files: page(`<img src="sub/..%2f..%2fsecret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "css escaped dots", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", `body{background:url("\2e\2e/secret/p.png")}`), code: "ref.outside", file: "style.css", line: 1},
		{name: "css import file url", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", `@import url("file:///etc/hostname");`), code: "ref.outside", file: "style.css", line: 1},
		{name: "js package spec climbing", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"pkg/../../secret/s.js\";\nconsole.log(s);"), code: "ref.outside", file: "main.js", line: 1},
		{name: "img root then dotdot", files: page(`<img src="/../secret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img percent-encoded dots", files: page(`<img src="%2e%2e/secret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img percent-encoded slash", files: page(`<img src="..%2fsecret%2fhostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img percent-encoded upper", files: page(`<img src="%2E%2E%2Fsecret/hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img backslashes", files: page(`<img src="..\secret\hostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img encoded backslash", files: page(`<img src="..%5csecret%5chostname">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "img file url", files: func(s string) map[string]string {
			return map[string]string{"index.html": confineHead + `<img src="file://` + filepath.ToSlash(s) + `/hostname">`}
		}, code: "ref.outside", file: "index.html", line: 2},
		{name: "img FILE url upper", files: func(s string) map[string]string {
			return map[string]string{"index.html": confineHead + `<img src="FILE:` + filepath.ToSlash(s) + `/hostname">`}
		}, code: "ref.outside", file: "index.html", line: 2},
		{name: "srcset", files: page(`<img srcset="ok.png 1x, ../secret/hostname 2x">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "picture source srcset", files: page(`<picture><source srcset="../secret/p.png"><img src="ok.png"></picture>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "style attribute url", files: page(`<div style="background:url('../secret/p.png')"></div>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "video poster", files: page(`<video poster="../secret/p.png"></video>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "video and track src", files: page(`<video src="ok.png"><track src="../secret/hostname"></video>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "audio src", files: page(`<audio src="../secret/hostname"></audio>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "input image", files: page(`<input type="image" src="../secret/p.png">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "icon", files: page(`<link rel="icon" href="../secret/p.png">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "apple touch icon", files: page(`<link rel="apple-touch-icon" href="../secret/p.png">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "svg use href", files: page(`<svg><use href="../secret/x.svg#a"></use></svg>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "svg image xlink", files: page(`<svg><image xlink:href="../secret/p.png"></image></svg>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "object data", files: page(`<object data="../secret/hostname"></object>`), code: "html.embed", file: "index.html", line: 2},
		{name: "stylesheet link", files: page(`<link rel="stylesheet" href="../secret/s.css">`), code: "ref.outside", file: "index.html", line: 2},
		{name: "classic script src", files: page(`<script src="../secret/s.js"></script>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "module script src", files: page(`<script type="module" src="../secret/s.js"></script>`), code: "ref.outside", file: "index.html", line: 2},
		{name: "css import", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", "@import \"../secret/s.css\";\nbody{color:red}"), code: "ref.outside", file: "style.css", line: 1},
		{name: "css url", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", "body{color:red}\nbody{background:url(../secret/p.png)}"), code: "ref.outside", file: "style.css", line: 2},
		{name: "css url percent", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", "body{background:url(%2e%2e/secret/p.png)}"), code: "ref.outside", file: "style.css", line: 1},
		{name: "css url root dotdot", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", "body{background:url(/../secret/p.png)}"), code: "ref.outside", file: "style.css", line: 1},
		{name: "inline style import", files: page("<style>\n@import '../secret/s.css';\n</style>"), code: "ref.outside", file: "index.html", line: 3},
		{name: "inline style url", files: page("<style>\nb{background:url(\"../secret/p.png\")}\n</style>"), code: "ref.outside", file: "index.html", line: 3},
		{name: "js import", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"../secret/s.js\";\nconsole.log(s);"), code: "ref.outside", file: "main.js", line: 1},
		{name: "js import json", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"../secret/s.json\";\nconsole.log(s);"), code: "ref.outside", file: "main.js", line: 1},
		{name: "js dynamic import", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "\nimport(\"../secret/s.js\").then(console.log);"), code: "ref.outside", file: "main.js", line: 2},
		{name: "js require", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "\n\nconsole.log(require(\"../secret/s.js\"));"), code: "ref.outside", file: "main.js", line: 3},
		{name: "js root-absolute climbing", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"/../secret/s.js\";\nconsole.log(s);"), code: "ref.outside", file: "main.js", line: 1},
		{name: "js backslash", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"..\\\\secret\\\\s.js\";\nconsole.log(s);"), code: "ref.outside", file: "main.js", line: 1},
		{name: "js file url", files: func(s string) map[string]string {
			return map[string]string{"index.html": confineHead + `<script type="module" src="main.js"></script>`,
				"main.js": "import s from \"file://" + filepath.ToSlash(s) + "/s.js\";\nconsole.log(s);"}
		}, code: "ref.outside", file: "main.js", line: 1},
		{name: "js absolute host path", files: func(s string) map[string]string {
			return map[string]string{"index.html": confineHead + `<script type="module" src="main.js"></script>`,
				"main.js": "import s from \"" + filepath.ToSlash(s) + "/s.js\";\nconsole.log(s);"}
		}, code: "ref.missing", file: "main.js", line: 1},
		{name: "inline module import", files: page("<script type=\"module\">\nimport s from '../secret/s.js'; console.log(s);\n</script>"), code: "ref.outside", file: "index.html", line: 3},
		{name: "package main climbs out", files: func(string) map[string]string {
			return map[string]string{"index.html": confineHead + `<script type="module">import p from "pkg"; console.log(p);</script>`,
				"node_modules/pkg/package.json": `{"main":"../../../secret/s.js"}`}
		}, code: "ref.outside", file: "index.html", line: 2},
		{name: "package exports climbs out", files: func(string) map[string]string {
			return map[string]string{"index.html": confineHead + `<script type="module">import p from "pkg"; console.log(p);</script>`,
				"node_modules/pkg/package.json": `{"exports":{".":"../../../secret/s.js"}}`}
		}, code: "ref.outside", file: "index.html", line: 2},

		// Symbolic links created in the app's folder.
		{name: "symlink file out (relative)", files: page(`<img src="leak.png">`), links: map[string]string{"leak.png": "../secret/hostname"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlink file out (absolute)", files: page(`<img src="leak.png">`), links: map[string]string{"leak.png": "@secret/hostname"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlink to proc environ", files: page(`<img src="env.png">`), links: map[string]string{"env.png": "/proc/self/environ"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlink to a device", files: page(`<img src="zero.png">`), links: map[string]string{"zero.png": "/dev/zero"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlinked directory out, img", files: page(`<img src="assets/hostname">`), links: map[string]string{"assets": "../secret"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlinked directory out, stylesheet", files: page(`<link rel="stylesheet" href="assets/s.css">`), links: map[string]string{"assets": "@secret"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlinked directory out, css url", files: withFile(`<link rel="stylesheet" href="style.css">`, "style.css", "body{background:url(assets/p.png)}"), links: map[string]string{"assets": "../secret"}, code: "ref.outside", file: "style.css", line: 1},
		{name: "symlinked directory out, js import", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"./assets/s.js\";\nconsole.log(s);"), links: map[string]string{"assets": "../secret"}, code: "ref.outside", file: "main.js", line: 1},
		{name: "symlinked js file out", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"./lib.js\";\nconsole.log(s);"), links: map[string]string{"lib.js": "../secret/s.js"}, code: "ref.outside", file: "main.js", line: 1},
		{name: "symlinked script src out", files: page(`<script src="lib.js"></script>`), links: map[string]string{"lib.js": "../secret/s.js"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlinked node_modules package out", files: page(`<script type="module">import p from "pkg"; console.log(p);</script>`), links: map[string]string{"node_modules/pkg": "../../secret/pkg"}, code: "ref.outside", file: "index.html", line: 2},
		{name: "symlinked node_modules out", files: page(`<script type="module">import p from "pkg"; console.log(p);</script>`), links: map[string]string{"node_modules": "@secret"}, code: "ref.outside", file: "index.html", line: 2},

		// Not a regular file.
		{name: "directory", files: page(`<img src="sub">`), code: "ref.not-file", file: "index.html", line: 2},
		{name: "directory slash", files: page(`<img src="sub/">`), code: "ref.not-file", file: "index.html", line: 2},
		{name: "fifo img", files: page(`<img src="pipe.png">`), links: map[string]string{"pipe.png": "|fifo"}, code: "ref.not-file", file: "index.html", line: 2},
		{name: "fifo stylesheet", files: page(`<link rel="stylesheet" href="pipe.css">`), links: map[string]string{"pipe.css": "|fifo"}, code: "ref.not-file", file: "index.html", line: 2},
		{name: "fifo js import", files: withFile(`<script type="module" src="main.js"></script>`, "main.js", "import s from \"./pipe.js\";\nconsole.log(s);"), links: map[string]string{"pipe.js": "|fifo"}, code: "ref.not-file", file: "main.js", line: 1},
	}
	for _, c := range cases {
		for _, strict := range []bool{false, true} {
			name := c.name
			if strict {
				name += " strict"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				app, secret := hostTree(t)
				makeLinks(t, app, secret, c.links)
				res, err := buildApp(t, app, c.files(secret), strict)
				assertNoLeak(t, res, secret)
				if res == nil {
					t.Fatalf("Build: %v", err)
				}
				wantRefused(t, res, err, c.code, c.file, c.line)
			})
		}
	}
}

func makeLinks(t *testing.T, app, secret string, links map[string]string) {
	t.Helper()
	for name, target := range links {
		p := filepath.Join(app, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if target == "|fifo" {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if rest, ok := strings.CutPrefix(target, "@secret"); ok {
			target = secret + filepath.FromSlash(rest)
		}
		if err := os.Symlink(filepath.FromSlash(target), p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConfinedAppStillBuilds: what stays inside the folder keeps working:
// a path that climbs and comes back within the folder, a symlink (file and
// directory) that points inside it, an app folder reached through a
// symlink, percent-escapes of ordinary names; and references the build does
// not follow (a source map comment, new URL(…, import.meta.url)) read
// nothing.
func TestConfinedAppStillBuilds(t *testing.T) {
	app, secret := hostTree(t)
	makeLinks(t, app, secret, map[string]string{"alias.png": "sub/inside.png", "lib": "sub", "abs.png": "@secret/../app/ok.png"})
	files := map[string]string{
		"index.html": confineHead + `<img src="sub/../ok.png"><img src="alias.png"><img src="lib/inside.png"><img src="sub%2Finside.png">
<link rel="stylesheet" href="style.css"><script type="module" src="main.js"></script></body></html>`,
		"style.css": "body{background:url(lib/inside.png)}",
		"main.js": "import { inside } from \"./lib/inside.js\";\nconsole.log(inside, new URL(\"../secret/hostname\", import.meta.url));\n" +
			"//# sourceMappingURL=../secret/s.map\n",
	}
	res, err := buildApp(t, app, files, false)
	assertNoLeak(t, res, secret)
	if err != nil {
		t.Fatalf("Build: %v\n%s", err, diagText(res.Diagnostics))
	}
	for _, want := range []string{base64.StdEncoding.EncodeToString([]byte("PNGOK")), base64.StdEncoding.EncodeToString([]byte("INSIDE")), "inside-ok"} {
		if !bytes.Contains(res.HTML, []byte(want)) {
			t.Errorf("output lacks %q", want)
		}
	}
	// An absolute symlink is refused even when it points back inside.
	res, err = buildApp(t, app, map[string]string{"index.html": confineHead + `<img src="abs.png">`}, false)
	assertNoLeak(t, res, secret)
	wantRefused(t, res, err, "ref.outside", "index.html", 2)

	// The app folder itself reached through a symlink: its files build,
	// and ".." is measured from the real folder.
	via := filepath.Join(t.TempDir(), "via")
	if err := os.Symlink(app, via); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(app, "index.html"), []byte(confineHead+`<img src="ok.png"><img src="../secret/hostname">`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Build(context.Background(), Options{Path: filepath.Join(via, "index.html"), Runtime: []byte(testRuntime)})
	assertNoLeak(t, res, secret)
	wantRefused(t, res, err, "ref.outside", "index.html", 2)
	if len(res.Diagnostics) != 1 {
		t.Errorf("want only the refused reference, got:\n%s", diagText(res.Diagnostics))
	}
}

// TestPageThatIsASymlinkOut: the page itself is read through the same
// confinement.
func TestPageThatIsASymlinkOut(t *testing.T) {
	app, secret := hostTree(t)
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(secret, "hostname"), filepath.Join(app, "index.html")); err != nil {
		t.Fatal(err)
	}
	res, err := Build(context.Background(), Options{Path: filepath.Join(app, "index.html"), Runtime: []byte(testRuntime)})
	if err == nil || res != nil && res.HTML != nil {
		t.Fatalf("built a page that is a symlink out of its folder")
	}
	if strings.Contains(err.Error(), secretMarker) {
		t.Fatalf("error quotes the secret: %v", err)
	}
	if !strings.Contains(err.Error(), "outside") {
		t.Errorf("error %q does not say the page leads outside its folder", err)
	}
}

// TestFSConfinement: an fs.FS that exposes its links (os.DirFS does, and
// follows them on open) gets the same rules: a link out of the FS, file or
// directory, is refused, and a FIFO is refused before it is opened.
func TestFSConfinement(t *testing.T) {
	app, secret := hostTree(t)
	makeLinks(t, app, secret, map[string]string{"leak.png": "../secret/hostname", "assets": "@secret", "pipe.png": "|fifo", "alias.png": "sub/inside.png"})
	page := confineHead + "<img src=\"leak.png\">\n<link rel=\"stylesheet\" href=\"assets/s.css\">\n<img src=\"pipe.png\">\n<img src=\"alias.png\">\n</body></html>"
	if err := os.WriteFile(filepath.Join(app, "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var res *Result
	var err error
	go func() {
		defer close(done)
		res, err = Build(context.Background(), Options{Path: "index.html", FS: os.DirFS(app), Runtime: []byte(testRuntime)})
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the build blocked on the FIFO")
	}
	assertNoLeak(t, res, secret)
	if !errors.Is(err, ErrFailed) {
		t.Fatalf("Build = %v", err)
	}
	want := map[string]string{"2": "ref.outside", "3": "ref.outside", "4": "ref.not-file"}
	for _, d := range res.Diagnostics {
		if d.Severity == SeverityError {
			line := strings.TrimSpace(strings.Split(d.String(), ":")[1])
			if want[line] != d.Code {
				t.Errorf("unexpected %s", d)
			}
			delete(want, line)
		}
	}
	if len(want) > 0 {
		t.Errorf("missing errors on lines %v:\n%s", want, diagText(res.Diagnostics))
	}
}

// TestSwappedLinkNeverLeaks races the build against a file that flips
// between a regular file and a symlink to the secret: the file is checked
// on the descriptor the build reads from, so no build ever embeds the
// secret, whichever it meets.
func TestSwappedLinkNeverLeaks(t *testing.T) {
	app, secret := hostTree(t)
	if err := os.WriteFile(filepath.Join(app, "index.html"), []byte(confineHead+`<img src="flip.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	flip := filepath.Join(app, "flip.png")
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := flip + ".tmp"
			os.Remove(tmp)
			if i%2 == 0 {
				_ = os.Symlink(filepath.Join(secret, "hostname"), tmp)
			} else {
				_ = os.WriteFile(tmp, []byte("PNGOK"), 0o644)
			}
			_ = os.Rename(tmp, flip)
		}
	}()
	built, refused := 0, 0
	for i := 0; i < 150; i++ {
		res, err := Build(context.Background(), Options{Path: filepath.Join(app, "index.html"), Runtime: []byte(testRuntime)})
		assertNoLeak(t, res, secret)
		if err == nil {
			built++
		} else {
			refused++
		}
	}
	close(stop)
	<-swapped
	t.Logf("%d builds saw the file, %d the link (refused)", built, refused)
}
