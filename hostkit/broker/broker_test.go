package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/events"
	"github.com/snuggen/snuggen/hostkit/openurl"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/store"
)

// mockAgent is the offline agent behind the real bridge; delay slows each
// streamed step so a request stays in flight.
func mockAgent(delay time.Duration) broker.AgentHandler {
	return broker.Agent(agent.NewBridge(offline.New(offline.Options{ChunkSize: 8, Delay: delay}), agent.Options{}))
}

func openStore(t testing.TB) *store.Store {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func TestHostReadyOnLoadAndAsAnnounceAck(t *testing.T) {
	var mu sync.Mutex
	var announced []string
	h := newHost(t, broker.Options{
		Agent:  mockAgent(0),
		DB:     broker.Store(openStore(t)),
		Locale: "de-CH",
		OnAnnounce: func(s *broker.Session, a *frame.AppAnnounce) {
			mu.Lock()
			announced = append(announced, s.App()+"|"+a.AppID+"|"+a.DisplayName)
			mu.Unlock()
		},
	}, relay.Options{})
	p := h.page(t)
	p.mount("s1", "todo")
	p.load("s1")
	hr := p.frameFor("s1", frame.TypeHostReady, "")
	if len(hr.InstanceID) < 16 {
		t.Fatalf("instanceId %q: want a long random id", hr.InstanceID)
	}
	want := map[string]bool{"streaming": true, "db": true, "auth": false, "net": false, "openUrl": false}
	for k, v := range want {
		if hr.Capabilities[k] != v {
			t.Errorf("capabilities.%s = %v, want %v (configured: agent, db)", k, hr.Capabilities[k], v)
		}
	}
	if fmt.Sprint(hr.ProtocolVersions) != fmt.Sprint(frame.ProtocolVersions) {
		t.Errorf("protocolVersions %v", hr.ProtocolVersions)
	}

	// The announce is acknowledged with the same host-ready (idempotent).
	p.frame("s1", announce)
	_, i := p.wait(0, waitLimit, func(m msg) bool { return m.f.Type == frame.TypeHostReady })
	ack, _ := p.wait(i, waitLimit, func(m msg) bool { return m.f.Type == frame.TypeHostReady })
	if ack.f.InstanceID != hr.InstanceID {
		t.Errorf("announce-ack instanceId %q, load gave %q", ack.f.InstanceID, hr.InstanceID)
	}
	// A second iframe of the same app, announcing the same appId, is another
	// instance: identity is the iframe, never the appId.
	other := p.start("s2", "todo")
	if other == hr.InstanceID {
		t.Error("two iframes share an instanceId")
	}
	p.frame("s2", announce)
	p.inspected("s2", frame.TypeAppAnnounce, "")
	p.fence()
	mu.Lock()
	defer mu.Unlock()
	if len(announced) != 2 || announced[0] != "todo|test.app|Test App" {
		t.Errorf("OnAnnounce got %q", announced)
	}
}

func TestAppMessageStreamsThenOneTerminal(t *testing.T) {
	h := newHost(t, broker.Options{Agent: mockAgent(0)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "notes")
	p.frame("s1", appMessage(inst, "r1", "summarize"))
	term := p.terminal("s1", "r1")
	if term.OK == nil || !*term.OK || len(term.Data) == 0 {
		t.Fatalf("terminal %+v: want ok data", term)
	}
	p.fence()
	fs := p.frames("s1", "r1")
	if len(fs) < 2 {
		t.Fatalf("want streaming frames before the terminal, got %d frames", len(fs))
	}
	prev := ""
	for i, f := range fs[:len(fs)-1] {
		if f.terminal() || !strings.HasPrefix(f.Text, prev) {
			t.Fatalf("frame %d: %+v: want cumulative streaming text", i, f)
		}
		prev = f.Text
	}
	if !fs[len(fs)-1].terminal() {
		t.Fatal("the last frame is not the terminal")
	}

	// With a responseSchema the data is valid against it.
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":"r2","instanceId":%q,"appId":"x","action":"card",
		"responseSchema":{"type":"object","required":["front","back"],"properties":{"front":{"type":"string"},"back":{"type":"string"}}}}`, inst))
	term = p.terminal("s1", "r2")
	var card struct{ Front, Back *string }
	if err := json.Unmarshal(term.Data, &card); err != nil || card.Front == nil || card.Back == nil {
		t.Fatalf("data %s: want front and back", term.Data)
	}
}

func TestDBThroughRealStore(t *testing.T) {
	st := openStore(t)
	h := newHost(t, broker.Options{DB: broker.Store(st)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "todo")

	p.frame("s1", dbKV(inst, "k1", "kvSet", "prefs", `{"dark":true}`))
	if f := p.terminal("s1", "k1"); f.OK == nil || !*f.OK {
		t.Fatalf("kvSet: %+v", f)
	}
	p.frame("s1", dbKV(inst, "k2", "kvGet", "prefs", ""))
	f := p.terminal("s1", "k2")
	if string(f.Result) != `{"found":true,"value":{"dark":true}}` {
		t.Fatalf("kvGet result %s", f.Result)
	}
	// The namespace is the host's key: a direct read of app "todo" sees it.
	v, found, err := st.KVGet(context.Background(), "todo", "prefs")
	if err != nil || !found || string(v) != `{"dark":true}` {
		t.Fatalf("store.KVGet(todo) = %s %v %v", v, found, err)
	}

	// A large value crosses both ways (db class: 8 MiB), interleaved with a
	// small answer on the same connection.
	bigValue := `"` + strings.Repeat("v", 6<<20) + `"`
	p.frame("s1", dbKV(inst, "big1", "kvSet", "big", bigValue))
	p.terminal("s1", "big1")
	p.frame("s1", dbKV(inst, "big2", "kvGet", "big", ""))
	p.frame("s1", dbKV(inst, "big3", "kvGet", "prefs", ""))
	if f := p.terminal("s1", "big2"); !strings.Contains(string(f.Result), bigValue) {
		t.Fatalf("big kvGet: %d bytes", len(f.Result))
	}
	if f := p.terminal("s1", "big3"); string(f.Result) != `{"found":true,"value":{"dark":true}}` {
		t.Fatalf("small kvGet after a big one: %s", f.Result)
	}
	p.frame("s1", dbKV(inst, "big4", "kvSet", "big", "null")) // deletes: the export below stays small
	p.terminal("s1", "big4")

	exec := func(rid, sql string, params string) frameView {
		p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"exec","sql":%q,"params":%s}`, rid, inst, sql, params))
		return p.terminal("s1", rid)
	}
	if f := exec("e1", "create table t(x)", "[]"); f.OK == nil || !*f.OK || string(f.Result) != `{"columns":[],"rows":[],"changes":0,"lastInsertRowid":0}` {
		t.Fatalf("create: %+v %s", f, f.Result)
	}
	exec("e2", "insert into t values (?)", `[42]`)
	f = exec("e3", "select x from t", "[]")
	var res struct {
		Columns []string
		Rows    [][]any
	}
	if err := json.Unmarshal(f.Result, &res); err != nil || len(res.Rows) != 1 || fmt.Sprint(res.Rows[0][0]) != "42" {
		t.Fatalf("select: %s", f.Result)
	}
	if f := exec("e4", "select * from nowhere", "[]"); f.code() != frame.CodeDBSQLError {
		t.Fatalf("bad SQL: %+v, want DB_SQL_ERROR", f)
	}
	// A result that cannot fit the db frame class (8 MiB).
	if f := exec("e5", "with recursive c(x) as (select 1 union all select x+1 from c where x < 3000) select x, hex(zeroblob(1500)) from c", "[]"); f.code() != frame.CodeDBResultTooLarge {
		t.Fatalf("huge result: %+v, want DB_RESULT_TOO_LARGE", f.Error)
	}

	// export then import round-trips through the frames.
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"x1","instanceId":%q,"op":"export"}`, inst))
	f = p.terminal("s1", "x1")
	var exp struct {
		Data   string
		Bytes  int
		Format string
	}
	if err := json.Unmarshal(f.Result, &exp); err != nil || exp.Format != "sqlite3" || exp.Bytes == 0 {
		t.Fatalf("export: %s", f.Result)
	}
	exec("e6", "delete from t", "[]")
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"i1","instanceId":%q,"op":"import","data":%q}`, inst, exp.Data))
	if f := p.terminal("s1", "i1"); f.OK == nil || !*f.OK {
		t.Fatalf("import: %+v", f)
	}
	if f := exec("e7", "select count(*) from t", "[]"); !strings.Contains(string(f.Result), "[[1]]") {
		t.Fatalf("after import: %s", f.Result)
	}
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"i2","instanceId":%q,"op":"import","data":"bm90IHNxbGl0ZQ=="}`, inst))
	if f := p.terminal("s1", "i2"); f.code() != frame.CodeDBImportInvalid {
		t.Fatalf("bad import: %+v", f.Error)
	}
}

// R1: a frame that fails parsing is answered only with a recovered
// requestId, in the paired response type; R2: unknown types are ignored.
func TestParseFailuresAndIgnoredFrames(t *testing.T) {
	h := newHost(t, broker.Options{Agent: mockAgent(0), DB: broker.Store(openStore(t)), OpenURL: broker.OpenURL(openurl.New(nil, openurl.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")

	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":"m1","instanceId":%q,"appId":"x"}`, inst)) // no action
	if f := p.terminal("s1", "m1"); f.Type != frame.TypeAppResponse || f.code() != frame.CodeMalformed {
		t.Fatalf("missing action: %+v", f)
	}
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"m2","instanceId":%q,"op":"drop"}`, inst))
	if f := p.terminal("s1", "m2"); f.Type != frame.TypeDBResponse || f.code() != frame.CodeMalformed {
		t.Fatalf("bad op: %+v", f)
	}
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":"m3","instanceId":%q,"url":"http://example.com/"}`, inst))
	if f := p.terminal("s1", "m3"); f.Type != frame.TypeOpenURLResult || f.Status != "refused" || !strings.Contains(f.Reason, frame.CodeMalformed) {
		t.Fatalf("http URL: %+v", f)
	}
	p.frame("s1", fmt.Sprintf(`{"v":2,"type":"snug:app-message","requestId":"m4","instanceId":%q,"appId":"x","action":"a"}`, inst))
	if f := p.terminal("s1", "m4"); f.code() != frame.CodeUnsupportedVersion {
		t.Fatalf("v:2: %+v", f)
	}

	// No requestId recovered: rejected without an answer.
	p.frame("s1", `{"v":2,"type":"snug:app-message"}`)
	e, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.T == "inspect" && m.Entry.Dir == "in" && m.Entry.Type == frame.TypeAppMessage && m.Entry.RequestID == ""
	})
	if e.Entry.Verdict != "reject" || e.Entry.Code != frame.CodeUnsupportedVersion {
		t.Fatalf("inspect %+v", e.Entry)
	}
	// R2: an unknown snug:* type and a host→app type from an app are ignored.
	p.frame("s1", `{"v":1,"type":"snug:future-thing","requestId":"m5"}`)
	if e := p.inspected("s1", "snug:future-thing", ""); e.Entry.Verdict != "ignore" {
		t.Fatalf("unknown type: %+v", e.Entry)
	}
	p.frame("s1", `{"v":1,"type":"snug:host-ready","instanceId":"x","protocolVersions":[1],"capabilities":{"streaming":true,"db":true,"auth":true},"theme":{"mode":"dark"}}`)
	if e := p.inspected("s1", frame.TypeHostReady, ""); e.Entry.Verdict != "ignore" {
		t.Fatalf("host-ready from an app: %+v", e.Entry)
	}
	p.fence()
	if n := len(p.frames("s1", "m5")); n != 0 {
		t.Fatalf("an ignored frame was answered (%d frames)", n)
	}
}

