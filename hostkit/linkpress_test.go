package hostkit_test

// Links pressed and hovered (issue 26 item 8's residual): Chromium
// preconnects to the origin of an HTML <a> or <area> when the pointer is
// pressed on it (its anchor element interaction tracker reads the link's
// href before the pointerdown reaches any script, so no handler can
// refuse it), and sends the name the app chose in a TLS ClientHello. The
// server keeps a link's address out of its live href in the markup it
// serves, and the prelude does so on every script path; app code still
// reads the address it wrote.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// linkKinds are the links of link-presses.html, each going to a host name
// of its own, and the element a pointer presses to reach it.
var linkKinds = []struct{ name, sel string }{
	{"markup", "#k-markup"}, {"child", "#k-child-span"}, {"padded", "#k-padded"},
	{"plain-http", "#k-plain-http"}, {"scheme-relative", "#k-scheme-relative"},
	{"area", "#k-area-img"}, {"template", "#k-template"}, {"markdown", "#k-markdown"},
	{"innerHTML", "#k-innerHTML"}, {"property", "#k-property"}, {"setAttribute", "#k-setAttribute"},
	{"setAttributeNS", "#k-setAttributeNS"}, {"later", "#k-later"}, {"attr-value", "#k-attr-value"},
	{"attr-node", "#k-attr-node"}, {"DOMParser", "#k-DOMParser"}, {"outerHTML", "#k-outerHTML"},
	{"template-script", "#k-template-script"}, {"fragment", "#k-fragment"}, {"hostname", "#k-hostname"},
	{"shadow", "#k-shadow-host"}, {"closed", "#k-closed-host"}, {"declarative", "#k-declarative"},
	{"dsd", "#k-dsd-host"},
}

func linkPressDoc(t *testing.T, port int) []byte {
	t.Helper()
	return []byte(strings.ReplaceAll(string(readTestdata(t, "link-presses.html")), "LINK_PORT", fmt.Sprint(port)))
}

// pointAt scrolls sel into view in frame and returns a point on its text.
func pointAt(t *testing.T, frame context.Context, sel string) (x, y float64) {
	t.Helper()
	p := browsertest.Eval[[]float64](t, frame, fmt.Sprintf(`(() => {
		const e = document.querySelector(%q);
		e.scrollIntoView({block: "center"});
		const r = e.getBoundingClientRect();
		return [r.x + 6, r.y + r.height / 2];
	})()`, sel))
	return p[0], p[1]
}

// hoverLinks moves the pointer onto each link and rests there longer than
// Chromium's hover heuristics wait (200 ms at most), then off it.
func hoverLinks(t *testing.T, frame context.Context) {
	t.Helper()
	for _, k := range linkKinds {
		x, y := pointAt(t, frame, k.sel)
		browsertest.Do(t, frame, "hover "+k.name, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y))
		time.Sleep(300 * time.Millisecond) // the user's dwell, not a wait for a result
		ax, ay := pointAt(t, frame, "#away")
		browsertest.Do(t, frame, "leave "+k.name, chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, ax, ay))
	}
}

// pressLinks presses the primary button on each link and lets it go on a
// place that is no link, so no click follows: only the press is measured.
func pressLinks(t *testing.T, frame context.Context) {
	t.Helper()
	for _, k := range linkKinds {
		x, y := pointAt(t, frame, k.sel)
		browsertest.Do(t, frame, "press "+k.name,
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x, y),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft, chromedp.ClickCount(1)))
		ax, ay := pointAt(t, frame, "#away")
		browsertest.Do(t, frame, "let go of "+k.name,
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, ax, ay, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, ax, ay, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	}
}

