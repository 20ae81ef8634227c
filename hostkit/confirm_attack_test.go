package hostkit_test

// Consent taken by timing (issue 11.4), mounted with real input events
// dispatched at coordinates (Input.dispatchMouseEvent), as a user's mouse
// would deliver them.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// origin is a loopback server counting the requests it gets.
type origin struct {
	srv  *httptest.Server
	hits atomic.Int64
}

// twoOrigins starts two loopback servers (two origins: two ports) that the
// host's net config allows, and returns the option that allows them.
func twoOrigins(t *testing.T) (good, evil *origin, opt hostkit.Option) {
	t.Helper()
	var addrs []netip.AddrPort
	mk := func() *origin {
		o := &origin{}
		o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.hits.Add(1)
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "hello")
		}))
		t.Cleanup(o.srv.Close)
		addrs = append(addrs, netip.MustParseAddrPort(o.srv.Listener.Addr().String()))
		return o
	}
	good, evil = mk(), mk()
	return good, evil, hostkit.WithNet(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}}, netgate.WithAllowedAddrs(addrs...))
}

type point struct{ X, Y float64 }

type rect struct{ Left, Top, Right, Bottom float64 }

func (a rect) overlaps(b rect) bool {
	return a.Left < b.Right && b.Left < a.Right && a.Top < b.Bottom && b.Top < a.Bottom
}

// click presses and releases the left button at (x, y) of the tab's
// viewport, after moving there: a real click, wherever it lands.
func click(t *testing.T, tab context.Context, x, y float64) {
	t.Helper()
	for _, typ := range []input.DispatchMouseEventType{input.DispatchMouseEventTypeMouseMoved, input.DispatchMouseEventTypeMousePressed, input.DispatchMouseEventTypeMouseReleased} {
		p := input.DispatchMouseEventParams{Type: typ, X: x, Y: y}
		if typ != input.DispatchMouseEventTypeMouseMoved {
			p.Button, p.ClickCount = input.MouseButtonLeft, 1
		}
		ctx, cancel := context.WithTimeout(tab, browsertest.Timeout)
		_, err := chromedp.Call(ctx, input.DispatchMouseEvent, p)
		cancel()
		if err != nil {
			t.Fatalf("mouse %s at (%.0f, %.0f): %v", typ, x, y, err)
		}
	}
}

// rectJS is the rectangle of the element el evaluates to.
const rectJS = `(el => { const b = el.getBoundingClientRect(); return {left: b.left, top: b.top, right: b.right, bottom: b.bottom}; })`

// alwaysJS finds what gives "always" in the dialog: the always button when
// there is one, else the box that turns the allow button into it.
const alwaysJS = `[...document.querySelectorAll('#confirm [data-snug-confirm="always"], #confirm [data-snug-confirm-remember]')].find(e => e.getClientRects().length)`

// armedJS holds once the dialog is open and its controls take input (an
// old runner had no arming: open was enough).
const armedJS = `document.getElementById('confirm').open && document.getElementById('confirm').dataset.armed !== 'false'`