// stall counts the requests a stalling agent server received and those
// whose client went away.
type stall struct{ arrived, gone atomic.Int32 }

// waitFor waits until n reaches want (or the wait limit).
func waitFor(t *testing.T, n *atomic.Int32, want int32, what string) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for n.Load() < want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", what, n.Load(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stallingOpenAI is a fake OpenAI-compatible server that sends the SSE
// headers and then nothing until the client goes away. It reads the
// request's body first: net/http notices a client leaving only once the
// body was read to its end, and a client that left before the server read
// it for itself (at WriteHeader) would leave the handler waiting, and
// srv.Close with it, for ever.
func stallingOpenAI(t *testing.T) (url string, st *stall) {
	st = new(stall)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		st.arrived.Add(1)
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			st.gone.Add(1)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		st.gone.Add(1)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", st
}

func stallingAgent(t *testing.T) (broker.AgentHandler, *stall) {
	url, st := stallingOpenAI(t)
	be, err := openai.New(openai.Config{BaseURL: url, Model: "stall"})
	if err != nil {
		t.Fatal(err)
	}
	return broker.Agent(agent.NewBridge(be, agent.Options{})), st
}

func TestAgentHangEndsAtTimeout(t *testing.T) {
	ag, st := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag, Timeout: 300 * time.Millisecond}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	start := time.Now()
	p.frame("s1", appMessage(inst, "r1", "think"))
	f := p.terminal("s1", "r1")
	if f.code() != frame.CodeHostError || !f.Error.Retryable || !strings.Contains(f.Error.Message, "no answer within") {
		t.Fatalf("terminal %+v", f.Error)
	}
	if d := time.Since(start); d < 250*time.Millisecond || d > waitLimit {
		t.Errorf("terminal after %s, want about 300ms", d)
	}
	// The agent connection (if it was made in time) was abandoned, not left
	// hanging.
	waitFor(t, &st.gone, st.arrived.Load(), "stalled agent requests cancelled")
	p.fence()
	if n := len(p.frames("s1", "r1")); n != 1 {
		t.Errorf("%d frames for r1, want exactly the terminal", n)
	}
}

