package hostkit_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// The browser tests share one Chromium (internal/browsertest), ended here.
func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// startHost starts a host with the probe apps and opts, serving until the
// test ends.
func startHost(t *testing.T, opts ...hostkit.Option) *hostkit.Host {
	t.Helper()
	base := []hostkit.Option{
		hostkit.WithApps(
			hostkit.RawApp("probe", readTestdata(t, "probe.html")),
			hostkit.RawApp("other", readTestdata(t, "other.html")),
		),
	}
	h, err := hostkit.New(append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	return h
}

// The handshake: the list shows the app's icon, colour and name; the
// instance shows the instanceId the host minted, which is the one the app
// holds.
func TestRunnerHandshakeAndMetadata(t *testing.T) {
	h := startHost(t, hostkit.WithDataDir(t.TempDir()))
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	type item struct{ App, Icon, Name, Background string }
	list := browsertest.Eval[[]item](t, runner.Tab, `[...document.querySelectorAll('#app-list .app-button')].map(b => ({
		app: b.dataset.app, icon: b.querySelector('.icon').textContent,
		name: b.querySelector('.app-name').textContent, background: b.querySelector('.icon').style.backgroundColor}))`)
	if len(list) != 2 || list[0].App != "probe" || list[0].Icon != "🧪" || list[0].Name != "Probe" || list[0].Background != "rgb(126, 87, 194)" {
		t.Fatalf("app list = %+v", list)
	}
	slot := runner.Slots()[0]
	shown := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.instanceId`)
	meta := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance .meta').textContent`)
	frame := runner.SlotFrame(slot)
	held := browsertest.Eval[string](t, frame, `snug.ready.then(i => i.instanceId)`)
	if shown == "" || shown != held {
		t.Fatalf("runner shows instance %q, the app holds %q", shown, held)
	}
	if !strings.Contains(meta, "v1") {
		t.Errorf("instance header %q does not show the protocol version", meta)
	}
	caps := browsertest.Eval[map[string]bool](t, frame, `snug.ready.then(i => i.capabilities)`)
	if !caps["db"] || !caps["streaming"] || !caps["openUrl"] {
		t.Errorf("capabilities = %v", caps)
	}
	c := runner.CountsWhen("the announce in and host-ready out", func(c browsertest.Counts) bool {
		return c.InByType["snug:app-announce"] >= 1 && c.OutByType["snug:host-ready"] >= 1
	})
	if c.InByType["snug:app-announce"] != 1 || c.OutByType["snug:host-ready"] < 1 {
		t.Errorf("inspector counts = %+v", c)
	}

	// What the app announces shows on its own header, marked as its claim;
	// the list keeps the installed app's metadata.
	browsertest.Eval[bool](t, frame, `(snug.announce({appId: "test.probe", displayName: "Renamed", iconEmoji: "🚀", iconColor: "#ff7043"}), true)`)
	runner.WaitFor("the claimed name", `document.querySelector('article.instance .claimed').textContent.includes("Renamed")`)
	if name := browsertest.Eval[string](t, runner.Tab, `document.querySelector('#app-list .app-button[data-app="probe"] .app-name').textContent`); name != "Probe" {
		t.Errorf("list name after announce = %q", name)
	}
	if icon := browsertest.Eval[string](t, runner.Tab, `document.querySelector('#app-list .app-button[data-app="probe"] .icon').textContent`); icon != "🧪" {
		t.Errorf("icon after announce = %q", icon)
	}
}

type askResult struct {
	Data       map[string]any `json:"data"`
	Texts      []string       `json:"texts"`
	Cumulative bool           `json:"cumulative"`
	Code       string         `json:"code"`
}

const askJS = `(async () => {
	const texts = [];
	try {
		const data = await snug.ask(%q, %s, {onText: t => { texts.push(t); window.streamed = texts.length; }%s});
		return {data, texts, cumulative: texts.every((t, i) => i === 0 || t.startsWith(texts[i-1]))};
	} catch (e) { return {code: e.code, texts}; }
})()`

