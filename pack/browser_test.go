package pack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// The browser test runs in the one Chromium of internal/browsertest, ended here.
func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// browserRuntime is a stand-in runtime with just what the app fixture calls.
const browserRuntime = `window.snug={ready:Promise.resolve({capabilities:{}}),db:{get:async()=>null},ask:async()=>({})};`

// TestBrowserRunsBuiltPages loads built pages in headless Chromium: every
// inlined script runs under the injected CSP (so the hashes are right), the
// hostile strings arrive intact instead of ending their element, assets
// load from data URIs, and an inline handler injected at run time is
// refused by the hash-only policy.
func TestBrowserRunsBuiltPages(t *testing.T) {
	pages := map[string]string{}
	for _, name := range []string{"hostile", "app"} {
		res, err := Build(context.Background(), Options{Path: filepath.Join("testdata", name, "in", "index.html"), Runtime: []byte(browserRuntime)})
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		pages["/"+name] = string(res.HTML)
	}
	// A page with an inline handler falls back to 'unsafe-inline': the
	// handler must still run.
	handler, err := Build(context.Background(), Options{Path: "handler.html", Runtime: []byte(browserRuntime), HTML: []byte(
		`<!doctype html><meta name="snug:app-id" content="h"><meta name="snug:display-name" content="H"><button id="b" onclick="window.clicked = (window.clicked || 0) + 1">b</button><script>window.scriptRan = true</script>`)})
	if err != nil {
		t.Fatal(err)
	}
	pages["/handler"] = string(handler.HTML)
	base := browsertest.ServePages(t, pages)
	ctx := browsertest.NewTab(t)

	const hostile = "</script><!--<script>"
	browsertest.Do(t, ctx, "open /hostile", chromedp.Navigate(base+"/hostile"))
	browsertest.WaitFor(t, ctx, "the hostile page's scripts", `window.hostileDone === true`)
	out := browsertest.Eval[string](t, ctx, `document.getElementById("out").textContent`)
	done := browsertest.Eval[bool](t, ctx, `typeof a === "string" && a === "\x3C/script>\x3C!--\x3Cscript>" && c.startsWith("\x3C!--")`)
	after := browsertest.Eval[string](t, ctx, `(() => { const e = document.createElement("p"); e.className = "a"; document.body.append(e); return getComputedStyle(e, "::after").content })()`)
	before := browsertest.Eval[string](t, ctx, `(() => { const e = document.createElement("p"); e.className = "b"; document.body.append(e); return getComputedStyle(e, "::before").content })()`)
	pwned := browsertest.Eval[bool](t, ctx, `(() => { const b = document.createElement("button"); b.setAttribute("onclick", "window.pwned = true"); document.body.append(b); b.click(); return window.pwned === true })()`)
	if want := hostile + "|<!--<script>|<!--<script>" + hostile + "</script>"; out != want {
		// The regexp's source keeps its escape; what it matches is the same.
		if want2 := hostile + `|\x3C!--\x3Cscript>|<!--<script>` + hostile + "</script>"; out != want2 {
			t.Errorf("module script text = %q, want %q", out, want)
		}
	}
	if !done {
		t.Errorf("the classic script's strings did not survive")
	}
	if after != `"</style><!--<script>"` || before != `"</style><!--<script>"` {
		t.Errorf("CSS content = %s / %s, want the hostile string intact", after, before)
	}
	if pwned {
		t.Errorf("an inline handler added at run time ran: the CSP should allow only the hashed scripts")
	}

	browsertest.Do(t, ctx, "open /app", chromedp.Navigate(base+"/app"))
	browsertest.WaitFor(t, ctx, "the bundled module", `document.querySelector("h1").textContent.startsWith("COUNT!")`)
	h1 := browsertest.Eval[string](t, ctx, `document.querySelector("h1").textContent`)
	color := browsertest.Eval[string](t, ctx, `getComputedStyle(document.querySelector("h1")).color`)
	legacy := browsertest.Eval[string](t, ctx, `typeof legacyHello === "function" ? legacyHello() : "missing"`)
	browsertest.WaitFor(t, ctx, "the image", `document.querySelector("img").complete`)
	imgW := browsertest.Eval[int](t, ctx, `document.querySelector("img").naturalWidth`)
	browsertest.Do(t, ctx, "open /handler", chromedp.Navigate(base+"/handler"))
	if !browsertest.Eval[bool](t, ctx, `window.scriptRan === true && (document.getElementById("b").click(), window.clicked === 1)`) {
		t.Errorf("with an inline handler the page's script and handler should both run")
	}
	if !strings.HasPrefix(h1, "COUNT!: ") {
		t.Errorf("h1 = %q: the bundled module did not run", h1)
	}
	if color != "rgb(18, 52, 86)" {
		t.Errorf("h1 color = %q: the inlined styles did not apply", color)
	}
	if legacy != "hello from legacy" {
		t.Errorf("legacy global = %q: the deferred classic script did not run as a classic script", legacy)
	}
	if imgW == 0 {
		t.Errorf("img naturalWidth = %d: the inlined SVG did not load", imgW)
	}
}