func TestCancelAndSupersede(t *testing.T) {
	ag, st := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")

	p.frame("s1", appMessage(inst, "c1", "think"))
	p.inspected("s1", frame.TypeAppMessage, "c1")
	p.frame("s1", cancelFrame(inst, "c1"))
	if f := p.terminal("s1", "c1"); f.code() != frame.CodeCancelled || f.Error.Retryable {
		t.Fatalf("cancel: %+v", f.Error)
	}

	p.frame("s1", appMessage(inst, "s1", "think"))
	p.frame("s1", appMessage(inst, "s2", "think"))
	p.inspected("s1", frame.TypeAppMessage, "s2")
	p.frame("s1", announce)
	for _, rid := range []string{"s1", "s2"} {
		if f := p.terminal("s1", rid); f.code() != frame.CodeSuperseded {
			t.Fatalf("%s: %+v", rid, f.Error)
		}
	}
	// host-ready comes after the SUPERSEDED terminals, same instance.
	hr, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.f.Type == frame.TypeHostReady && m.f.InstanceID == inst && m.T == "frame"
	})
	_ = hr
	// The superseded agent calls have ended (their handlers' answers, if
	// any, come from those calls), and the reader has handled all before.
	waitFor(t, &st.gone, st.arrived.Load(), "superseded agent calls ended")
	p.fence()
	for _, rid := range []string{"c1", "s1", "s2"} {
		if n := len(p.frames("s1", rid)); n != 1 {
			t.Errorf("%s: %d frames, want exactly one terminal", rid, n)
		}
	}
	// Work after the re-announce is accepted as usual.
	p.frame("s1", cancelFrame(inst, "nothing-in-flight"))
	if e := p.inspected("s1", frame.TypeAppCancel, "nothing-in-flight"); e.Entry.Verdict != "ignore" {
		t.Errorf("cancel of nothing: %+v", e.Entry)
	}
}

func TestDuplicateRequestIDDoesNotDisturbTheOriginal(t *testing.T) {
	h := newHost(t, broker.Options{Agent: mockAgent(40 * time.Millisecond)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "r1", "slow"))
	p.frame("s1", appMessage(inst, "r1", "again")) // in flight
	e := p.inspected("s1", frame.TypeAppMessage, "")
	_, i := p.wait(0, waitLimit, func(m msg) bool { return m.T == "inspect" && m.Entry.Type == frame.TypeAppMessage })
	dup, _ := p.wait(i, waitLimit, func(m msg) bool { return m.T == "inspect" && m.Entry.Type == frame.TypeAppMessage })
	if e.Entry.Verdict != "accept" || dup.Entry.Verdict != "reject" || !strings.Contains(dup.Entry.Message, "duplicate requestId") {
		t.Fatalf("first %+v, duplicate %+v", e.Entry, dup.Entry)
	}
	term := p.terminal("s1", "r1")
	if term.OK == nil || !*term.OK {
		t.Fatalf("the original failed: %+v", term)
	}
	// Already answered: still refused, still silent.
	p.frame("s1", appMessage(inst, "r1", "third"))
	// A malformed frame recovering a used id is not answered either.
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":"r1","instanceId":%q}`, inst))
	p.fence()
	fs := p.frames("s1", "r1")
	terms := 0
	for _, f := range fs {
		if f.terminal() {
			terms++
		}
	}
	if terms != 1 || !fs[len(fs)-1].terminal() {
		t.Fatalf("r1: %d terminals in %d frames, want one, last", terms, len(fs))
	}
}

