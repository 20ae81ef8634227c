package hostkit_test

// Sandbox escapes, each attempted from inside an app's frame in real
// Chromium, each asserted to fail, and how: a canary server on loopback that
// counts every TCP connection (every *-canary.test name resolves to it),
// a UDP listener for STUN, and the host's own verdicts.

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// stunListener counts UDP datagrams on loopback.
func stunListener(t *testing.T) (port int, datagrams *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().(*net.UDPAddr).Port, &n
}

func escapeDoc(t *testing.T, name string, canaryPort, stunPort int) []byte {
	doc := string(readTestdata(t, name))
	doc = strings.ReplaceAll(doc, "CANARY_PORT", strconv.Itoa(canaryPort))
	doc = strings.ReplaceAll(doc, "STUN_PORT", strconv.Itoa(stunPort))
	return []byte(doc)
}

func TestSandboxEscapesFail(t *testing.T) {
	can := newCanary(t)
	stunPort, datagrams := stunListener(t)
	doc := escapeDoc(t, "escape.html", can.port(), stunPort)
	h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("escape", doc, hostkit.Meta{DisplayName: "Escape"})))
	runner := openRunnerRaw(t, h, "escape")
	before := len(browsertest.PageTargets(t, runner.Tab))
	frame := runner.Frame(0)
	results := browsertest.Eval[map[string]string](t, frame, `window.escapeRun`)
	// Give anything that left late (a ping, a beacon, STUN retries) time to
	// land: an absence window (see settle).
	time.Sleep(settle)

	for name, want := range map[string]string{
		"fetch":              "blocked:TypeError",
		"fetchNoCors":        "blocked:TypeError",
		"xhr":                "blocked:",
		"websocket":          "blocked:",
		"eventsource":        "blocked:",
		"importUrl":          "blocked:TypeError",
		"importData":         "blocked:TypeError",
		"workerBlob":         "blocked:",
		"workerUrl":          "blocked:",
		"parentDocument":     "blocked:SecurityError",
		"topDocument":        "blocked:SecurityError",
		"localStorage":       "blocked:SecurityError",
		"sessionStorage":     "blocked:SecurityError",
		"indexedDB":          "blocked:",
		"cookie":             "blocked:SecurityError",
		"windowOpen":         "ok:null",
		"scriptElement":      "blocked:",
		"imageElement":       "blocked:",
		"rtcType":            "ok:undefined/undefined/undefined",
		"rtcConnect":         "blocked:ReferenceError",
		"rtcFromNestedFrame": "blocked:TypeError:snug: a nested frame",
	} {
		if got := results[name]; !strings.HasPrefix(got, want) {
			t.Errorf("%s = %q, want %s…", name, got, want)
		}
	}
	// Attempts that fail silently: the proof is that nothing arrived.
	for _, name := range []string{"beacon", "topNavigation", "formSubmit", "ping"} {
		if results[name] == "" || results[name] == "pending" {
			t.Errorf("%s did not run: %q", name, results[name])
		}
	}
	if n, paths := can.hits(); n != 0 {
		t.Errorf("the canary got %d connections: %q", n, paths)
	}
	if n := datagrams.Load(); n != 0 {
		t.Errorf("the STUN listener got %d datagrams", n)
	}
	if n := len(browsertest.PageTargets(t, runner.Tab)); n != before {
		t.Errorf("a window opened: %d pages, had %d", n, before)
	}
	if u := browsertest.Eval[string](t, runner.Tab, `location.href`); !strings.HasPrefix(u, h.URL()) {
		t.Errorf("the runner navigated to %s", u)
	}
	t.Logf("escape results: %v", results)
}

// The two channels CSP does not close, proven open without the host's
// defences, so the test above can fail: the same document served with the
// sandbox CSP but without the prelude and the hint-link strip leaks both.
func TestEscapeControlWithoutDefencesLeaks(t *testing.T) {
	can := newCanary(t)
	stunPort, datagrams := stunListener(t)
	doc := escapeDoc(t, "escape.html", can.port(), stunPort)
	srv := undefendedServer(t, doc)
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the undefended document", chromedp.Navigate(srv.URL))
	// Waits for both leaks themselves (the deadline only bounds a hang).
	browsertest.Poll(func() bool { n, _ := can.hits(); return n > 0 && datagrams.Load() > 0 })
	if n := datagrams.Load(); n == 0 {
		t.Error("without the prelude no STUN datagram left; the WebRTC test proves nothing")
	}
	n, paths := can.hits()
	if n == 0 {
		t.Error("without the strip no preconnect reached the canary; the strip test proves nothing")
	}
	t.Logf("undefended: %d datagrams, canary lines %q", datagrams.Load(), paths)
}