// stepper lets a streaming agent go one step at a time, so that what a test
// asserts about streaming does not depend on how fast the page keeps up (a
// page that keeps up gets every step; the relay coalesces steps only for a
// page that is behind): the agent announces each step it made (made) and
// waits until the test lets the next one go.
type stepper struct {
	emitted chan int
	next    chan struct{}
	done    chan struct{}
}

func newStepper() *stepper {
	return &stepper{emitted: make(chan int), next: make(chan struct{}), done: make(chan struct{})}
}

// made is called by the agent after its step n; it returns when the test
// lets the next step go or when ctx ends.
func (s *stepper) made(ctx context.Context, n int) {
	select {
	case s.emitted <- n:
	case <-ctx.Done():
		return
	}
	select {
	case <-s.next:
	case <-ctx.Done():
	}
}

// run drives the agent until it is done (closes s.done): after step n has
// reached the app in frame (window.streamed, which askJS sets, is n), it
// lets the next step go if more(n). It returns the number of steps made.
func (s *stepper) run(t *testing.T, frame context.Context, more func(n int) bool) int {
	t.Helper()
	steps := 0
	for {
		select {
		case n := <-s.emitted:
			steps = n
			browsertest.WaitFor(t, frame, fmt.Sprintf("step %d to reach the app", n), fmt.Sprintf(`window.streamed >= %d`, n))
			if more(n) {
				s.next <- struct{}{}
			}
		case <-s.done:
			return steps
		case <-time.After(browsertest.WaitTimeout):
			t.Fatalf("the agent neither made a step nor finished after step %d", steps)
		}
	}
}

// pacedAgent is an agent streaming one step at a time through a stepper;
// backend gives the agent for a request.
type pacedAgent struct {
	backend func(req agent.Completion) agent.Backend
	*stepper
}

func (p *pacedAgent) Complete(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
	defer close(p.done)
	n := 0
	return p.backend(req).Complete(ctx, req, func(s string) {
		onText(s)
		n++
		p.made(ctx, n)
	})
}

// startAsk starts askJS in frame; the answer lands in window.answer.
func startAsk(t *testing.T, frame context.Context, action, payload, opts string) {
	t.Helper()
	browsertest.Eval[bool](t, frame, `(window.asked = `+fmt.Sprintf(askJS, action, payload, opts)+`.then(r => (window.answer = r)), true)`)
}

func answer(t *testing.T, frame context.Context) askResult {
	t.Helper()
	browsertest.WaitFor(t, frame, "the answer", `window.answer !== undefined`)
	return browsertest.Eval[askResult](t, frame, `window.answer`)
}

// TestAskStreamsWithMockAgent: the offline agent's streaming reaches the
// app as cumulative steps, each one, then the terminal answer; the
// inspector counts one terminal app-response after the streaming ones.
func TestAskStreamsWithMockAgent(t *testing.T) {
	// The offline agent's answer in four steps: each grows the text by a
	// quarter, more than the bridge's coalescing holds back (a sixteenth,
	// docs/decisions.md), so every step is one the app must see.
	paced := &pacedAgent{func(req agent.Completion) agent.Backend {
		full, err := offline.Answer(req)
		if err != nil {
			t.Error(err)
		}
		return offline.New(offline.Options{ChunkSize: (len(full) + 3) / 4})
	}, newStepper()}
	h := startHost(t, hostkit.WithAgent(paced))
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	startAsk(t, frame, "summarize", `{text: "a long text"}`, `, schema: {type: "object", required: ["summary"], properties: {summary: {type: "string"}}}`)
	steps := paced.run(t, frame, func(int) bool { return true })
	r := answer(t, frame)
	if r.Code != "" || r.Data["summary"] == nil {
		t.Fatalf("ask = %+v", r)
	}
	if steps != 4 || len(r.Texts) != steps || !r.Cumulative {
		t.Fatalf("streaming texts = %q (cumulative %v): want each of the agent's %d cumulative steps", r.Texts, r.Cumulative, steps)
	}
	// The terminal is counted when the page delivers it, the host's entry
	// of it (an app-response out) when that entry, the next relay message,
	// arrives: a draw may fall between the two. An app-response counted out
	// beyond the streaming ones delivered is the terminal's entry.
	c := runner.CountsWhen("the terminal delivered and the host's entry of it counted", func(c browsertest.Counts) bool {
		return c.Terminal >= 1 && c.OutByType["snug:app-response"] > c.Streaming
	})
	if c.Streaming != steps || c.OutByType["snug:app-response"] != c.Streaming+1 {
		t.Errorf("inspector: %d streaming, %d app-response frames out; want %d and one terminal after them", c.Streaming, c.OutByType["snug:app-response"], steps)
	}
}