// checkLinkReads checks that app code reads each link as it wrote it: its
// href, its attribute by every reader, its parts, its markup read back, the
// styles and selectors that match links.
func checkLinkReads(t *testing.T, frame context.Context, port int) {
	t.Helper()
	L := func(name string) string { return fmt.Sprintf("https://%s-link-canary.test:%d/%s", name, port, name) }
	got := browsertest.Eval[map[string]string](t, frame, `window.reads()`)
	want := map[string]string{
		"href":        L("markup"),
		"attribute":   L("markup"),
		"padded":      fmt.Sprintf("https://padded-link-canary.test:%d/padded", port),
		"relative":    fmt.Sprintf("http://scheme-relative-link-canary.test:%d/", port),
		"attributeNS": L("property"),
		"attrNode":    L("setAttribute"),
		"attributes":  L("innerHTML"),
		"hostname":    "hostname-link-canary.test",
		"origin":      fmt.Sprintf("https://domparser-link-canary.test:%d", port),
		"pathname":    "/area",
		"shadow":      L("shadow"),
		"matches":     "true",
		"contains":    "19",
		"color":       "rgb(0, 0, 238)",
		"toString":    L("later"),
		"markup":      fmt.Sprintf(`<a href="%s">rendered Markdown</a>`, L("markdown")),
		"declarative": "refused: snug: a declarative shadow root made by script (use attachShadow) is not allowed in the sandbox",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("app reads %s = %q, want %q", k, got[k], v)
		}
	}
}

func linkNames(c *canary) []string { return c.namesUnder("-link-canary.test") }

// Hovering over and pressing on every kind of link an app makes (markup,
// an image map's area, Markdown rendered with innerHTML, the DOM's setters,
// parsed fragments, open and closed shadow roots) opens no connection: the
// canary every link's host resolves to sees none. (A declarative shadow
// root made by script is refused: its links are out of the observer's
// reach.)
func TestLinkPressAndHoverConnectNowhere(t *testing.T) {
	can := newCanary(t)
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("link-presses", linkPressDoc(t, can.port()), hostkit.Meta{DisplayName: "Links"})))
	runner := openRunnerRaw(t, h, "link-presses")
	frame := runner.Frame(0)
	browsertest.WaitStill(t, frame, "#k-closed-host")
	browsertest.WaitFor(t, frame, "the declarative root's link", `window.dsdWritten === true`)
	checkLinkReads(t, frame, can.port())
	hoverLinks(t, frame)
	time.Sleep(settle) // an absence window (see settle)
	if n, lines := can.hits(); n != 0 {
		t.Errorf("hovering: the canary got %d connections: %q", n, lines)
	}
	pressLinks(t, frame)
	time.Sleep(settle)
	if n, lines := can.hits(); n != 0 {
		t.Errorf("pressing: the canary got %d connections: %q", n, lines)
	}
	if state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.state`); state != "live" {
		t.Errorf("the app's instance is %q after the presses", state)
	}
}

// The control: the same document served without the host's defences (a
// sandboxed frame with the app's CSP) connects on the press of every link.
func TestLinkPressControlConnects(t *testing.T) {
	can := newCanary(t)
	srv := undefendedServer(t, linkPressDoc(t, can.port()))
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the undefended document", chromedp.Navigate(srv.URL))
	frame := undefendedFrame(t, tab)
	browsertest.WaitFor(t, frame, "the links", `!!document.getElementById("k-shadow-host").shadowRoot && window.dsdWritten === true`)
	hoverLinks(t, frame)
	time.Sleep(settle)
	hovered, _ := can.hits()
	t.Logf("undefended, hovering: %d connections %q", hovered, linkNames(can))
	pressLinks(t, frame)
	var want []string
	for _, k := range linkKinds {
		if k.name != "plain-http" && k.name != "scheme-relative" {
			want = append(want, k.name)
		}
	}
	browsertest.Poll(func() bool { return len(linkNames(can)) >= len(want) })
	got := map[string]bool{}
	for _, n := range linkNames(can) {
		got[n] = true
	}
	for _, n := range want {
		if !got[strings.ToLower(n)] {
			t.Errorf("undefended, the press on %s sent no ClientHello; the test above proves nothing for it", n)
		}
	}
	n, _ := can.hits()
	t.Logf("undefended, pressing: %d connections in all, names %q", n, linkNames(can))
}
