package broker_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/store"
)

// A kvGet is answered on the page's read loop only when the app's database
// is free; behind a slow query it waits on a worker instead, so the read
// loop goes on reading: an app-cancel sent after it still stops the query
// at once (not at the statement's 60 s limit, past the test's wait), and
// the kvGet gets its answer once the database is free.
func TestKVGetBehindASlowQueryLeavesAppCancelWorking(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := newHost(t, broker.Options{DB: broker.Store(st)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s", "app")
	p.frame("s", dbKV(inst, "set", "kvSet", "k", `{"n":1}`))
	if f := p.terminal("s", "set"); f.code() != "" {
		t.Fatalf("kvSet failed: %s", f.code())
	}
	for i := range 3 {
		slow, get := fmt.Sprintf("slow%d", i), fmt.Sprintf("get%d", i)
		p.frame("s", fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"exec","sql":"WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r"}`, slow, inst))
		p.inspected("s", "", slow)
		p.frame("s", dbKV(inst, get, "kvGet", "k", ""))
		p.frame("s", cancelFrame(inst, slow))
		if f := p.terminal("s", slow); f.code() != frame.CodeCancelled {
			t.Fatalf("the slow query ended %q, want %s", f.code(), frame.CodeCancelled)
		}
		f := p.terminal("s", get)
		if f.code() != "" || string(f.Result) != `{"found":true,"value":{"n":1}}` {
			t.Fatalf("kvGet behind the slow query: %s %s", f.code(), f.Result)
		}
	}
}

// The read loop's kvGet is still one request under the latch: a broker
// shutting down refuses it like any other (CANCELLED), and a duplicate
// requestId of one just answered at once gets nothing.
func TestKVGetAtOnceKeepsTheRequestRules(t *testing.T) {
	st := openStore(t)
	if err := st.KVSet(context.Background(), "app", "k", []byte(`"v"`)); err != nil {
		t.Fatal(err)
	}
	h := newHost(t, broker.Options{DB: broker.Store(st)}, relay.Options{})
	p := h.page(t)
	inst := p.start("s", "app")
	p.frame("s", dbKV(inst, "g1", "kvGet", "k", ""))
	if f := p.terminal("s", "g1"); string(f.Result) != `{"found":true,"value":"v"}` {
		t.Fatalf("kvGet: %s", f.Result)
	}
	p.frame("s", dbKV(inst, "g1", "kvGet", "k", ""))
	if v := p.inspected("s", "", "g1"); v.Entry.Verdict != "accept" {
		t.Fatalf("first kvGet's entry: %+v", v.Entry)
	}
	p.frame("s", dbKV(inst, "g2", "kvGet", "k", ""))
	p.terminal("s", "g2")
	if n := len(p.frames("s", "g1")); n != 1 {
		t.Fatalf("requestId g1 got %d frames, want 1", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	p.frame("s", dbKV(inst, "g3", "kvGet", "k", ""))
	if f := p.terminal("s", "g3"); f.code() != frame.CodeCancelled {
		t.Fatalf("kvGet after Shutdown: %q", f.code())
	}
}