// The double-click: the first click lands in the app, which answers it by
// asking the host for a request; the dialog opens under the pointer and the
// second click lands where "always" is. The dialog must take nothing from
// that click: no grant, no request. And its controls are not over the app.
func TestConfirmDoubleClickGrantsNothing(t *testing.T) {
	good, _, netOpt := twoOrigins(t)
	h := startHost(t, netOpt)
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)
	// The app: one tall page of button (its frame grows to it), asking for
	// a request when clicked.
	browsertest.Eval[bool](t, app, fmt.Sprintf(`(() => { const b = document.createElement('button'); b.id = 'lure';
		b.textContent = 'Double-click to play'; b.style.cssText = 'position:absolute;left:0;top:0;width:100%%;height:2000px;font-size:24px';
		b.onclick = () => { window.netResult = snug.net.fetch(%q).then(r => r.status, e => e.code); };
		document.body.style.minHeight = '2000px'; document.body.append(b); return true; })()`, good.srv.URL+"/play"))
	r.WaitFor("the app's frame to grow", `document.querySelector('article.instance iframe').getBoundingClientRect().height > 1000`)
	frame := browsertest.Eval[rect](t, r.Tab, rectJS+`(document.querySelector('article.instance iframe'))`)

	// The runner reports where "always" is the moment the dialog opens.
	browsertest.Eval[bool](t, r.Tab, `(window.opened = new Promise(ok => { const d = document.getElementById('confirm');
		const look = () => { if (!d.open) return requestAnimationFrame(look); window.openedAt = performance.now();
			const b = (`+alwaysJS+`).getBoundingClientRect(); ok({x: b.left + b.width / 2, y: b.top + b.height / 2}); };
		look(); }), true)`)
	click(t, r.Tab, (frame.Left+frame.Right)/2, frame.Top+120)
	at := browsertest.Eval[point](t, r.Tab, `window.opened`)
	click(t, r.Tab, at.X, at.Y)

	type state struct {
		Open    bool    `json:"open"`
		Ignored string  `json:"ignored"`
		Elapsed float64 `json:"elapsed"`
	}
	s := browsertest.Eval[state](t, r.Tab, `({open: document.getElementById('confirm').open,
		ignored: document.getElementById('confirm').dataset.ignored || '0', elapsed: performance.now() - window.openedAt})`)
	if g := h.Net.Grants("probe"); len(g) != 0 {
		t.Fatalf("the second click of a double-click granted %+v", g)
	}
	if !s.Open {
		t.Fatalf("the second click of a double-click answered the dialog")
	}
	if s.Elapsed < 400 && s.Ignored == "0" {
		t.Errorf("a click %.0f ms after the dialog opened was not ignored", s.Elapsed)
	}
	// Its controls are not where a click into the app's frame lands: the
	// window has room beside the frame.
	ctl := browsertest.Eval[rect](t, r.Tab, rectJS+`(document.querySelector('#confirm .controls'))`)
	if ctl.overlaps(frame) {
		t.Errorf("the dialog's controls %+v are over the asking app's frame %+v", ctl, frame)
	}

	r.Answer("deny")
	if got := browsertest.Eval[string](t, app, `window.netResult`); got != "NET_CONFIRM_DENIED" {
		t.Fatalf("the app's request = %q", got)
	}
	if n := good.hits.Load(); n != 0 || len(h.Net.Grants("probe")) != 0 {
		t.Fatalf("%d requests sent, grants %+v", n, h.Net.Grants("probe"))
	}
}