func TestForgedInstanceID(t *testing.T) {
	ag, _ := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	other := p.start("s2", "a")

	p.frame("s1", appMessage(other, "f1", "x")) // s1 claims s2's instance
	if f := p.terminal("s1", "f1"); f.code() != frame.CodeMalformed || !strings.Contains(f.Error.Message, "instanceId") {
		t.Fatalf("forged: %+v", f.Error)
	}
	if n := len(p.frames("s2", "f1")); n != 0 {
		t.Fatal("the forged request reached the other instance")
	}
	// A cancel with a forged instanceId cancels nothing.
	p.frame("s1", appMessage(inst, "real", "x"))
	p.inspected("s1", frame.TypeAppMessage, "real")
	p.frame("s1", cancelFrame("forged", "real"))
	if e := p.inspected("s1", frame.TypeAppCancel, "real"); e.Entry.Verdict != "reject" {
		t.Fatalf("forged cancel: %+v", e.Entry)
	}
	p.fence()
	if n := len(p.frames("s1", "real")); n != 0 {
		t.Fatalf("the forged cancel ended the request (%d frames)", n)
	}
	p.frame("s1", cancelFrame(inst, "real"))
	if f := p.terminal("s1", "real"); f.code() != frame.CodeCancelled {
		t.Fatalf("real cancel: %+v", f.Error)
	}
}

// Issue 28 item 11: a request for a capability the host does not offer (no
// store: no db) is answered at once with CAPABILITY_ABSENT, not retryable,
// so an app shows its fallback instead of retrying a HOST_ERROR.
func TestAbsentCapabilityIsCapabilityAbsent(t *testing.T) {
	ag, _ := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", dbKV(inst, "k1", "kvGet", "prefs", ""))
	f := p.terminal("s1", "k1")
	if f.code() != frame.CodeCapabilityAbsent || f.Error.Retryable || !strings.Contains(f.Error.Message, "does not offer") {
		t.Fatalf("a db request to a host without db: %+v, want %s, not retryable", f.Error, frame.CodeCapabilityAbsent)
	}
}

// A hostile page past the per-instance limit (the default,
// INSTANCE_MAX_IN_FLIGHT, which the runtime never passes) gets
// TOO_MANY_REQUESTS, retryable with retryAfterMs, for each request over it,
// and nothing of such a request runs: a refused kvSet writes nothing. Once
// an answer frees a place, the next request is accepted.
func TestInFlightLimit(t *testing.T) {
	ag, _ := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag, DB: broker.Store(openStore(t))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	limit := frame.InstanceMaxInFlight
	for i := range limit {
		p.frame("s1", appMessage(inst, fmt.Sprintf("a%d", i), "x"))
	}
	p.frame("s1", dbKV(inst, "over-set", "kvSet", "k", `"refused"`))
	p.frame("s1", appMessage(inst, "over-ask", "x"))
	for _, rid := range []string{"over-set", "over-ask"} {
		f := p.terminal("s1", rid)
		e := f.Error
		if f.code() != frame.CodeTooManyRequests || !e.Retryable || e.RetryAfterMs == nil || *e.RetryAfterMs != int(broker.BusyRetryAfter/time.Millisecond) ||
			!strings.Contains(e.Message, fmt.Sprintf("(limit %d)", limit)) {
			t.Fatalf("%s past the limit: %+v, want TOO_MANY_REQUESTS, retryable, retryAfterMs %v", rid, e, broker.BusyRetryAfter)
		}
	}
	p.frame("s1", cancelFrame(inst, "a0"))
	p.terminal("s1", "a0")
	p.frame("s1", dbKV(inst, "get", "kvGet", "k", ""))
	if f := p.terminal("s1", "get"); f.code() != "" || !strings.Contains(string(f.Result), `"found":false`) {
		t.Fatalf("after a place freed, kvGet of the refused kvSet's key: %+v %s", f.Error, f.Result)
	}
	p.frame("s1", appMessage(inst, "later", "x"))
	if e := p.inspected("s1", frame.TypeAppMessage, "later"); e.Entry.Verdict != "accept" {
		t.Fatalf("a request after a place freed: %+v", e.Entry)
	}
	p.fence()
	if n := len(p.frames("s1", "later")); n != 0 {
		t.Fatalf("the request after a place freed was answered: %d frames", n)
	}
}