// A frame navigation that CSP blocks sends no request: a self-navigation
// (the runner's frame-src). A nested <iframe src> and a meta refresh in the
// markup are removed by the server, and script cannot make a nested frame.
// Chromium still connects to the target of a blocked navigation (and sends
// a TLS ClientHello naming it for an https URL): a residual channel the
// host cannot close, measured in docs/security.md. The app frame that
// navigated itself is dead.
func TestFrameNavigationsSendNothing(t *testing.T) {
	// The nested frames and the meta refresh load side by side, a canary
	// each, and share one absence window (see settle).
	nestedCan, refreshCan := newCanary(t), newCanary(t)
	h := startHost(t, hostkit.WithApps(
		hostkit.BuiltApp("nested", escapeDoc(t, "nested.html", nestedCan.port(), 0), hostkit.Meta{DisplayName: "Nested"}),
		hostkit.BuiltApp("refresh", escapeDoc(t, "refresh.html", refreshCan.port(), 0), hostkit.Meta{DisplayName: "Refresh"})))
	runner := browsertest.OpenRunnerUntil(t, h.URL(), "both frames to load",
		`[...document.querySelectorAll('article.instance')].filter(a => a.dataset.state === 'live').length === 2`, "nested", "refresh")
	time.Sleep(settle)
	t.Run("nested frames", func(t *testing.T) {
		// The server removes the <iframe> from the markup and the prelude
		// refuses the one made by script: nothing connects.
		if n, paths := nestedCan.hits(); n != 0 {
			t.Errorf("nested frames made %d connections: %q", n, paths)
		}
	})
	t.Run("meta refresh", func(t *testing.T) {
		// The server removes the refresh from the markup: the frame stays
		// where it is and connects nowhere.
		if n, paths := refreshCan.hits(); n != 0 {
			t.Errorf("the refresh made %d connections: %q", n, paths)
		}
		if state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance[data-app="refresh"]').dataset.state`); state != "live" {
			t.Errorf("the instance is %s: the refresh navigated it", state)
		}
	})
	t.Run("self navigation", func(t *testing.T) {
		can := newCanary(t)
		h := startHost(t, hostkit.WithDataDir(t.TempDir()))
		// The second instance stays live: its requests fence the first's.
		runner := browsertest.OpenRunner(t, h.URL(), "probe", "probe")
		ss := runner.Slots()
		frame, live := runner.SlotFrame(ss[0]), runner.SlotFrame(ss[1])
		browsertest.Eval[bool](t, frame, fmt.Sprintf(`(() => { location.href = "http://nav-canary.test:%d/self"; return true; })()`, can.port()))
		runner.WaitFor("the instance to die", fmt.Sprintf(`document.querySelector('article.instance[data-slot=%q]').dataset.state === 'dead'`, ss[0]))
		died := time.Now()
		// The host marked the instance dead: it sends it nothing more. The
		// theme goes to every live instance at once, as the relay reads the
		// page's message; the live instance's get, read after it, is
		// answered after anything sent then, and its entry comes last.
		outTo := func(slot string) int {
			return browsertest.Eval[int](t, runner.Tab, fmt.Sprintf(`document.querySelectorAll('#frames tbody tr[data-dir="out"][data-slot=%q]').length`, slot))
		}
		base := runner.CountsWhen("the instances' handshakes in", func(c browsertest.Counts) bool { return c.InByType["snug:app-announce"] >= 2 })
		deadBefore := outTo(ss[0])
		theme := browsertest.Eval[string](t, runner.Tab, `document.documentElement.dataset.theme`)
		runner.Click("#theme-toggle")
		runner.WaitFor("the theme toggled", fmt.Sprintf(`document.documentElement.dataset.theme !== %q`, theme))
		browsertest.Eval[string](t, live, `snug.db.get("fence").then(() => "", e => e.code)`)
		runner.CountsWhen("the live instance's theme event out and its get in", func(c browsertest.Counts) bool {
			return c.OutByType["snug:host-event"] >= base.OutByType["snug:host-event"]+1 && c.InByType["snug:db-request"] >= base.InByType["snug:db-request"]+1
		})
		if out := outTo(ss[0]) - deadBefore; out != 0 {
			t.Errorf("the host sent %d frames to a dead instance", out)
		}
		// An absence window (see settle) from the death, run out here.
		time.Sleep(time.Until(died.Add(settle)))
		if n := can.requests.Load(); n != 0 {
			_, paths := can.hits()
			t.Errorf("the self-navigation sent %d requests: %q", n, paths)
		}
		t.Logf("self navigation: %d bare connections (residual), 0 requests", can.conns.Load())
	})
}

