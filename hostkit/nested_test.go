package hostkit_test

// WebRTC from every browsing context an app can create (issue 11 item 2).
// Each context tries a TURN allocation to a loopback canary with its own
// name in USERNAME; the canary answers 401 so a client that runs puts the
// name on the wire. Defended, the canary gets nothing at all.

import (
	"context"
	"fmt"
	"html"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/pack"
)

// markupChild is the script of a srcdoc frame written in the app's own
// markup (the server strips the attribute).
const markupChild = `(async()=>{const pc=new window['RTCPeer'+'Connection']({iceServers:[{urls:'turn:127.0.0.1:TURN_PORT?transport=udp',username:'leak-markup-srcdoc',credential:'x'}]});pc.createDataChannel('x');await pc.setLocalDescription(await pc.createOffer());window.p=pc})()`

func rtcNestedDoc(t *testing.T, port int) []byte {
	t.Helper()
	doc := string(readTestdata(t, "rtc-nested.html"))
	doc = strings.ReplaceAll(doc, "MARKUP_CHILD", html.EscapeString(markupChild))
	return []byte(strings.ReplaceAll(doc, "TURN_PORT", fmt.Sprint(port)))
}

// settle is the one absence window of this package's browser tests: how
// long a test listens for what must not come where no fence exists. A
// fence (a later action whose effect comes after the forbidden one's
// would) is used wherever the system orders things: frames on one relay
// connection, an app's requests on its session. What these tests listen
// for has no such order: the browser's own network traffic (a TURN
// allocation, a TLS ClientHello of a blocked navigation or a hint, a
// beacon or STUN retry) leaves when the browser gets to it, on no path a
// later frame or request shares, and an app sends its load-time frames in
// its own time. The controls show every leak arriving well inside it (they
// wait for each leak itself, not for this).
const settle = 2 * time.Second

// runNested runs every attempt in the app's frame and returns what each
// one did (threw, or ran). After the attempts made at load and by run(),
// and again after runWrite() (a write after load opens a new document,
// removing the frames made before it), it calls settled(write) before
// going on: the defended tests listen for settle, the controls wait until
// what leaks has arrived.
func runNested(t *testing.T, frame context.Context, settled func(write bool)) map[string]string {
	t.Helper()
	browsertest.Eval[map[string]string](t, frame, `window.run()`)
	settled(false)
	browsertest.Eval[map[string]string](t, frame, `window.runWrite()`)
	settled(true)
	return browsertest.Eval[map[string]string](t, frame, `window.R`)
}

// listen is the defended tests' settled: an absence window.
func listen(bool) { time.Sleep(settle) }

// awaitUsernames waits until the canary has a TURN username for every
// name ("leak-" + name), or until browsertest.WaitTimeout has passed; the
// caller then checks which arrived.
func awaitUsernames(can *turnCanary, names []string) {
	browsertest.Poll(func() bool {
		users, _ := can.leaks()
		all := true
		for _, n := range names {
			all = all && slices.Contains(users, "leak-"+n)
		}
		return all
	})
}

// The contexts that leak without the host's defences (the control).
var leakyWithoutDefences = []string{
	"main", "markup-srcdoc", "srcdoc-during-parse", "write-during-parse", "srcdoc-at-load",
	"srcdoc-property", "srcdoc-setAttribute", "srcdoc-setAttributeNS", "srcdoc-attr-node",
	"srcdoc-attr-value-late", "srcdoc-named-item", "srcdoc-innerHTML", "srcdoc-insertAdjacentHTML",
	"srcdoc-outerHTML", "srcdoc-DOMParser", "srcdoc-contextual-fragment", "srcdoc-other-document",
	"srcdoc-shadow-root", "srcdoc-shadow-innerHTML", "srcdoc-execCommand", "srcdoc-xslt",
	"write-after-load", "javascript-url-code", "javascript-url-document", "trusted-types-policy",
}

func TestWebRTCStaysGoneInNestedContexts(t *testing.T) {
	can := newTURNCanary(t)
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("rtc", rtcNestedDoc(t, can.port()), hostkit.Meta{DisplayName: "RTC"})))
	runner := openRunnerRaw(t, h, "rtc")
	results := runNested(t, runner.Frame(0), listen)
	if users, n := can.leaks(); n != 0 {
		t.Errorf("the canary got %d datagrams; TURN usernames %q", n, users)
	}
	for _, name := range []string{"srcdoc-property", "srcdoc-setAttribute", "srcdoc-attr-node", "srcdoc-innerHTML", "srcdoc-DOMParser", "srcdoc-shadow-innerHTML", "write-after-load"} {
		if !strings.Contains(results[name], "snug: ") {
			t.Errorf("%s: %q, want the prelude's refusal (a TypeError naming snug)", name, results[name])
		}
	}
	for _, name := range []string{"srcdoc-xslt", "srcdoc-setHTML", "trusted-types-policy"} {
		if !strings.HasPrefix(results[name], "threw:") {
			t.Errorf("%s: %q, want it refused", name, results[name])
		}
	}
	t.Logf("defended: %v", results)
}

