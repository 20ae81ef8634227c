package pack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/testenv"
)

// browserRuntime is a stand-in runtime with just what the app fixture calls.
const browserRuntime = `window.snug={ready:Promise.resolve({capabilities:{}}),db:{get:async()=>null},ask:async()=>({})};`

// TestBrowserRunsBuiltPages loads built pages in headless Chromium: every
// inlined script runs under the injected CSP (so the hashes are right), the
// hostile strings arrive intact instead of ending their element, assets
// load from data URIs, and an inline handler injected at run time is
// refused by the hash-only policy.
func TestBrowserRunsBuiltPages(t *testing.T) {
	exe := testenv.Chromium(t)
	pages := map[string][]byte{}
	for _, name := range []string{"hostile", "app"} {
		res, err := Build(context.Background(), Options{Path: filepath.Join("testdata", name, "in", "index.html"), Runtime: []byte(browserRuntime)})
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		pages["/"+name] = res.HTML
	}
	// A page with an inline handler falls back to 'unsafe-inline': the
	// handler must still run.
	handler, err := Build(context.Background(), Options{Path: "handler.html", Runtime: []byte(browserRuntime), HTML: []byte(
		`<!doctype html><meta name="snug:app-id" content="h"><meta name="snug:display-name" content="H"><button id="b" onclick="window.clicked = (window.clicked || 0) + 1">b</button><script>window.scriptRan = true</script>`)})
	if err != nil {
		t.Fatal(err)
	}
	pages["/handler"] = handler.HTML
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()

	dir := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(exe), chromedp.UserDataDir(dir)}
	for _, f := range testenv.ChromiumFlags {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasVal {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, tcancel := context.WithTimeout(ctx, 60*time.Second)
	defer tcancel()

	const hostile = "</script><!--<script>"
	if _, err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/hostile")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `window.hostileDone === true`)
	out := eval[string](t, ctx, `document.getElementById("out").textContent`)
	done := eval[bool](t, ctx, `typeof a === "string" && a === "\x3C/script>\x3C!--\x3Cscript>" && c.startsWith("\x3C!--")`)
	after := eval[string](t, ctx, `(() => { const e = document.createElement("p"); e.className = "a"; document.body.append(e); return getComputedStyle(e, "::after").content })()`)
	before := eval[string](t, ctx, `(() => { const e = document.createElement("p"); e.className = "b"; document.body.append(e); return getComputedStyle(e, "::before").content })()`)
	pwned := eval[bool](t, ctx, `(() => { const b = document.createElement("button"); b.setAttribute("onclick", "window.pwned = true"); document.body.append(b); b.click(); return window.pwned === true })()`)
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

	if _, err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/app")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, `document.querySelector("h1").textContent.startsWith("COUNT!")`)
	h1 := eval[string](t, ctx, `document.querySelector("h1").textContent`)
	color := eval[string](t, ctx, `getComputedStyle(document.querySelector("h1")).color`)
	legacy := eval[string](t, ctx, `typeof legacyHello === "function" ? legacyHello() : "missing"`)
	waitFor(t, ctx, `document.querySelector("img").complete`)
	imgW := eval[int](t, ctx, `document.querySelector("img").naturalWidth`)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(srv.URL+"/handler")); err != nil {
		t.Fatal(err)
	}
	if !eval[bool](t, ctx, `window.scriptRan === true && (document.getElementById("b").click(), window.clicked === 1)`) {
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

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func waitFor(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", js)
}