// A fake OpenAI-compatible server on loopback speaking the real SSE format.
func TestAskStreamsWithOpenAICompatibleServer(t *testing.T) {
	var sawEnvelope atomic.Bool
	pieces := []string{`{\"message\":`, `\"hello `, `from the `, `fake server\"}`}
	steps := newStepper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		defer close(steps.done)
		if strings.Contains(string(body), frame.EnvelopeTag) {
			sawEnvelope.Store(true)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for i, piece := range pieces {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"%s\"}}]}\n\n", piece)
			w.(http.Flusher).Flush()
			steps.made(r.Context(), i+1)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	backend, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	h := startHost(t, hostkit.WithAgent(backend))
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	startAsk(t, frame, "greet", `{name: "Ada"}`, "")
	steps.run(t, frame, func(int) bool { return true })
	r := answer(t, frame)
	if r.Code != "" || r.Data["message"] != "hello from the fake server" {
		t.Fatalf("ask = %+v", r)
	}
	if len(r.Texts) != len(pieces) || !r.Cumulative {
		t.Fatalf("streaming texts = %q: want the server's %d cumulative steps", r.Texts, len(pieces))
	}
	if !sawEnvelope.Load() {
		t.Error("the agent server never saw the chat envelope tag")
	}
}

// TestCancelEndsTheRequest: an app that aborts its ask after two steps gets
// CANCELLED; the host sends app-cancel's answer once, ends the agent's
// request (the agent, waiting for its next step, sees its context end),
// and nothing more reaches the app.
func TestCancelEndsTheRequest(t *testing.T) {
	paced := &pacedAgent{func(agent.Completion) agent.Backend { return offline.New(offline.Options{ChunkSize: 2}) }, newStepper()}
	h := startHost(t, hostkit.WithAgent(paced))
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	browsertest.Eval[bool](t, frame, `(window.asked = (async () => {
		const ac = new AbortController();
		const texts = [];
		try {
			await snug.ask("slow", {}, {signal: ac.signal, onText: t => { texts.push(t); window.streamed = texts.length; if (texts.length === 2) ac.abort(); }});
			return {texts};
		} catch (e) { return {code: e.code, texts}; }
	})().then(r => (window.answer = r)), true)`)
	// The agent makes step 1 and 2 and is let go on after step 1 only: it
	// ends when the cancel ends its context.
	if steps := paced.run(t, frame, func(n int) bool { return n < 2 }); steps != 2 {
		t.Fatalf("the agent made %d steps, want 2 and then its context ended", steps)
	}
	r := answer(t, frame)
	if r.Code != "CANCELLED" {
		t.Fatalf("ask after abort = %+v, want CANCELLED", r)
	}
	// The host saw the cancel and answered the request once, with
	// CANCELLED: after the agent's two steps, only the terminal. Three
	// events must have reached the inspector before its counts say so, and
	// the page learns of them in separate relay messages that a draw may
	// fall between: the terminal frame (counted as terminal when the page
	// delivers it), the host's entry of that frame (an app-response out),
	// and the host's entry of the app-cancel (an app-cancel in). The host
	// answers the cancel while it handles it, so the app-cancel's entry
	// comes last, after the terminal's. An app-response counted out beyond
	// the streaming ones delivered is the terminal's entry: each frame's
	// entry follows the frame.
	c := runner.CountsWhen("the app-cancel in, the terminal delivered and the host's entry of it", func(c browsertest.Counts) bool {
		return c.InByType["snug:app-cancel"] >= 1 && c.Terminal >= 1 && c.OutByType["snug:app-response"] > c.Streaming
	})
	if c.InByType["snug:app-cancel"] != 1 {
		t.Errorf("inspector saw %d app-cancel frames, want 1", c.InByType["snug:app-cancel"])
	}
	if c.Terminal != 1 || c.OutByType["snug:app-response"] != c.Streaming+1 || c.Streaming > 2 {
		t.Errorf("inspector: %d terminal, %d streaming, %d app-response frames out; want at most the 2 steps and one terminal", c.Terminal, c.Streaming, c.OutByType["snug:app-response"])
	}
	runner.WaitFor("the host's CANCELLED terminal", `[...document.querySelectorAll('#frames tbody tr')].some(tr =>
		tr.dataset.dir === 'out' && tr.dataset.type === 'snug:app-response' && tr.querySelector('.code').textContent === 'CANCELLED')`)
}

type dbResult struct {
	Rows    [][]any        `json:"rows"`
	Kv      map[string]any `json:"kv"`
	Bytes   int            `json:"bytes"`
	Code    string         `json:"code"`
	Message string         `json:"message"`
}

// db exec, kv, export and import through the page, and the data still there
// after the host restarts on the same data directory.
func TestDBSurvivesRestart(t *testing.T) {
	data := t.TempDir()
	h1, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("probe", readTestdata(t, "probe.html"))), hostkit.WithDataDir(data))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h1.Serve() }()
	runner := browsertest.OpenRunner(t, h1.URL(), "probe")
	frame := runner.Frame(0)
	r := browsertest.Eval[dbResult](t, frame, `(async () => {
		try {
			await snug.db.exec("create table todo (id integer primary key, title text, done integer)");
			await snug.db.exec("insert into todo (title, done) values (?, ?), (?, ?)", ["write tests", 1, "ship", 0]);
			await snug.db.set("prefs", {theme: "dark", n: 3});
			const snapshot = await snug.db.export();
			window.snapshot = snapshot;
			await snug.db.exec("delete from todo where done = 1");
			const {rows} = await snug.db.exec("select title from todo order by id");
			return {rows, bytes: snapshot.length};
		} catch (e) { return {code: e.code, message: e.message}; }
	})()`)
	if r.Code != "" || len(r.Rows) != 1 || r.Bytes < 512 {
		t.Fatalf("db before import = %+v", r)
	}
	r = browsertest.Eval[dbResult](t, frame, `(async () => {
		try {
			const {bytes} = await snug.db.import(window.snapshot);
			const {rows} = await snug.db.exec("select title, done from todo order by id");
			return {rows, bytes};
		} catch (e) { return {code: e.code, message: e.message}; }
	})()`)
	if r.Code != "" || len(r.Rows) != 2 {
		t.Fatalf("db after import = %+v", r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	h2 := startHost(t, hostkit.WithDataDir(data))
	runner2 := browsertest.OpenRunner(t, h2.URL(), "probe")
	frame2 := runner2.Frame(0)
	r = browsertest.Eval[dbResult](t, frame2, `(async () => {
		try {
			const {rows} = await snug.db.exec("select title, done from todo order by id");
			return {rows, kv: await snug.db.get("prefs")};
		} catch (e) { return {code: e.code, message: e.message}; }
	})()`)
	if r.Code != "" || len(r.Rows) != 2 || r.Rows[0][0] != "write tests" || r.Kv["theme"] != "dark" {
		t.Fatalf("db after restart = %+v", r)
	}
}

// netServer is a loopback HTTP server that the test's net config allows.
func netServer(t *testing.T) (*httptest.Server, *atomic.Int64, hostkit.Option) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=secret")
		fmt.Fprintf(w, `{"path":%q,"method":%q}`, r.URL.Path, r.Method)
	}))
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	opt := hostkit.WithNet(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}}, netgate.WithAllowedAddrs(ap))
	return srv, &hits, opt
}