type forgeResult struct {
	Answers []map[string]any `json:"answers"`
}

// Frames that claim another instance, or another app's requestId, are
// rejected by the host; frames from a window that is not an app frame are
// ignored by the page and never reach the host.
func TestForgedIdentityIsRejected(t *testing.T) {
	h := startHost(t, hostkit.WithDataDir(t.TempDir()), hostkit.WithAgent(offline.New(offline.Options{ChunkSize: 4, Delay: 20 * time.Millisecond})))
	runner := browsertest.OpenRunner(t, h.URL(), "probe", "other")
	ss := runner.Slots()
	a, b := runner.SlotFrame(ss[0]), runner.SlotFrame(ss[1])
	aInstance := browsertest.Eval[string](t, a, `snug.ready.then(i => i.instanceId)`)
	bInstance := browsertest.Eval[string](t, b, `snug.ready.then(i => i.instanceId)`)

	// B has a slow ask in flight; A names its requestId in a cancel of its
	// own. The host looks the id up in A's instance only: B's ask finishes.
	browsertest.Eval[bool](t, b, `(window.slow = snug.ask("slow", {}).then(() => "done", e => e.code), true)`)
	bRequest := browsertest.Eval[string](t, runner.Tab, `new Promise(r => { const f = () => { const row = [...document.querySelectorAll('#frames tbody tr')].find(tr =>
		tr.dataset.slot === '`+ss[1]+`' && tr.dataset.type === 'snug:app-message'); row ? r(row.querySelector('.rid').textContent) : setTimeout(f, 20); }; f(); })`)
	browsertest.Eval[bool](t, a, fmt.Sprintf(`(parent.postMessage({v: 1, type: "snug:app-cancel", requestId: %q, instanceId: %q}, "*"), true)`, bRequest, aInstance))
	if got := browsertest.Eval[string](t, b, `window.slow`); got != "done" {
		t.Fatalf("B's ask ended %q after A cancelled its requestId; want done", got)
	}

	// B starts a slow request it keeps in flight: a kvSet we can check later,
	// and an ask whose requestId A will try to cancel.
	browsertest.Eval[bool](t, b, `(async () => { await snug.db.set("owner", "b"); return true; })()`)

	collect := `(async (frames) => {
		const answers = [];
		const on = (e) => { if (e.source === parent && e.data && e.data.requestId && e.data.requestId.startsWith("forged")) answers.push(e.data); };
		window.addEventListener("message", on);
		for (const f of frames) parent.postMessage(f, "*");
		// A fence: A's own request after them. The host answers A's frames
		// in the order they came, so once this answer is in, theirs are.
		await snug.db.get("fence").catch(() => {});
		window.removeEventListener("message", on);
		return {answers};
	})`
	forged := fmt.Sprintf(`%s([
		{v: 1, type: "snug:db-request", requestId: "forged-db", instanceId: %q, op: "kvSet", key: "owner", value: "a"},
		{v: 1, type: "snug:app-message", requestId: "forged-ask", instanceId: %q, appId: "test.other", action: "x"},
		{v: 1, type: "snug:app-cancel", requestId: "r1", instanceId: %q},
	])`, collect, bInstance, bInstance, bInstance)
	r := browsertest.Eval[forgeResult](t, a, forged)
	byID := map[string]map[string]any{}
	for _, f := range r.Answers {
		byID[f["requestId"].(string)] = f
	}
	for _, id := range []string{"forged-db", "forged-ask"} {
		f := byID[id]
		if f == nil || f["ok"] != false {
			t.Fatalf("%s answered %v, want ok:false", id, f)
		}
		code := f["error"].(map[string]any)["code"]
		if code != "MALFORMED" {
			t.Errorf("%s code %v, want MALFORMED", id, code)
		}
	}
	if got := browsertest.Eval[string](t, b, `snug.db.get("owner")`); got != "b" {
		t.Fatalf("B's data was changed by A's forged frame: owner = %q", got)
	}
	// The entries of A's forged frames are in, and drawn with the counts,
	// once the entry of B's get, relayed after them, is (the test's fourth
	// db-request): entries come in the order the page relayed the frames.
	base := runner.CountsWhen("B's get in", func(c browsertest.Counts) bool { return c.InByType["snug:db-request"] >= 4 })
	rejects := browsertest.Eval[int](t, runner.Tab, `[...document.querySelectorAll('#frames tbody tr')].filter(tr => tr.dataset.verdict === 'reject' && tr.dataset.slot === '`+ss[0]+`').length`)
	if rejects < 3 {
		t.Errorf("inspector shows %d rejected frames from A, want 3", rejects)
	}

	// A window that is not an app frame: the runner itself and an extra
	// frame in it post a well-formed announce. The page ignores both.
	before := base.InByType["snug:app-announce"]
	const announce = `({v: 1, type: "snug:app-announce", appId: "evil", displayName: "Evil"})`
	browsertest.Eval[bool](t, runner.Tab, `(() => { window.postMessage(`+announce+`, "*"); document.body.append(Object.assign(document.createElement("iframe"), {id: "stranger"})); return true; })()`)
	nodes, err := chromedp.Run(runner.Tab, chromedp.Nodes(chromedp.CSS("#stranger")))
	if err != nil || len(nodes) == 0 {
		t.Fatalf("find the extra frame: %v", err)
	}
	world, err := chromedp.Call(runner.Tab, page.CreateIsolatedWorld, page.CreateIsolatedWorldParams{FrameID: nodes[0].FrameID})
	if err != nil {
		t.Fatalf("a script context in the extra frame: %v", err)
	}
	if _, err := chromedp.Call(runner.Tab, cdpruntime.Evaluate, cdpruntime.EvaluateParams{
		Expression: `parent.postMessage(` + announce + `, "*")`,
		ContextID:  world.ExecutionContextID,
	}); err != nil {
		t.Fatalf("post from the extra frame: %v", err)
	}
	// A fence: an announce from the app's own frame, posted after both. The
	// page handles the window's messages in the order they were posted (the
	// two above were queued before this call), relays in that order, and the
	// host's entries come back in it: once this one is counted, any of
	// theirs would be.
	browsertest.Eval[bool](t, a, `(snug.announce({displayName: "Fence"}), true)`)
	after := runner.CountsWhen("the app's own announce in", func(c browsertest.Counts) bool { return c.InByType["snug:app-announce"] >= before+1 })
	if n := after.InByType["snug:app-announce"]; n != before+1 {
		t.Errorf("announces from non-app windows reached the host: %d → %d, want only the app's own", before, n)
	}
}

// undefendedServer serves doc in a sandboxed frame with the sandbox CSP
// from the rules, but without what the host adds: no prelude, no strip, no
// Trusted Types (frame.HostCSP).
func undefendedServer(t *testing.T, doc []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var origin string
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><iframe sandbox="allow-scripts" src="/app"></iframe>`)
	})
	mux.HandleFunc("/app", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", frame.CSPString(frame.SandboxCSP)+"; sandbox allow-scripts; frame-ancestors "+origin)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(doc)
	})
	srv := httptest.NewServer(mux)
	origin = srv.URL
	t.Cleanup(srv.Close)
	return srv
}

// openRunnerRaw opens the runner with app mounted and waits for its frame to
// load (an app without the runtime makes no handshake).
func openRunnerRaw(t *testing.T, h *hostkit.Host, app string) *browsertest.Runner {
	t.Helper()
	return browsertest.OpenRunnerUntil(t, h.URL(), "the frame to load", `document.querySelector('article.instance')?.dataset.state === 'live'`, app)
}