// The same document without the host's defences (the sandbox CSP only, no
// prelude, no Trusted Types): the attempts leak, so the zero above is the
// defences' doing.
func TestWebRTCNestedControlLeaks(t *testing.T) {
	can := newTURNCanary(t)
	srv := undefendedServer(t, rtcNestedDoc(t, can.port()))
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the undefended document", chromedp.Navigate(srv.URL))
	frame := undefendedFrame(t, tab)
	start := time.Now()
	results := runNested(t, frame, func(write bool) {
		if !write {
			awaitUsernames(can, slices.DeleteFunc(slices.Clone(leakyWithoutDefences), func(n string) bool { return n == "write-after-load" }))
			return
		}
		awaitUsernames(can, leakyWithoutDefences)
	})
	users, n := can.leaks()
	for _, name := range leakyWithoutDefences {
		found := false
		for _, u := range users {
			found = found || u == "leak-"+name
		}
		if !found {
			t.Errorf("without the defences %s sent no TURN username (%q); the test above proves nothing for it", name, results[name])
		}
	}
	t.Logf("undefended: %d datagrams in %v, usernames %q", n, time.Since(start).Round(time.Millisecond), users)
}

// A built file (snuggen build output: a hash-only meta CSP) loaded by the
// runner. Its own script, allowed by hash, runs again in a srcdoc child it
// makes, where nothing removed the constructors: the attack a hash-only
// policy does not stop.
func TestWebRTCStaysGoneInABuiltFile(t *testing.T) {
	can := newTURNCanary(t)
	app := fmt.Sprintf(`<!doctype html><html><head><meta charset="utf-8"><title>Built</title>
<meta name="snug:display-name" content="Built"></head><body><p>built</p>
<script>
  if (location.href === "about:srcdoc") {
    const pc = new window["RTCPeer" + "Connection"]({ iceServers: [{ urls: "turn:127.0.0.1:%d?transport=udp", username: "leak-built-child", credential: "x" }] });
    pc.createDataChannel("x");
    pc.createOffer().then((o) => pc.setLocalDescription(o));
    window.p = pc;
  } else {
    try {
      const f = document.createElement("iframe");
      f.srcdoc = "<!doctype html><script>" + document.currentScript.textContent + "<\/script>";
      document.body.append(f);
      window.attempt = "ran";
    } catch (e) {
      window.attempt = "threw:" + e.message;
    }
  }
</script></body></html>`, can.port())
	res, err := pack.Build(context.Background(), pack.Options{Path: "built.html", HTML: []byte(app)})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if !strings.Contains(string(res.HTML), `http-equiv="Content-Security-Policy"`) {
		t.Fatal("the built file carries no CSP meta")
	}
	t.Run("control: served without the defences", func(t *testing.T) {
		before, _ := can.leaks()
		srv := undefendedServer(t, res.HTML)
		tab := browsertest.NewTab(t)
		browsertest.Do(t, tab, "open the undefended built file", chromedp.Navigate(srv.URL))
		browsertest.WaitFor(t, undefendedFrame(t, tab), "the attempt", `window.attempt === "ran"`)
		browsertest.Until(t, "a TURN username from the built file's child without the defences (else the test below proves nothing)", func() bool {
			users, _ := can.leaks()
			return len(users) > len(before)
		})
	})
	// The same app for a second canary, defended this time.
	can2 := newTURNCanary(t)
	res2, err := pack.Build(context.Background(), pack.Options{Path: "built.html", HTML: []byte(strings.ReplaceAll(app, fmt.Sprint(can.port()), fmt.Sprint(can2.port())))})
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("built", res2.HTML, hostkit.Meta{DisplayName: "Built"})))
	runner := browsertest.OpenRunner(t, h.URL(), "built")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the attempt", `window.attempt !== undefined`)
	time.Sleep(settle)
	if got := browsertest.Eval[string](t, frame, `window.attempt`); !strings.Contains(got, "snug: ") {
		t.Errorf("the srcdoc child: %q, want the prelude's refusal", got)
	}
	if users, n := can2.leaks(); n != 0 {
		t.Errorf("the canary got %d datagrams from the built file; usernames %q", n, users)
	}
}

// undefendedFrame attaches to the sandboxed frame undefendedServer's page
// holds.
func undefendedFrame(t *testing.T, tab context.Context) context.Context {
	t.Helper()
	return browsertest.FrameOf(t, tab, "iframe")
}
