package hostkit_test

// Resource hints from every path an app has (issue 11 item 5): Chromium
// opens a connection for <link rel=preconnect> whatever the CSP says, and
// sends a TLS ClientHello whose server name the app chose. The server
// strips hints from the markup it serves (parsed as the browser parses
// it), and the prelude refuses them from script.

import (
	"fmt"
	"sort"
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

func hintNames(c *canary) []string {
	var out []string
	for n := range c.sniNames() {
		out = append(out, strings.TrimSuffix(n, "-hint-canary.test"))
	}
	sort.Strings(out)
	return out
}

func TestScriptInsertedHintsConnectNowhere(t *testing.T) {
	can := newCanary(t)
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("hints", hintsDoc(t, can.port()), hostkit.Meta{DisplayName: "Hints"})))
	runner := openRunnerRaw(t, h, "hints")
	frame := runner.Frame(0)
	browsertest.Eval[map[string]string](t, frame, `window.run()`)
	time.Sleep(settle)
	results := browsertest.Eval[map[string]string](t, frame, `window.runWrite()`)
	time.Sleep(settle)
	if n, lines := can.hits(); n != 0 {
		t.Errorf("the canary got %d connections: %q", n, lines)
	}
	for name, got := range results {
		// A template's links were stripped by the server; a rel set from
		// an object is converted once (the same string is checked and set).
		if strings.HasPrefix(got, "ran") && name != "template-clone" && name != "setAttribute-object" {
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
	browsertest.Eval[map[string]string](t, frame, `window.run()`)
	time.Sleep(settle)
	results := browsertest.Eval[map[string]string](t, frame, `window.runWrite()`)
	time.Sleep(settle)
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