func TestNetConfirmDenyThenAllow(t *testing.T) {
	srv, hits, netOpt := netServer(t)
	h := startHost(t, netOpt)
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	url := srv.URL + "/items?q=1"
	fetchJS := fmt.Sprintf(`window.netResult = snug.net.fetch(%q, {method: "POST", body: "x=1", headers: {"content-type": "text/plain"}})
		.then(async r => ({status: r.status, body: await r.text(), cookie: r.headers.get("set-cookie")}), e => ({code: e.code})); true`, url)

	browsertest.Eval[bool](t, frame, fetchJS)
	shown := runner.Confirm()
	if shown.Kind != "net" || shown.App != "Probe (probe)" || shown.Method != "POST" || shown.URL != url {
		t.Fatalf("dialog shows %+v, want app name, POST and %s", shown, url)
	}
	runner.Answer("deny")
	denied := browsertest.Eval[map[string]any](t, frame, `window.netResult`)
	if denied["code"] != "NET_CONFIRM_DENIED" || hits.Load() != 0 {
		t.Fatalf("after deny: %v, %d hits", denied, hits.Load())
	}

	browsertest.Eval[bool](t, frame, fetchJS)
	runner.WaitFor("the net confirm dialog again", `document.getElementById('confirm').open`)
	runner.Answer("once")
	got := browsertest.Eval[map[string]any](t, frame, `window.netResult`)
	if got["status"] != float64(200) || got["body"] != `{"path":"/items","method":"POST"}` || got["cookie"] != nil {
		t.Fatalf("after allow: %v", got)
	}
	if hits.Load() != 1 {
		t.Fatalf("server hits = %d, want 1", hits.Load())
	}
	// A request the app abandons while its dialog is up: the host withdraws
	// the question and the dialog closes.
	browsertest.Eval[bool](t, frame, fmt.Sprintf(`(() => { const ac = new AbortController(); window.abandon = ac;
		window.netResult = snug.net.fetch(%q, {signal: ac.signal}).then(r => r.status, e => e.code); return true; })()`, url))
	runner.WaitFor("the dialog again", `document.getElementById('confirm').open`)
	browsertest.Eval[bool](t, frame, `(window.abandon.abort(), true)`)
	runner.WaitFor("the dialog to close", `!document.getElementById('confirm').open`)
	if got := browsertest.Eval[string](t, frame, `window.netResult`); got != "CANCELLED" {
		t.Errorf("abandoned fetch = %q, want CANCELLED", got)
	}

	runner.WaitFor("two audit rows", `document.querySelectorAll('#audit tbody tr').length >= 2`)
	decisions := browsertest.Eval[[]string](t, runner.Tab, `[...document.querySelectorAll('#audit tbody tr .decision')].map(td => td.textContent)`)
	// Newest first; the two oldest are the deny and the allow.
	if n := len(decisions); decisions[n-2] != "allowed" || decisions[n-1] != "NET_CONFIRM_DENIED" {
		t.Errorf("audit decisions = %q", decisions)
	}
}

