package hostkit_test

// More of the relay protocol through the real runner page: the page's
// visibility, the user's explicit agent reset, and frames too big for the
// relay.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/site"
)

// runnerHost starts a host with the probe app and opts, serving until the
// test ends.
func runnerHost(t *testing.T, opts ...hostkit.Option) *hostkit.Host {
	t.Helper()
	probe, err := os.ReadFile(filepath.Join("testdata", "probe.html"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := hostkit.New(append([]hostkit.Option{hostkit.WithApps(hostkit.RawApp("probe", probe))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	return h
}

// devtools runs one DevTools command on ctx's target, failing the test on
// error.
func devtools[P, R any](t *testing.T, ctx context.Context, what string, cmd cdp.Command[P, R], params P) R {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel()
	r, err := chromedp.Call(ctx, cmd, params)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return r
}

// The page's visibility reaches its apps as a visibility host-event. The
// runner's tab is hidden for real: another tab comes to the front, as when
// the user switches tabs; activating the runner's tab shows it again.
func TestRunnerVisibilityReachesApps(t *testing.T) {
	h := runnerHost(t)
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)
	browsertest.Eval[bool](t, app, `(window.seen = [], snug.on("visibility", d => seen.push(d.visible)), true)`)
	if state := browsertest.Eval[string](t, r.Tab, `document.visibilityState`); state != "visible" {
		t.Fatalf("the runner starts %s", state)
	}

	other := devtools(t, r.Tab, "open another tab in front", target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	// Attached, the tab closes with its context.
	otherTab, closeOther := chromedp.NewContext(r.Tab, chromedp.WithTargetID(other.TargetID))
	defer closeOther()
	if err := chromedp.Do(otherTab); err != nil {
		t.Fatalf("attach to the other tab: %v", err)
	}
	r.WaitFor("the runner hidden", `document.visibilityState === 'hidden'`)
	browsertest.WaitFor(t, app, "the app told the page is hidden", `seen.length === 1 && seen[0] === false`)

	devtools(t, r.Tab, "bring the runner's tab back", target.ActivateTarget, target.ActivateTargetParams{TargetID: chromedp.FromContext(r.Tab).Target.TargetID})
	r.WaitFor("the runner visible", `document.visibilityState === 'visible'`)
	browsertest.WaitFor(t, app, "the app told the page is visible", `seen.length === 2 && seen[1] === true`)

	// The host sent each as a host-event frame the inspector shows (counted
	// once their entries have arrived, not after a fixed wait).
	c := r.CountsWhen("both host-events out", func(c browsertest.Counts) bool { return c.OutByType["snug:host-event"] >= 2 })
	if c.OutByType["snug:host-event"] != 2 {
		t.Errorf("inspector: %d host-event frames out, want 2 (%+v)", c.OutByType["snug:host-event"], c)
	}
}

type parseFailure struct {
	Code              string `json:"code"`
	AttemptsRemaining *int   `json:"attemptsRemaining"`
}

const askProseJS = `snug.ask("summarize", {text: "x"}).then(() => ({code: "OK"}), e => ({code: e.code, attemptsRemaining: e.attemptsRemaining}))`

// An agent that answers prose uses up the instance's parse-failure budget;
// then asks are refused without calling the agent until the user presses
// the instance's "Reset agent", after which the agent is called again.
func TestRunnerResetAgentRestoresTheBudget(t *testing.T) {
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Sure! ", "Here is a summary ", "in plain prose."} {
			fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", piece)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()
	backend, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	h := runnerHost(t, hostkit.WithAgent(backend))
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	slot := r.Slots()[0]
	app := r.Frame(0)

	budget := frame.ParseFailureBudget
	for want := budget - 1; want >= 0; want-- {
		before := calls.Load()
		got := browsertest.Eval[parseFailure](t, app, askProseJS)
		if got.Code != frame.CodeParseFailed || got.AttemptsRemaining == nil || *got.AttemptsRemaining != want {
			t.Fatalf("ask with %d attempts left = %+v, want %s with attemptsRemaining %d", want+1, got, frame.CodeParseFailed, want)
		}
		if calls.Load() == before {
			t.Fatalf("ask with %d attempts left did not call the agent", want+1)
		}
	}
	before := calls.Load()
	refused := browsertest.Eval[parseFailure](t, app, askProseJS)
	if refused.Code != frame.CodeParseFailed || refused.AttemptsRemaining == nil || *refused.AttemptsRemaining != 0 {
		t.Fatalf("ask past the budget = %+v, want %s with attemptsRemaining 0", refused, frame.CodeParseFailed)
	}
	if n := calls.Load() - before; n != 0 {
		t.Fatalf("ask past the budget called the agent %d times", n)
	}

	// The runner marks the instance's reset button: asks are refused now.
	article := fmt.Sprintf(`document.querySelector('article[data-slot=%q]')`, slot)
	if got := browsertest.Eval[string](t, r.Tab, article+`.dataset.agent || ''`); got != "needs-reset" {
		t.Errorf("instance data-agent = %q after the budget ran out, want needs-reset", got)
	}

	// The user resets the instance from the runner.
	btn := fmt.Sprintf(`article[data-slot=%q] button.reset`, slot)
	r.Click(btn)
	r.WaitFor("the reset's outcome", article+`.dataset.reset === 'done' && !`+article+`.dataset.agent`)
	shown := resetRows(t, r, slot, ".type")
	if len(shown) != 1 || !strings.HasPrefix(shown[0], "accept ") || !strings.Contains(shown[0], "reset") {
		t.Fatalf("inspector rows for the reset = %q, want one accepted row naming the reset", shown)
	}

	before = calls.Load()
	again := browsertest.Eval[parseFailure](t, app, askProseJS)
	if again.Code != frame.CodeParseFailed || again.AttemptsRemaining == nil || *again.AttemptsRemaining != budget-1 {
		t.Fatalf("ask after the reset = %+v, want %s with attemptsRemaining %d", again, frame.CodeParseFailed, budget-1)
	}
	if calls.Load() == before {
		t.Fatal("ask after the reset did not call the agent")
	}
}

// A reset the host cannot do reaches the user as RESET_FAILED: on a host
// that offers no agent, the instance's "Reset agent" is answered with the
// code and the reason, on the button and in the inspector.
func TestRunnerResetAgentFailureIsShown(t *testing.T) {
	h := runnerHost(t, hostkit.WithBrokerOptions(func(o *broker.Options) { o.Agent = nil }))
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	slot := r.Slots()[0]
	article := fmt.Sprintf(`document.querySelector('article[data-slot=%q]')`, slot)
	r.Click(fmt.Sprintf(`article[data-slot=%q] button.reset`, slot))
	r.WaitFor("the reset's outcome", article+`.dataset.reset === 'failed'`)
	title := browsertest.Eval[string](t, r.Tab, article+`.querySelector('button.reset').title`)
	if !strings.Contains(title, frame.CodeResetFailed) || !strings.Contains(title, "offers no agent") {
		t.Errorf("reset button title %q, want %s and the reason", title, frame.CodeResetFailed)
	}
	rows := resetRows(t, r, slot, ".code")
	if len(rows) != 1 || rows[0] != "reject "+frame.CodeResetFailed {
		t.Errorf("inspector rows for the reset = %q, want one rejected %s", rows, frame.CodeResetFailed)
	}
}

// A frame whose JSON is past the largest size class would make the relay
// close the page's whole connection (every app on it with it). The page
// drops it instead, shows it rejected, and everything else goes on.
func TestRunnerDropsFramesTooBigForTheRelay(t *testing.T) {
	h := runnerHost(t, hostkit.WithDataDir(t.TempDir()))
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	slot := r.Slots()[0]
	instance := browsertest.Eval[string](t, r.Tab, `document.querySelector('article.instance').dataset.instanceId`)
	app := r.Frame(0)
	if err := browsertest.Eval[string](t, app, `snug.db.set("k", "before").then(() => "", e => e.code)`); err != "" {
		t.Fatalf("kv set before: %s", err)
	}
	// The set's entry (in) comes after its answer, which the app has.
	base := r.CountsWhen("the kv set in", func(c browsertest.Counts) bool { return c.InByType[frame.TypeDBRequest] >= 1 })

	// 9 MiB of JSON in a db-request (the largest class) from the app's frame.
	big := 9 << 20
	if big <= site.MaxRelayedFrameBytes {
		t.Fatalf("the test frame (%d bytes) is not past the largest size class (%d)", big, site.MaxRelayedFrameBytes)
	}
	browsertest.Eval[bool](t, app, fmt.Sprintf(`snug.ready.then(i => (parent.postMessage({type: %q, v: 1,
		instanceId: i.instanceId, requestId: "too-big", op: "exec", sql: "select ?", params: ["x".repeat(%d)]}, "*"), true))`,
		frame.TypeDBRequest, big))
	r.WaitFor("the dropped frame counted", `JSON.parse(document.getElementById('counts').dataset.counts || '{}').dropped === 1`)

	// The connection lived: no reconnect, the same instance, the app works.
	if state := browsertest.Eval[string](t, r.Tab, `document.getElementById('conn').dataset.state`); state != "open" {
		t.Fatalf("connection state after the big frame: %s", state)
	}
	if got := browsertest.Eval[string](t, app, `snug.db.get("k").then(v => v, e => "error " + e.code)`); got != "before" {
		t.Fatalf("kv get after the big frame = %q", got)
	}
	if now := r.Slots(); len(now) != 1 || now[0] != slot {
		t.Fatalf("slots after the big frame = %v, want [%s] (a remount means the connection dropped)", now, slot)
	}
	if id := browsertest.Eval[string](t, r.Tab, `document.querySelector('article.instance').dataset.instanceId`); id != instance {
		t.Fatalf("instance after the big frame = %s, want %s", id, instance)
	}
	// The get's entry comes last: the drop was counted before its frame went.
	c := r.CountsWhen("the get in after the drop", func(c browsertest.Counts) bool {
		return c.InByType[frame.TypeDBRequest] >= base.InByType[frame.TypeDBRequest]+2
	})
	// db-requests only: the app may report its height (an app-event) at
	// any time.
	if c.Reject != base.Reject+1 || c.InByType[frame.TypeDBRequest] != base.InByType[frame.TypeDBRequest]+2 {
		t.Errorf("inspector counts %+v after %+v: want one more rejected (the drop) and two more db-requests in (the drop, the get)", c, base)
	}
	if row := inspectorRow(t, r, "too-big"); !strings.HasPrefix(row, "reject ") || !strings.Contains(row, "largest size class") {
		t.Errorf("inspector row of the big frame = %q", row)
	}

	// Bytes count, not characters: 3 Mi three-byte characters are 9 MiB.
	post := func(rid, value string) {
		browsertest.Eval[bool](t, app, fmt.Sprintf(`snug.ready.then(i => (parent.postMessage({type: %q, v: 1,
			instanceId: i.instanceId, requestId: %q, op: "exec", sql: "select ?", params: [%s]}, "*"), true))`,
			frame.TypeDBRequest, rid, value))
	}
	post("wide", `"€".repeat(3 << 20)`)
	r.WaitFor("the wide frame dropped", `JSON.parse(document.getElementById('counts').dataset.counts || '{}').dropped === 2`)
	// A frame past every class but the largest goes to the host, which
	// judges it against its own type's class.
	fits := 2 << 20
	if fits <= frame.MaxNetFrameBytes || fits <= frame.MaxFrameBytes || fits >= site.MaxRelayedFrameBytes {
		t.Fatalf("a %d-byte frame does not sit between the smaller classes and the largest", fits)
	}
	post("fits", fmt.Sprintf(`"x".repeat(%d)`, fits))
	r.WaitFor("the host's verdict on the frame that fits", `[...document.querySelectorAll('#frames tbody tr')].some(tr => tr.querySelector('.rid').textContent === 'fits')`)
	row := inspectorRow(t, r, "fits")
	if strings.Contains(row, "not relayed by the runner") {
		t.Errorf("the frame within the class was dropped: %q", row)
	}
	if got := browsertest.Eval[string](t, r.Tab, `document.getElementById('conn').dataset.state`); got != "open" {
		t.Fatalf("connection state at the end: %s", got)
	}
	if dropped := browsertest.Eval[int](t, r.Tab, `JSON.parse(document.getElementById('counts').dataset.counts).dropped`); dropped != 2 {
		t.Errorf("dropped %d frames, want 2", dropped)
	}
}

// A frame too large for the relay is answered as the host answers a frame
// past its size class (R1): the paired response type, its code from the
// registry, the requestId echoed, so the app's promise settles. The runtime
// refuses one it can measure before it sends it.
func TestRunnerAnswersFramesTooBigForTheRelay(t *testing.T) {
	h := runnerHost(t, hostkit.WithDataDir(t.TempDir()))
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)

	// A 6.5 MiB file through snug.db.import: its base64 is past the db
	// class, so the runtime refuses it before sending, naming the limit.
	got := browsertest.Eval[map[string]any](t, app, `snug.db.import(new Uint8Array(6.5 * 2 ** 20)).then(
		() => ({settled: "resolved"}), e => ({settled: "rejected", name: e.name, code: e.code, message: e.message}))`)
	if got["settled"] != "rejected" || got["name"] != "SnugError" || got["code"] != frame.CodeMalformed ||
		!strings.Contains(fmt.Sprint(got["message"]), fmt.Sprintf("past its size class of %d bytes", frame.MaxDBFrameBytes)) {
		t.Fatalf("6.5 MiB import settled %v: want a SnugError %s naming the %d-byte limit", got, frame.CodeMalformed, frame.MaxDBFrameBytes)
	}
	// Had the runtime sent the import anyway, the page would have dropped
	// it (and counted it) before the app heard an answer: the exact count
	// of drops at the end would be one more.

	// Frames posted by hand, 9 MiB each: the page answers for the host.
	browsertest.Eval[bool](t, app, `(window.answers = {}, addEventListener("message", (e) => {
		if (e.source === parent && e.data && typeof e.data.requestId === "string") answers[e.data.requestId] = e.data;
	}), true)`)
	// One frame of 9 MiB; the others just past the largest class.
	big, over := 9<<20, site.MaxRelayedFrameBytes+1
	if big <= site.MaxRelayedFrameBytes {
		t.Fatalf("a %d-byte frame is not past the largest size class (%d)", big, site.MaxRelayedFrameBytes)
	}
	post := func(frames ...string) {
		browsertest.Eval[bool](t, app, fmt.Sprintf(`snug.ready.then((i) => { for (const f of [%s]) parent.postMessage({instanceId: i.instanceId, ...f, pad: "x".repeat(%d)}, "*"); return true; })`,
			strings.Join(frames, ", "), over))
	}
	answered := []struct {
		name, fields, requestID, answerType, code string
	}{
		{"db-request", `v: 1, type: "snug:db-request", requestId: "big-db", op: "exec", sql: "select 1"`, "big-db", frame.TypeDBResponse, frame.CodeMalformed},
		{"app-message", `v: 1, type: "snug:app-message", requestId: "big-ask", appId: "a", action: "go"`, "big-ask", frame.TypeAppResponse, frame.CodeMalformed},
		{"net-request", `v: 1, type: "snug:net-request", requestId: "big-net", url: "https://example.com/", method: "POST"`, "big-net", frame.TypeNetResponse, frame.CodeMalformed},
		{"open-url-request", `v: 1, type: "snug:open-url-request", requestId: "big-url", url: "https://example.com/"`, "big-url", frame.TypeOpenURLResult, frame.CodeMalformed},
		{"v 2", `v: 2, type: "snug:db-request", requestId: "big-v2"`, "big-v2", frame.TypeDBResponse, frame.CodeUnsupportedVersion},
		{"v missing", `type: "snug:net-request", requestId: "big-nov"`, "big-nov", frame.TypeNetResponse, frame.CodeMalformed},
		{"type missing", `v: 1, requestId: "big-notype"`, "big-notype", frame.TypeAppResponse, frame.CodeMalformed},
		{"128 emoji id", `v: 1, type: "snug:db-request", requestId: "😀".repeat(128)`, strings.Repeat("😀", 128), frame.TypeDBResponse, frame.CodeMalformed},
	}
	var frames, ids []string
	for _, c := range answered {
		frames = append(frames, "{"+c.fields+"}")
		ids = append(ids, c.requestID)
	}
	post(frames...)
	browsertest.WaitFor(t, app, "every answer", fmt.Sprintf(`%s.every((id) => answers[id])`, mustJSON(t, ids)))
	all := browsertest.Eval[map[string]map[string]any](t, app, `answers`)
	for _, c := range answered {
		a := all[c.requestID]
		code := ""
		if e, ok := a["error"].(map[string]any); ok && a["ok"] == false {
			code, _ = e["code"].(string)
		} else if reason, _ := a["reason"].(string); a["status"] == frame.StatusRefused {
			code, _, _ = strings.Cut(reason, ":") // "CODE: why"
		}
		if a["v"] != float64(frame.Version) || a["type"] != c.answerType || code != c.code {
			t.Errorf("%s: answer %v, want %s with %s", c.name, a, c.answerType, c.code)
		}
		if _, err := frame.Parse(mustJSON(t, a)); err != nil {
			t.Errorf("%s: the answer is no valid frame: %v", c.name, err)
		}
	}
	// A request's promise settles: a db import posted the way the runtime
	// would had it not measured first rejects with the host's answer.
	got = browsertest.Eval[map[string]any](t, app, fmt.Sprintf(`new Promise((ok) => {
		addEventListener("message", (e) => e.data?.requestId === "own" && ok({type: e.data.type, code: e.data.error?.code, message: e.data.error?.message}));
		snug.ready.then((i) => parent.postMessage({v: 1, type: %q, requestId: "own", instanceId: i.instanceId, op: "import", data: "A".repeat(%d)}, "*"));
	})`, frame.TypeDBRequest, big))
	if got["type"] != frame.TypeDBResponse || got["code"] != frame.CodeMalformed || !strings.Contains(fmt.Sprint(got["message"]), frame.RuleFrameSize) {
		t.Errorf("answer to the db import = %v", got)
	}
	if row := inspectorRow(t, r, "big-db"); !strings.HasPrefix(row, "reject ") || !strings.Contains(row, "answered "+frame.CodeMalformed) {
		t.Errorf("inspector row of the big db-request = %q", row)
	}

	// No plausible requestId, or an unknown type: no answer, as from the
	// host. Frames are answered in order, so once the last frame's answer is
	// in, an answer to any of these would be too.
	post(`{v: 1, type: "snug:db-request", requestId: "x".repeat(129)}`,
		`{v: 1, type: "snug:db-request", requestId: ""}`,
		`{v: 1, type: "snug:db-request", requestId: "\ud800"}`,
		`{v: 1, type: "snug:db-request", requestId: 7}`,
		`{v: 1, type: "snug:future-thing", requestId: "big-future"}`,
		`{v: 1, type: "snug:db-request", requestId: "big-last"}`)
	browsertest.WaitFor(t, app, "the answer after the silent frames", `!!answers["big-last"]`)
	if keys := browsertest.Eval[[]string](t, app, `Object.keys(answers).map((k) => k.slice(0, 20))`); len(keys) != len(answered)+2 {
		t.Errorf("answers to %q, want %d: a frame without a plausible requestId or of an unknown type was answered", keys, len(answered)+2)
	}
	if n := droppedCount(t, r, len(answered)+1+6); n != len(answered)+1+6 {
		t.Errorf("%d frames dropped by the page, want %d (one more: the runtime sent the 6.5 MiB import)", n, len(answered)+1+6)
	}
	if state := browsertest.Eval[string](t, r.Tab, `document.getElementById('conn').dataset.state`); state != "open" {
		t.Fatalf("connection state after the big frames: %s", state)
	}
}

// droppedCount reads the inspector's count of frames the page did not
// relay once it has drawn at least want of them (it draws every 200 ms):
// the page counts a drop before it answers the frame, so a test that has
// seen the answers waits for the draw, not for a while.
func droppedCount(t *testing.T, r *browsertest.Runner, want int) int {
	t.Helper()
	js := `JSON.parse(document.getElementById('counts').dataset.counts || '{"dropped":0}').dropped`
	r.WaitFor(fmt.Sprintf("%d drops counted", want), fmt.Sprintf(`%s >= %d`, js, want))
	return browsertest.Eval[int](t, r.Tab, js)
}

// resetRows reads the inspector's rows of slot's resets (verdict and the
// cell sel) once there is one: the runner shows a reset's outcome on its
// button from that row's entry, so the row is drawn within a draw.
func resetRows(t *testing.T, r *browsertest.Runner, slot, sel string) []string {
	t.Helper()
	rows := fmt.Sprintf(`[...document.querySelectorAll('#frames tbody tr[data-slot=%q]')].filter(tr => tr.dataset.type === 'reset')`, slot)
	r.WaitFor("the reset's row", rows+`.length >= 1`)
	return browsertest.Eval[[]string](t, r.Tab, rows+fmt.Sprintf(`.map(tr => tr.dataset.verdict + ' ' + tr.querySelector(%q).textContent)`, sel))
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// inspectorRow reads the inspector's incoming row for requestId (its
// verdict and the reason shown with it) once it is drawn.
func inspectorRow(t *testing.T, r *browsertest.Runner, requestID string) string {
	t.Helper()
	rows := fmt.Sprintf(`[...document.querySelectorAll('#frames tbody tr[data-dir="in"]')].filter(tr => tr.querySelector('.rid').textContent === %q)`, requestID)
	r.WaitFor("the inspector's row of "+requestID, rows+`.length >= 1`)
	return browsertest.Eval[string](t, r.Tab, rows+`.map(tr => tr.dataset.verdict + ' ' + tr.title).join('|')`)
}

// The open-url dialog names the app as the net dialog does: the installed
// app's display name beside the host's own key, so an app cannot pass for
// another by its name alone, nor by announcing another's.
func TestRunnerOpenURLDialogNamesTheApp(t *testing.T) {
	h := runnerHost(t)
	r := browsertest.OpenRunner(t, h.URL(), "probe")
	app := r.Frame(0)
	browsertest.Eval[bool](t, app, `(window.opened = snug.openUrl("https://example.test/a"), true)`)
	if d := r.Confirm(); d.Kind != "open-url" || d.App != "Probe (probe)" {
		t.Fatalf("dialog = %+v, want open-url naming %q", d, "Probe (probe)")
	}
	r.Answer("deny")
	if got := browsertest.Eval[string](t, app, `opened`); got != frame.StatusDeclined {
		t.Fatalf("openUrl after deny = %q", got)
	}

	// An announced name is the instance's claim: the dialog does not take it.
	browsertest.Eval[bool](t, app, `(snug.announce({appId: "test.probe", displayName: "Bank"}), true)`)
	r.WaitFor("the claim", `document.querySelector('article.instance').dataset.claimedName === "Bank"`)
	browsertest.Eval[bool](t, app, `(window.opened = snug.openUrl("https://example.test/b"), true)`)
	if d := r.Confirm(); d.App != "Probe (probe)" {
		t.Fatalf("dialog after the announce names %q, want %q", d.App, "Probe (probe)")
	}
	r.Answer("deny")
}