func TestHandlerPanicAndNilAnswer(t *testing.T) {
	logs := make(chan string, 4)
	h := newHost(t, broker.Options{
		Logf: func(format string, args ...any) { logs <- fmt.Sprintf(format, args...) },
		Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
			switch m.Action {
			case "nil":
				return nil
			case "nodata":
				return &frame.AppResponse{OK: true, Streaming: new(bool)}
			}
			stream("partial")
			panic("boom")
		}),
	}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "p1", "panic"))
	f := p.terminal("s1", "p1")
	if f.code() != frame.CodeHostError || strings.Contains(f.Error.Message, "boom") {
		t.Fatalf("panic: %+v (the panic value stays on the host)", f.Error)
	}
	if l := <-logs; !strings.Contains(l, "boom") || !strings.Contains(l, "goroutine") {
		t.Fatalf("the host's log: %q, want the panic and its stack", l)
	}
	p.frame("s1", appMessage(inst, "p2", "nil"))
	if f := p.terminal("s1", "p2"); f.code() != frame.CodeHostError {
		t.Fatalf("nil answer: %+v", f.Error)
	}
	// A final answer without data is no valid app-response: replaced.
	p.frame("s1", appMessage(inst, "p3", "nodata"))
	if f := p.terminal("s1", "p3"); f.code() != frame.CodeHostError || !strings.Contains(f.Error.Message, "invalid") {
		t.Fatalf("ok without data: %+v", f.Error)
	}
	if got := p.frames("s1", "p1"); len(got) != 2 || got[0].Text != "partial" {
		t.Fatalf("p1 frames %+v", got)
	}
}

func TestShutdownSendsEveryTerminalFirst(t *testing.T) {
	ag, _ := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	inst2 := p.start("s2", "b")
	for i := 0; i < 5; i++ {
		p.frame("s1", appMessage(inst, fmt.Sprint("x", i), "x"))
		p.frame("s2", appMessage(inst2, fmt.Sprint("y", i), "x"))
	}
	p.inspected("s2", frame.TypeAppMessage, "y4")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.rl.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		for _, sr := range [][2]string{{"s1", fmt.Sprint("x", i)}, {"s2", fmt.Sprint("y", i)}} {
			if f := p.terminal(sr[0], sr[1]); f.code() != frame.CodeCancelled || !strings.Contains(f.Error.Message, "shutting down") {
				t.Fatalf("%s: %+v", sr[1], f.Error)
			}
		}
	}
}

func TestNavigatedInstanceGetsNothingMore(t *testing.T) {
	ag, _ := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "n1", "x"))
	p.inspected("s1", frame.TypeAppMessage, "n1")
	p.load("s1") // second load: the frame navigated
	p.frame("s1", appMessage(inst, "n2", "x"))
	if e := p.inspected("s1", frame.TypeAppMessage, "n2"); e.Entry.Verdict != "ignore" {
		t.Fatalf("frame from a dead instance: %+v", e.Entry)
	}
	p.frame("s1", announce)
	p.fence()
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, m := range p.log {
		if m.T == "frame" && m.Slot == "s1" {
			n++
		}
	}
	if n != 1 { // the first host-ready only
		t.Fatalf("%d frames to s1, want only the first host-ready", n)
	}
}