// open-url: nothing opens until the user clicks Open in the host's own
// dialog; then a new window opens and the runner stays where it is.
func TestOpenURLConfirm(t *testing.T) {
	// The link's host resolves to a canary on loopback in the test browser:
	// the window that opens connects there (a TLS handshake it cannot finish).
	can := newCanary(t)
	h := startHost(t)
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	runnerURL := browsertest.Eval[string](t, runner.Tab, `location.href`)
	// Pages are told apart by target, not counted: another test's tab may
	// still be closing.
	pagesNow := func() map[target.ID]bool {
		ids := map[target.ID]bool{}
		for _, p := range browsertest.PageTargets(t, runner.Tab) {
			ids[p.TargetID] = true
		}
		return ids
	}
	opened := func(before map[target.ID]bool) (n int) {
		for id := range pagesNow() {
			if !before[id] {
				n++
			}
		}
		return n
	}
	before := pagesNow()
	link := fmt.Sprintf("https://docs-canary.test:%d/guide?x=1#part", can.port())

	browsertest.Eval[bool](t, frame, fmt.Sprintf(`window.openResult = snug.openUrl(%q).catch(e => e.code); true`, link))
	shown := runner.Confirm()
	if shown.Kind != "open-url" || shown.URL != link || shown.App == "" {
		t.Fatalf("dialog shows %+v", shown)
	}
	for _, c := range shown.Choices {
		if c == "always" {
			t.Error("open-url offers 'always'")
		}
	}
	// No wait: window.open makes its window (a page target) before it
	// returns, and the page would have called it before showing the dialog,
	// which is up; with no window, nothing can reach the link's host.
	if n := opened(before); n != 0 || can.conns.Load() != 0 {
		t.Fatalf("a window opened before the click: %d new pages; %d connections to the link's host", n, can.conns.Load())
	}
	runner.Answer("once")
	if got := browsertest.Eval[string](t, frame, `window.openResult`); got != "opened" {
		t.Fatalf("openUrl = %q, want opened", got)
	}
	browsertest.Until(t, "a new window after the click", func() bool { return opened(before) == 1 })
	browsertest.Until(t, "the new window to reach the link's host", func() bool { return can.requests.Load() > 0 })
	for _, p := range browsertest.PageTargets(t, runner.Tab) {
		if p.URL != runnerURL && p.URL != "about:blank" {
			_, _ = chromedp.CallBrowser(runner.Tab, target.CloseTarget, target.CloseTargetParams{TargetID: p.TargetID})
		}
	}
	// Gone, so that it connects to the link's host no more.
	browsertest.Until(t, "the opened window closed", func() bool { return opened(before) == 0 })
	if now := browsertest.Eval[string](t, runner.Tab, `location.href`); now != runnerURL {
		t.Fatalf("the runner navigated to %s", now)
	}
	if state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.state`); state != "live" {
		t.Fatalf("the app frame is %s after open-url", state)
	}

	// Cancel answers declined and opens nothing.
	before = pagesNow()
	reached := can.conns.Load()
	browsertest.Eval[bool](t, frame, fmt.Sprintf(`window.openResult = snug.openUrl(%q).catch(e => e.code); true`, link))
	runner.WaitFor("the open-url dialog", `document.getElementById('confirm').open`)
	runner.Answer("deny")
	if got := browsertest.Eval[string](t, frame, `window.openResult`); got != "declined" {
		t.Fatalf("openUrl after cancel = %q, want declined", got)
	}
	// No wait: a window the cancel opened would exist before the app heard
	// "declined" (window.open makes it before it returns, in the click's
	// handler, which sends the answer the app heard).
	if n := opened(before); n != 0 || can.conns.Load() != reached {
		t.Fatalf("cancel opened a window: %d new pages; %d connections to the link's host, had %d", n, can.conns.Load(), reached)
	}
}

func TestThemeToggleReachesTheApp(t *testing.T) {
	h := startHost(t, hostkit.WithTheme("light"))
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	start := browsertest.Eval[string](t, runner.Tab, `document.documentElement.dataset.theme`)
	want := "dark"
	if start == "dark" {
		want = "light"
	}
	browsertest.Do(t, runner.Tab, "toggle the theme", chromedp.Click(chromedp.ID("theme-toggle")))
	if got := browsertest.Eval[string](t, runner.Tab, `document.documentElement.dataset.theme`); got != want {
		t.Fatalf("runner theme = %s, want %s", got, want)
	}
	browsertest.WaitFor(t, frame, "the app's theme", fmt.Sprintf(`snug.ready.then(i => document.documentElement.dataset.theme === %q && i.theme.mode === %q)`, want, want))
	if got := browsertest.Eval[[]string](t, frame, `window.probeThemes`); len(got) == 0 || got[len(got)-1] != want {
		t.Fatalf("theme-change events = %q", got)
	}
}

func TestResizeSetsFrameHeight(t *testing.T) {
	h := startHost(t)
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	browsertest.Eval[bool](t, frame, `(() => { const d = document.createElement('div'); d.style.height = '900px'; document.body.append(d); return true; })()`)
	runner.WaitFor("the frame to grow", `document.querySelector('article.instance iframe').getBoundingClientRect().height > 900`)
	browsertest.Eval[bool](t, frame, `(() => { document.body.lastElementChild.remove(); return true; })()`)
	runner.WaitFor("the frame to shrink", `document.querySelector('article.instance iframe').getBoundingClientRect().height < 400`)
	// The frame was resized on two app-events; their entries follow.
	runner.CountsWhen("both resize app-events in", func(c browsertest.Counts) bool { return c.InByType["snug:app-event"] >= 2 })
}

// App documents are served by URL, so an in-page link resolves against the
// app's own URL: a hash-routed app keeps its document (in a srcdoc frame,
// href="#x" would resolve against the runner and navigate away).
func TestHashLinksStayInTheApp(t *testing.T) {
	h := startHost(t)
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)
	got := browsertest.Eval[string](t, frame, `(async () => {
		const a = Object.assign(document.createElement("a"), {href: "#settings", textContent: "settings"});
		document.body.append(a);
		a.click();
		// A fragment navigation is synchronous: the hash is set when
		// click() returns; a navigation away would end the frame instead.
		return location.pathname + location.hash;
	})()`)
	if got != "/#settings" {
		t.Fatalf("after the click the app is at %q", got)
	}
	if state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.state`); state != "live" {
		t.Fatalf("the instance is %s after a hash link", state)
	}
}