// The swap: the user is about to give "always" to the origin the dialog
// shows; at that moment the app withdraws that request, and its next
// question, for another origin, takes the dialog's place under the pointer.
// The click must not give that origin anything: the question moved (its
// allow button is not under the pointer), it is re-armed, and it says it
// is another request.
func TestConfirmSwapUnderPointerGrantsNothing(t *testing.T) {
	good, evil, netOpt := twoOrigins(t)
	h := startHost(t, netOpt)
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)
	browsertest.Eval[bool](t, app, fmt.Sprintf(`(() => { const ac = new AbortController(); window.abandon = ac;
		window.goodResult = snug.net.fetch(%q, {signal: ac.signal}).then(r => r.status, e => e.code); return true; })()`, good.srv.URL+"/a"))
	r.WaitFor("the question for the first origin", `document.getElementById('confirm').open && document.getElementById('confirm-url').textContent.startsWith(`+jsString(good.srv.URL)+`)`)
	// The next question waits behind it.
	browsertest.Eval[bool](t, app, fmt.Sprintf(`(window.evilResult = snug.net.fetch(%q).then(r => r.status, e => e.code), true)`, evil.srv.URL+"/b"))

	// The user reads the first question and sets out to allow it always.
	r.WaitFor("the dialog armed", armedJS)
	if browsertest.Eval[bool](t, r.Tab, `!!document.querySelector('#confirm [data-snug-confirm-remember]')`) {
		r.Click(`#confirm [data-snug-confirm-remember]`)
		r.WaitFor("the dialog armed again", armedJS+` && !!document.querySelector('#confirm [data-snug-confirm="always"]')`)
	}
	at := browsertest.Eval[point](t, r.Tab, `(b => ({x: b.left + b.width / 2, y: b.top + b.height / 2}))((`+alwaysJS+`).getBoundingClientRect())`)

	// The app withdraws the question at that moment; the click lands as
	// soon as the other question is showing.
	browsertest.Eval[bool](t, r.Tab, `(window.swapped = new Promise(ok => { const d = document.getElementById('confirm'); const id = d.dataset.id;
		const look = () => d.open && d.dataset.id !== id ? ok(true) : requestAnimationFrame(look); look(); }), true)`)
	browsertest.Eval[bool](t, app, `(window.abandon.abort(), true)`)
	browsertest.Eval[bool](t, r.Tab, `window.swapped`)
	click(t, r.Tab, at.X, at.Y)

	if g := h.Net.Grants("probe"); len(g) != 0 {
		t.Fatalf("the click meant for the withdrawn question granted %+v", g)
	}
	shown := r.Confirm()
	if shown.URL != evil.srv.URL+"/b" {
		t.Fatalf("the dialog shows %+v, want the second question still unanswered", shown)
	}
	under := browsertest.Eval[string](t, r.Tab, fmt.Sprintf(`(document.elementFromPoint(%f, %f) || {}).dataset?.snugConfirm || ''`, at.X, at.Y))
	if under == "once" || under == "always" {
		t.Errorf("the second question's allow button is where the first one's was")
	}
	if notice := browsertest.Eval[string](t, r.Tab, `(n => n && !n.hidden ? n.textContent : '')(document.getElementById('confirm-notice'))`); notice == "" {
		t.Errorf("the swap is not shown: no notice that this is another request")
	}

	r.Answer("deny")
	if got := browsertest.Eval[string](t, app, `window.evilResult`); got != "NET_CONFIRM_DENIED" {
		t.Fatalf("the second request = %q", got)
	}
	if got := browsertest.Eval[string](t, app, `window.goodResult`); got != "CANCELLED" {
		t.Fatalf("the withdrawn request = %q", got)
	}
	if evil.hits.Load() != 0 || good.hits.Load() != 0 || len(h.Net.Grants("probe")) != 0 {
		t.Fatalf("requests %d/%d, grants %+v", good.hits.Load(), evil.hits.Load(), h.Net.Grants("probe"))
	}
}

// jsString quotes s for a script.
func jsString(s string) string { return fmt.Sprintf("%q", s) }

// Coming back to the page re-arms the dialog: a click that brings the
// runner's tab to the front and lands on Allow does nothing, because what
// the dialog asks was not seen yet.
func TestConfirmRearmsWhenThePageIsShownAgain(t *testing.T) {
	good, _, netOpt := twoOrigins(t)
	h := startHost(t, netOpt)
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)
	browsertest.Eval[bool](t, app, fmt.Sprintf(`(window.netResult = snug.net.fetch(%q).then(r => r.status, e => e.code), true)`, good.srv.URL+"/a"))
	r.WaitFor("the dialog armed", armedJS)
	allow := browsertest.Eval[point](t, r.Tab, `(b => ({x: b.left + b.width / 2, y: b.top + b.height / 2}))(document.querySelector('#confirm [data-snug-confirm="once"]').getBoundingClientRect())`)

	// Another tab comes to the front, then the runner's again.
	other := devtools(t, r.Tab, "open another tab in front", target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	otherTab, closeOther := chromedp.NewContext(r.Tab, chromedp.WithTargetID(other.TargetID))
	defer closeOther()
	if err := chromedp.Do(otherTab); err != nil {
		t.Fatalf("attach to the other tab: %v", err)
	}
	r.WaitFor("the runner hidden", `document.visibilityState === 'hidden'`)
	devtools(t, r.Tab, "bring the runner back", page.BringToFront, cdp.Empty{})
	r.WaitFor("the runner shown", `document.visibilityState === 'visible'`)
	click(t, r.Tab, allow.X, allow.Y)
	if open := browsertest.Eval[bool](t, r.Tab, `document.getElementById('confirm').open`); !open || good.hits.Load() != 0 {
		t.Fatalf("a click as the page came back answered the dialog (open %v, %d requests)", open, good.hits.Load())
	}
	r.Answer("deny")
	if got := browsertest.Eval[string](t, app, `window.netResult`); got != "NET_CONFIRM_DENIED" {
		t.Fatalf("the request = %q", got)
	}
}
