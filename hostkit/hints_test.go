package hostkit_test

// Resource hints from every path an app has (issue 11 item 5): Chromium
// opens a connection for <link rel=preconnect> whatever the CSP says, and
// sends a TLS ClientHello whose server name the app chose. The server
// strips hints from the markup it serves (parsed as the browser parses
// it), and the prelude refuses them from script.

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

func hintsDoc(t *testing.T, port int) []byte {
	t.Helper()
	return []byte(strings.ReplaceAll(string(readTestdata(t, "hints.html")), "CANARY_PORT", fmt.Sprint(port)))
}

// The paths that connect without the host's defences (the control).
var hintPathsThatConnect = []string{
	"markup", "svg-differential", "mathml", "template-clone", "write-during-parse", "write-split-during-parse",
	"rel-preconnect", "rellist-preconnect", "rel-after-insert", "rel-mixed-case", "rellist-value",
	"rellist-toggle", "rellist-replace", "rellist-assign", "rellist-prototype", "setAttribute",
	"setAttribute-upper", "setAttributeNS", "setAttribute-after-insert",
	"attr-node", "attr-value-late", "attr-nodeValue", "attr-textContent", "named-item", "innerHTML",
	"insertAdjacentHTML", "outerHTML", "DOMParser", "xml-prefixed", "contextual-fragment",
	"shadow-innerHTML", "xhtml-namespace", "setHTML", "xslt", "xml-entity", "write-after-load",
}

// awaitHints waits until the canary has seen a ClientHello for each path
// of names, or until browsertest.WaitTimeout has passed; the caller then
// checks which arrived.
func awaitHints(c *canary, names []string) {
	browsertest.Poll(func() bool {
		got := map[string]bool{}
		for _, n := range hintNames(c) {
			got[strings.ToLower(n)] = true
		}
		all := true
		for _, n := range names {
			all = all && got[strings.ToLower(n)]
		}
		return all
	})
}

func hintNames(c *canary) []string { return c.namesUnder("-hint-canary.test") }

func TestScriptInsertedHintsConnectNowhere(t *testing.T) {
	can := newCanary(t)
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("hints", hintsDoc(t, can.port()), hostkit.Meta{DisplayName: "Hints"})))
	runner := openRunnerRaw(t, h, "hints")
	frame := runner.Frame(0)
	browsertest.Eval[map[string]string](t, frame, `window.run()`)
	time.Sleep(settle) // an absence window (see settle)
	results := browsertest.Eval[map[string]string](t, frame, `window.runWrite()`)
	time.Sleep(settle)
	if n, lines := can.hits(); n != 0 {
		t.Errorf("the canary got %d connections: %q", n, lines)
	}
	for name, got := range results {
		// A template's links were stripped by the server; a rel set from
		// an object is converted once (the same string is checked and set);
		// the other rels and rules are allowed and connect nowhere.
		if strings.HasPrefix(got, "ran") && name != "template-clone" && name != "setAttribute-object" &&
			!strings.HasPrefix(name, "other-") && name != "speculation-rules" && name != "attributionsrc" && name != "meta-link" {
			t.Errorf("%s: %q, want it refused", name, got)
		}
	}
	t.Logf("defended: %v", results)
}

func TestHintsControlConnects(t *testing.T) {
	can := newCanary(t)
	srv := undefendedServer(t, hintsDoc(t, can.port()))
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the undefended document", chromedp.Navigate(srv.URL))
	frame := undefendedFrame(t, tab)
	// Wait for each connection itself: before the write after load (which
	// removes what run() made) for the others, after it for its own.
	browsertest.Eval[map[string]string](t, frame, `window.run()`)
	awaitHints(can, slices.DeleteFunc(slices.Clone(hintPathsThatConnect), func(p string) bool { return p == "write-after-load" }))
	results := browsertest.Eval[map[string]string](t, frame, `window.runWrite()`)
	awaitHints(can, hintPathsThatConnect)
	got := map[string]bool{}
	for _, n := range hintNames(can) {
		got[strings.ToLower(n)] = true
	}
	for _, p := range hintPathsThatConnect {
		if !got[strings.ToLower(p)] {
			t.Errorf("without the defences %s sent no ClientHello (%q); the test above proves nothing for it", p, results[p])
		}
	}
	t.Logf("undefended: %d connections, %d bytes, names %q", can.conns.Load(), can.bytes.Load(), hintNames(can))
}

// What apps as models write keeps working under the prelude: markup with
// buttons and styles, text that mentions the refused words, stylesheet
// links made with the DOM, class names and anchor rels that look like
// hints, innerHTML read back and written again.
func TestPreludeLeavesOrdinaryAppsAlone(t *testing.T) {
	h := startHost(t)
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	got := browsertest.Eval[map[string]string](t, frame, `(() => {
		const R = {};
		const t = (name, f) => { try { R[name] = String(f()); } catch (e) { R[name] = "threw:" + e.message; } };
		const d = document.createElement("div");
		document.body.append(d);
		t("markup", () => { d.innerHTML = '<button onclick="window.clicked = 1">Go</button><style>a:link { color: red } .x { }</style><p>set srcdoc on an iframe; &lt;link rel=preconnect&gt;; <linked>x</linked></p>'; return d.querySelectorAll("button, p, style, linked").length; });
		t("read back", () => { document.head.innerHTML += "<style>.y { color: blue }</style>"; return document.head.querySelectorAll("style").length > 0; });
		t("stylesheet", () => { const l = document.createElement("link"); l.rel = "stylesheet"; l.href = "data:text/css,"; document.head.append(l); l.relList.add("alternate"); l.setAttribute("rel", "stylesheet"); return l.rel; });
		t("class", () => { d.classList.add("preconnect", "prefetch"); return d.className; });
		t("anchor", () => { const a = document.createElement("a"); a.rel = "noopener noreferrer"; a.setAttribute("rel", "nofollow"); return a.rel; });
		t("template", () => { const tp = document.createElement("template"); tp.innerHTML = "<li>one</li><li>two</li>"; d.append(tp.content.cloneNode(true)); return d.querySelectorAll("li").length; });
		t("insertAdjacentHTML", () => { d.insertAdjacentHTML("beforeend", "<em>ok</em>"); return d.querySelector("em").textContent; });
		t("DOMParser", () => new DOMParser().parseFromString("<p>parsed</p>", "text/html").body.textContent);
		return R;
	})()`)
	want := map[string]string{
		"markup": "4", "read back": "true", "stylesheet": "stylesheet", "class": "preconnect prefetch",
		"anchor": "nofollow", "template": "2", "insertAdjacentHTML": "ok", "DOMParser": "parsed",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}
