package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/store"
)

// Issue 11, item 3: one app-message pinned a core for minutes. These send
// the attack frames through the real relay and broker to the host's real
// agent bridge (the offline agent, the default) and store.

func appMessageWithSchema(inst, rid, schema string) string {
	return fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":%q,"instanceId":%q,"appId":"test.app","action":"bomb","responseSchema":%s}`,
		rid, inst, schema)
}

// allOfBomb is the frame: 20,000 empty subschemas (6.2 s each to
// compile, not stoppable).
func allOfBomb(n int) string {
	return `{"allOf":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`
}

// refChain is a small schema whose check of any value makes 2^depth
// evaluations (allOf: every branch is checked, valid or not; anyOf would
// stop at the first branch a valid value matches).
func refChain(depth int) string {
	defs := []string{`"l0":{"type":"string"}`}
	for i := 1; i <= depth; i++ {
		defs = append(defs, fmt.Sprintf(`"l%d":{"allOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"$defs":{%s},"type":"object","required":["a"],"properties":{"a":{"$ref":"#/$defs/l%d"}}}`, strings.Join(defs, ","), depth)
}

func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestSchemaBombFramesAreRefusedAtOnce: six frames of the schema are
// answered MALFORMED, naming the limit, for a fraction of a second of CPU.
func TestSchemaBombFramesAreRefusedAtOnce(t *testing.T) {
	h := newHost(t, broker.Options{Agent: broker.Agent(agent.NewBridge(offline.New(offline.Options{}), agent.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "notes")
	heap0, cpu0 := heapInUse(), cpuTime()
	start := time.Now()
	for i := range 6 {
		p.frame("s1", appMessageWithSchema(inst, fmt.Sprintf("b%d", i), allOfBomb(20000)))
	}
	for i := range 6 {
		f := p.terminal("s1", fmt.Sprintf("b%d", i))
		if f.code() != frame.CodeMalformed || !strings.Contains(f.Error.Message, "more than") || f.Error.Retryable {
			t.Fatalf("b%d: %+v, want MALFORMED naming the limit", i, f.Error)
		}
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	t.Logf("six frames answered after %s, %s of CPU, heap in use %d → %d KiB", el, cpu, heap0>>10, heapInUse()>>10)
	if cpu > 2*time.Second {
		t.Errorf("the six frames cost %s of CPU", cpu)
	}
}

// TestLeavingEndsSchemaWork: six frames whose schema makes checking any
// value exponential keep the host busy only while their page is there: when
// it goes, their work stops, and the broker's shutdown finds no handler
// still running.
func TestLeavingEndsSchemaWork(t *testing.T) {
	h := newHost(t, broker.Options{Agent: broker.Agent(agent.NewBridge(offline.New(offline.Options{}), agent.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "notes")
	cpu0 := cpuTime()
	for i := range 6 {
		p.frame("s1", appMessageWithSchema(inst, fmt.Sprintf("e%d", i), refChain(40)))
	}
	for i := range 6 {
		p.inspected("s1", "snug:app-message", fmt.Sprintf("e%d", i))
	}
	p.ws.Close(websocket.StatusNormalClosure, "the user closed the tab")
	left := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := h.b.Shutdown(ctx); err != nil {
		t.Fatalf("handlers still running %s after the page left: %v", time.Since(left), err)
	}
	t.Logf("every handler ended %s after the page left; %s of CPU in all", time.Since(left), cpuTime()-cpu0)
}

// TestSchemaWorkIsBoundedWhileThePageStays: the same frames with the page
// still there are answered PARSE_FAILED within the validation budget (the
// offline agent's attempt cannot be checked), each in bounded time.
func TestSchemaWorkIsBoundedWhileThePageStays(t *testing.T) {
	h := newHost(t, broker.Options{Agent: broker.Agent(agent.NewBridge(offline.New(offline.Options{}), agent.Options{}))}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "notes")
	cpu0 := cpuTime()
	start := time.Now()
	for i := range 2 {
		p.frame("s1", appMessageWithSchema(inst, fmt.Sprintf("w%d", i), refChain(40)))
	}
	for i := range 2 {
		f := p.terminal("s1", fmt.Sprintf("w%d", i))
		if f.code() != frame.CodeParseFailed {
			t.Fatalf("w%d: %+v, want PARSE_FAILED", i, f.Error)
		}
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	t.Logf("two frames answered after %s, %s of CPU", el, cpu)
	if cpu > 2*(agent.MaxValidationTime+time.Second) {
		t.Errorf("two frames cost %s of CPU", cpu)
	}
}

// Issue 11, item 6, through the broker: one SQL call that would run for
// minutes is DB_TIMEOUT at the limit, another app is answered meanwhile, and
// the page leaving ends it.
func TestSQLBombThroughBroker(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{StatementTimeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := newHost(t, broker.Options{DB: broker.Store(st)}, relay.Options{})
	p := h.page(t)
	a := p.start("s1", "notes")
	b := p.start("s2", "other")
	// LIKE tries the 1,000-byte pattern at each of 4,000,000 offsets: seconds.
	bomb := "SELECT replace(hex(zeroblob(2000000)),'0','a') LIKE '%' || replace(hex(zeroblob(500)),'0','a') || 'b'"
	exec := func(inst, rid, sql string) string {
		q, _ := json.Marshal(sql)
		return fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"exec","sql":%s,"params":[]}`, rid, inst, q)
	}
	cpu0 := cpuTime()
	start := time.Now()
	p.frame("s1", exec(a, "q1", bomb))
	p.inspected("s1", "snug:db-request", "q1")
	p.frame("s2", exec(b, "q2", "SELECT 1"))
	if f := p.terminal("s2", "q2"); f.OK == nil || !*f.OK {
		t.Fatalf("app b: %+v", f.Error)
	}
	if el := time.Since(start); el > 400*time.Millisecond {
		t.Logf("app b answered after %s (a loaded machine?)", el)
	}
	f := p.terminal("s1", "q1")
	el := time.Since(start)
	if f.code() != frame.CodeDBTimeout {
		t.Fatalf("q1: %+v, want DB_TIMEOUT", f.Error)
	}
	t.Logf("DB_TIMEOUT after %s, %s of CPU", el, cpuTime()-cpu0)
	if el > 500*time.Millisecond+1500*time.Millisecond {
		t.Errorf("answered after %s, limit 500ms", el)
	}
	p.frame("s1", exec(a, "q3", "SELECT 2"))
	if f := p.terminal("s1", "q3"); f.OK == nil || !*f.OK {
		t.Fatalf("app a's next request: %+v", f.Error)
	}
}

// TestShutdownDuringSQLBomb: the host shutting down (Ctrl-C in serve) while
// an app's SQL call is stuck in one builtin ends that call within about a
// second: the broker's shutdown finds no handler still running.
func TestShutdownDuringSQLBomb(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, broker.Options{DB: broker.Store(st)}, relay.Options{})
	p := h.page(t)
	a := p.start("s1", "notes")
	q, _ := json.Marshal("SELECT replace(hex(zeroblob(4000000)),'0','a') LIKE '%' || replace(hex(zeroblob(500)),'0','a') || 'b'")
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"q1","instanceId":%q,"op":"exec","sql":%s,"params":[]}`, a, q))
	p.inspected("s1", "snug:db-request", "q1")
	// Wait until the call is well inside LIKE: building its two strings
	// takes a few milliseconds of CPU, the comparisons many seconds.
	for c0, give := cpuTime(), time.Now().Add(30*time.Second); cpuTime()-c0 < 300*time.Millisecond; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(give) {
			t.Fatal("the statement never got busy")
		}
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := h.b.Shutdown(ctx); err != nil {
		t.Fatalf("broker shutdown: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatalf("store close: %v", err)
	}
	el := time.Since(start)
	t.Logf("broker and store shut down in %s", el)
	if el > 1500*time.Millisecond {
		t.Errorf("shutdown took %s", el)
	}
}