func TestOpenURLConfirmFlow(t *testing.T) {
	h := newHost(t, broker.Options{OpenURL: broker.OpenURL(openurl.New(relay.Dialogs{}, openurl.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "links")
	ask := func(rid, url string) msg {
		p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":%q,"instanceId":%q,"url":%q}`, rid, inst, url))
		m, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "confirm" && strings.Contains(m.URL, rid) })
		return m
	}
	c := ask("o1", "https://example.com/docs?o1#frag")
	if c.Kind != "open-url" || c.URL != "https://example.com/docs?o1#frag" || c.App != "links" || c.Slot != "s1" {
		t.Fatalf("confirm %+v: want the full URL, the host's app name and the slot", c)
	}
	p.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": "once"})
	if f := p.terminal("s1", "o1"); f.Status != "opened" {
		t.Fatalf("o1: %+v", f)
	}
	c = ask("o2", "https://example.com/o2")
	p.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": "deny"})
	if f := p.terminal("s1", "o2"); f.Status != "declined" {
		t.Fatalf("o2: %+v", f)
	}
}

func TestOpenURLRefusals(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHost(t, broker.Options{OpenURL: broker.OpenURL(openurl.New(nil, openurl.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "links")
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":"u1","instanceId":%q,"url":"https://example.com/"}`, inst))
	if f := p.terminal("s1", "u1"); f.Status != "refused" || f.Reason == "" {
		t.Fatalf("no UI: %+v", f)
	}

	// Rate limit: a Confirmer that always declines, one dialog a minute.
	o := openurl.New(declineAll{}, openurl.Options{PerMinute: 1, Now: func() time.Time { return now }})
	req := &frame.OpenURLRequest{RequestID: "a", InstanceID: inst, URL: "https://example.com/"}
	if r := o.Open(context.Background(), "links", req); r.Status != "declined" {
		t.Fatalf("first: %+v", r)
	}
	if r := o.Open(context.Background(), "links", req); r.Status != "refused" || !strings.Contains(*r.Reason, "rate limit") {
		t.Fatalf("second: %+v", r)
	}
	now = now.Add(61 * time.Second)
	if r := o.Open(context.Background(), "links", req); r.Status != "declined" {
		t.Fatalf("after a minute: %+v", r)
	}
}

type declineAll struct{}

func (declineAll) ConfirmOpen(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
	return openurl.Declined, nil
}

func TestResizeAndThemeEvents(t *testing.T) {
	heights := make(chan int, 4)
	h := newHost(t, broker.Options{OnResize: func(s *broker.Session, height int) { heights <- height }}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-event","instanceId":%q,"event":"resize","data":{"height":480}}`, inst))
	select {
	case got := <-heights:
		if got != 480 {
			t.Fatalf("height %d", got)
		}
	case <-time.After(waitLimit):
		t.Fatal("resize not delivered")
	}
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-event","instanceId":%q,"event":"resize","data":{"height":1e9}}`, inst))
	p.frame("s1", `{"v":1,"type":"snug:app-event","instanceId":"forged","event":"resize","data":{"height":5}}`)
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:app-event","instanceId":%q,"event":"resize","data":{"height":7}}`, inst))
	if got := <-heights; got != 7 {
		t.Fatalf("an invalid or forged resize was delivered: %d", got)
	}

	p.send(map[string]string{"t": "theme", "mode": "dark"})
	ev := p.frameFor("s1", frame.TypeHostEvent, "")
	if ev.Event != frame.EventThemeChange {
		t.Fatalf("event %+v", ev)
	}
	p.start("s2", "a")
	m, _ := p.wait(0, waitLimit, func(m msg) bool { return m.Slot == "s2" && m.f.Type == frame.TypeHostReady })
	if !strings.Contains(string(m.Frame), `"mode":"dark"`) {
		t.Fatalf("host-ready after the toggle: %s", m.Frame)
	}
}

// The inspector sees every frame both ways with its verdict.
func TestInspectEntries(t *testing.T) {
	h := newHost(t, broker.Options{DB: broker.Store(openStore(t))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", dbKV(inst, "k1", "kvGet", "nothing", ""))
	in := p.inspected("s1", frame.TypeDBRequest, "k1")
	if in.Entry.Verdict != "accept" {
		t.Fatalf("in: %+v", in.Entry)
	}
	out, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.T == "inspect" && m.Entry.Dir == "out" && m.Entry.RequestID == "k1"
	})
	if out.Entry.Type != frame.TypeDBResponse || out.Entry.Slot != "s1" {
		t.Fatalf("out: %+v", out.Entry)
	}
}

// An answer that cannot fit its frame's size class becomes the pair's size
// error, never a silent drop (R6).
func TestOversizedAnswers(t *testing.T) {
	big := strings.Repeat("x", frame.MaxDBFrameBytes)
	h := newHost(t, broker.Options{
		Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
			stream(big[:frame.MaxFrameBytes]) // dropped: display-provisional text too large for its frame
			data, _ := json.Marshal(map[string]string{"message": big[:frame.MaxFrameBytes]})
			return &frame.AppResponse{OK: true, Streaming: new(bool), Data: data}
		}),
		DB: broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
			return &frame.DBResponse{OK: true, Result: &frame.DBResult{Data: &big}}
		}),
		Net: broker.NetFunc(func(ctx context.Context, c broker.Call, r *frame.NetRequest) *frame.NetResponse {
			status, body := 200, big[:frame.MaxNetFrameBytes]
			return &frame.NetResponse{OK: true, Status: &status, Headers: map[string]string{}, Body: &body}
		}),
	}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "a1", "x"))
	p.frame("s1", dbKV(inst, "d1", "kvGet", "k", ""))
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:net-request","requestId":"n1","instanceId":%q,"url":"https://example.com/","method":"GET"}`, inst))
	for rid, code := range map[string]string{"a1": frame.CodeHostError, "d1": frame.CodeDBResultTooLarge, "n1": frame.CodeNetSizeExceeded} {
		if f := p.terminal("s1", rid); f.code() != code {
			t.Errorf("%s: %+v, want %s", rid, f.Error, code)
		}
	}
	if n := len(p.frames("s1", "a1")); n != 1 {
		t.Errorf("a1: %d frames: the oversized streaming text went out", n)
	}
}

// The request behind a dialog ends first (app-cancel): the app gets its
// terminal at once and the page is told to drop the dialog.
func TestDialogOutlivedByItsRequest(t *testing.T) {
	h := newHost(t, broker.Options{OpenURL: broker.OpenURL(openurl.New(relay.Dialogs{}, openurl.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "links")
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":"o1","instanceId":%q,"url":"https://example.com/"}`, inst))
	c, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "confirm" })
	p.frame("s1", cancelFrame(inst, "o1"))
	f := p.terminal("s1", "o1")
	if f.Status != frame.StatusRefused || !strings.Contains(f.Reason, frame.CodeCancelled) {
		t.Fatalf("o1: %+v", f)
	}
	p.wait(0, waitLimit, func(m msg) bool { return m.T == "confirm-cancel" && m.ID == c.ID })
	// A late click changes nothing.
	p.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": "once"})
	p.fence()
	if n := len(p.frames("s1", "o1")); n != 1 {
		t.Fatalf("o1: %d frames", n)
	}
}

// Unmount ends the instance like a navigation: its work ends, nothing more
// is sent, and the slot's frames are no longer routed.
func TestUnmount(t *testing.T) {
	ag, st := stallingAgent(t)
	h := newHost(t, broker.Options{Agent: ag}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "u1", "x"))
	waitFor(t, &st.arrived, 1, "agent requests")
	p.unmount("s1")
	waitFor(t, &st.gone, 1, "the agent call of the unmounted instance ended")
	p.frame("s1", appMessage(inst, "u2", "x"))
	p.fence()
	if n := len(p.frames("s1", "u1")) + len(p.frames("s1", "u2")); n != 0 {
		t.Fatalf("%d frames after unmount", n)
	}
}