// The page outlives its host: when the host restarts on the same address,
// the page reconnects, starts its frames again, and their data is there.
func TestPageReconnectsAfterRestart(t *testing.T) {
	data := t.TempDir()
	apps := hostkit.WithApps(hostkit.RawApp("probe", readTestdata(t, "probe.html")))
	h1, err := hostkit.New(apps, hostkit.WithDataDir(data))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- h1.Serve() }()
	runner := browsertest.OpenRunner(t, h1.URL(), "probe")
	frame := runner.Frame(0)
	browsertest.Eval[bool](t, frame, `snug.db.set("visits", 1).then(() => true)`)
	first := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.instanceId`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h1.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	<-done
	runner.WaitFor("the page to see the drop", `document.getElementById('conn').dataset.state !== 'open'`)

	h2, err := hostkit.New(apps, hostkit.WithDataDir(data), hostkit.WithAddr(strings.TrimPrefix(h1.Origin(), "http://")))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h2)
	runner.WaitFor("a new instance", fmt.Sprintf(`(() => { const a = document.querySelector('article.instance[data-instance-id]'); return !!a && a.dataset.instanceId !== %q; })()`, first))
	frame2 := runner.Frame(0)
	if got := browsertest.Eval[int](t, frame2, `snug.db.get("visits")`); got != 1 {
		t.Fatalf("after the restart visits = %d", got)
	}
}

// A rebuilt app (snuggen serve --watch) reloads its frames: each one is
// replaced by a fresh frame with a new slot and a new instance.
func TestReloadReplacesFrames(t *testing.T) {
	h := startHost(t)
	runner := browsertest.OpenRunner(t, h.URL(), "probe", "other")
	before := runner.Slots()
	first := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance[data-app="probe"]').dataset.instanceId`)
	if err := h.Apps.Reload(context.Background(), "probe"); err != nil {
		t.Fatal(err)
	}
	runner.WaitFor("the new probe instance", fmt.Sprintf(`(() => { const a = document.querySelector('article.instance[data-app="probe"][data-instance-id]'); return !!a && a.dataset.instanceId !== %q; })()`, first))
	after := runner.Slots()
	if len(after) != 2 || after[0] == before[0] || after[1] != before[1] {
		t.Fatalf("slots %v → %v: want probe's replaced in place and other's kept", before, after)
	}
}