// A frame over its size class is answered (R6) and the page's connection,
// shared by every app on it, survives.
func TestOversizedFrameFromAnApp(t *testing.T) {
	h := newHost(t, broker.Options{DB: broker.Store(openStore(t)), Agent: mockAgent(0)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	other := p.start("s2", "b")
	p.frame("s1", dbKV(inst, "big", "kvSet", "k", `"`+strings.Repeat("x", frame.MaxDBFrameBytes)+`"`))
	if f := p.terminal("s1", "big"); f.code() != frame.CodeMalformed {
		t.Fatalf("9 MiB db-request: %+v", f.Error)
	}
	p.frame("s1", appMessage(inst, "big2", strings.Repeat("y", frame.MaxFrameBytes)))
	if f := p.terminal("s1", "big2"); f.code() != frame.CodeMalformed {
		t.Fatalf("oversized app-message: %+v", f.Error)
	}
	p.frame("s2", appMessage(other, "after", "x"))
	if f := p.terminal("s2", "after"); f.OK == nil || !*f.OK {
		t.Fatalf("the other app after the big frames: %+v", f)
	}
}

// The relay opens sessions only for a valid slot of an installed app, one
// session per slot; junk from the page is ignored.
func TestRelayMountRules(t *testing.T) {
	h := newHost(t, broker.Options{}, relay.Options{Installed: func(app string) bool { return app == "todo" }})
	p := h.page(t)
	p.send(map[string]any{"t": "nonsense"})
	p.send("not an object")
	p.mount("s/1", "todo")     // bad slot
	p.mount("s2", "elsewhere") // not installed
	p.load("s/1")
	p.load("s2")
	inst := p.start("s3", "todo")
	p.mount("s3", "todo") // the slot is taken: the session stays
	p.frame("s3", announce)
	readies := 0
	p.wait(0, waitLimit, func(m msg) bool {
		if m.T == "frame" && m.Slot == "s3" && m.f.Type == frame.TypeHostReady && m.f.InstanceID == inst {
			readies++
		}
		return readies == 2 // load, then the announce: one session
	})
	p.fence()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.log {
		if m.T == "frame" && m.Slot != "s3" {
			t.Errorf("a frame for %q", m.Slot)
		}
	}
}

// The requestIds an instance used are remembered in a window of the most
// recent RequestIDMemory ids: a reuse of one of them gets no frame on the
// wire (R3/R4), however long the instance lives; an id older than the window
// is forgotten and a reuse of it is answered as a new request. The instance
// is never ended for the number of requests it makes.
func TestRequestIDWindow(t *testing.T) {
	h := newHost(t, broker.Options{Agent: mockAgent(0), RequestIDMemory: 3}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	ask := func(rid string) {
		t.Helper()
		from := p.count()
		p.frame("s1", appMessage(inst, rid, "x"))
		p.wait(from, waitLimit, func(m msg) bool {
			return m.T == "frame" && m.Slot == "s1" && m.f.RequestID == rid && m.f.terminal()
		})
		// The relay queues the request's inspector entry once Receive
		// returns, which may be after the answer went out: wait for it too,
		// or reused below could read it as the reuse's verdict.
		p.wait(from, waitLimit, func(m msg) bool {
			return m.T == "inspect" && m.Entry.Dir == "in" && m.Entry.Slot == "s1" && m.Entry.RequestID == rid
		})
	}
	reused := func(rid string) {
		t.Helper()
		n := len(p.frames("s1", rid))
		from := p.count()
		p.frame("s1", appMessage(inst, rid, "x"))
		e, _ := p.wait(from, waitLimit, func(m msg) bool {
			return m.T == "inspect" && m.Entry.Dir == "in" && m.Entry.Slot == "s1" && m.Entry.RequestID == rid
		})
		if e.Entry.Verdict != "reject" || !strings.Contains(e.Entry.Message, "already answered") {
			t.Fatalf("reuse of %s: %+v", rid, e.Entry)
		}
		p.fence()
		if got := len(p.frames("s1", rid)); got != n {
			t.Fatalf("reuse of %s got %d more frames on the wire", rid, got-n)
		}
	}
	for i := 1; i <= 3; i++ {
		ask(fmt.Sprint("b", i))
	}
	reused("b1") // the window holds b1 b2 b3
	ask("b4")    // b1 is forgotten
	reused("b2")
	reused("b4")
	// Many more ids than the window: the instance lives on.
	for i := 5; i <= 40; i++ {
		ask(fmt.Sprint("b", i))
	}
	reused("b40")
	reused("b38")
	// b1 is long forgotten: the documented residual is a second answer for
	// that id string, as a new request.
	terminals := func() (n int) {
		for _, f := range p.frames("s1", "b1") {
			if f.terminal() {
				n++
			}
		}
		return n
	}
	ask("b1")
	if got := terminals(); got != 2 {
		t.Fatalf("b1 past the window: %d terminals, want 2", got)
	}
	reused("b1")
}

// Host-events reach exactly the instances they are for: visibility the
// page's own, a connection-event or hint every live instance of one app.
func TestHostEventsReachTheirInstances(t *testing.T) {
	h := newHost(t, broker.Options{}, relay.Options{})
	p := h.page(t)
	p.start("a1", "mail")
	p.start("a2", "mail")
	p.start("b1", "notes")
	q := h.page(t)
	q.start("c1", "mail")

	p.send(map[string]any{"t": "visibility", "visible": false})
	for _, slot := range []string{"a1", "a2", "b1"} {
		if ev := p.frameFor(slot, frame.TypeHostEvent, ""); ev.Event != frame.EventVisibility {
			t.Fatalf("%s: %+v", slot, ev)
		}
	}
	hint, err := events.Hint("inbox", "msg/7")
	if err != nil {
		t.Fatal(err)
	}
	h.b.SendToApp("mail", hint)
	for _, pg := range []*page{p, q} {
		for _, slot := range []string{"a1", "a2", "c1"} {
			if pg == q && slot != "c1" || pg == p && slot == "c1" {
				continue
			}
			pg.wait(0, waitLimit, func(m msg) bool { return m.Slot == slot && m.f.Event == frame.EventHint })
		}
	}
	p.fence()
	q.fence()
	var all []msg
	for _, pg := range []*page{p, q} {
		pg.mu.Lock()
		all = append(all, pg.log...)
		pg.mu.Unlock()
	}
	for _, m := range all {
		if m.T == "frame" && ((m.Slot == "b1" && m.f.Event == frame.EventHint) || (m.Slot == "c1" && m.f.Event == frame.EventVisibility)) {
			t.Errorf("%s got %s", m.Slot, m.f.Event)
		}
	}
}

// After the parse-failure budget the instance needs the user's explicit
// reset (the page's {"t":"reset"}); then the agent is asked again.
func TestParseFailureBudgetAndReset(t *testing.T) {
	var calls atomic.Int32
	prose := agent.BackendFunc(func(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
		calls.Add(1)
		return "Sure! Here is what I think, in words.", nil
	})
	h := newHost(t, broker.Options{Agent: broker.Agent(agent.NewBridge(prose, agent.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	ask := func(rid string) frameView {
		p.frame("s1", appMessage(inst, rid, "x"))
		return p.terminal("s1", rid)
	}
	for i := 1; i <= frame.ParseFailureBudget; i++ {
		if f := ask(fmt.Sprint("p", i)); f.code() != frame.CodeParseFailed {
			t.Fatalf("p%d: %+v", i, f.Error)
		}
	}
	before := calls.Load()
	if f := ask("p-over"); f.code() != frame.CodeParseFailed || calls.Load() != before {
		t.Fatalf("over budget: %+v, agent called %d more times", f.Error, calls.Load()-before)
	}
	p.send(map[string]string{"t": "reset", "slot": "s1"})
	m, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "inspect" && m.Entry.Message == "parse-failure budget reset" })
	if m.Entry.Verdict != "accept" || m.Entry.Type != "reset" || m.Entry.Slot != "s1" {
		t.Fatalf("reset: %+v, want an accepted entry of type reset for s1", m.Entry)
	}
	ask("p-after")
	if calls.Load() != before+1 {
		t.Fatal("the agent was not asked after the reset")
	}
}

// openAIServer speaks the OpenAI chat-completions SSE format on loopback:
// the reply arrives in chunks; status, when not 200, is the whole answer.
func openAIServer(t *testing.T, status int, chunks ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"upstream down"}}`, status)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			delta, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion.chunk",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": c}, "finish_reason": nil}},
			})
			fmt.Fprintf(w, "data: %s\n\n", delta)
			w.(http.Flusher).Flush()
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

func openAIAgent(t *testing.T, url string) broker.AgentHandler {
	be, err := openai.New(openai.Config{BaseURL: url, Model: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return broker.Agent(agent.NewBridge(be, agent.Options{}))
}

// The real bridge over a real SSE stream: cumulative text, then the parsed
// object; an agent that answers 500 is NETWORK_ERROR (retryable).
func TestOpenAIStreamThroughBroker(t *testing.T) {
	h := newHost(t, broker.Options{Agent: openAIAgent(t, openAIServer(t, 200, `Here: {"mess`, `age":"hi`, `"} done`))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "o1", "greet"))
	f := p.terminal("s1", "o1")
	if string(f.Data) != `{"message":"hi"}` {
		t.Fatalf("data %s (%+v)", f.Data, f.Error)
	}
	fs := p.frames("s1", "o1")
	if len(fs) < 2 || fs[len(fs)-2].Text != `Here: {"message":"hi"} done` {
		t.Fatalf("streaming frames %+v", fs)
	}

	h2 := newHost(t, broker.Options{Agent: openAIAgent(t, openAIServer(t, 500))}, relay.Options{})
	p2 := h2.page(t)
	inst2 := p2.start("s1", "a")
	p2.frame("s1", appMessage(inst2, "o2", "greet"))
	if f := p2.terminal("s1", "o2"); f.code() != frame.CodeNetworkError || !f.Error.Retryable {
		t.Fatalf("500: %+v", f.Error)
	}
}

// Identity is (connection, slot): the same slot name on two pages is two
// instances, and one page cannot answer another page's dialog.
func TestPagesAreSeparate(t *testing.T) {
	h := newHost(t, broker.Options{Agent: mockAgent(0), OpenURL: broker.OpenURL(openurl.New(relay.Dialogs{}, openurl.Options{}))}, relay.Options{})
	a, b := h.page(t), h.page(t)
	ia := a.start("s1", "links")
	ib := b.start("s1", "links")
	if ia == ib {
		t.Fatal("two pages' s1 share an instance")
	}
	// b's s1 cannot use a's instance, and a's request is answered to a only.
	b.frame("s1", appMessage(ia, "x1", "x"))
	if f := b.terminal("s1", "x1"); f.code() != frame.CodeMalformed {
		t.Fatalf("cross-page instanceId: %+v", f.Error)
	}
	a.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":"o1","instanceId":%q,"url":"https://example.com/a"}`, ia))
	c, _ := a.wait(0, waitLimit, func(m msg) bool { return m.T == "confirm" })
	b.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": "once"}) // the other page
	b.fence()
	// a's own answer, after b's was read: the request answers once, so had
	// b's decided it, its first terminal would be "opened", not this one.
	a.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": "deny"})
	if f := a.terminal("s1", "o1"); f.Status != frame.StatusDeclined {
		t.Fatalf("o1: %+v (another page's answer decided it?)", f)
	}
	a.fence()
	if n := len(a.frames("s1", "o1")); n != 1 {
		t.Fatalf("o1: %d frames, want its one terminal", n)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, m := range b.log {
		if m.T == "confirm" || (m.T == "frame" && m.f.RequestID == "o1") {
			t.Fatalf("page b saw page a's request: %+v", m)
		}
	}
}
