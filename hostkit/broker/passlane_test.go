package broker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// TestPassLaneRunsTheNextRequest: a db handler that calls PassLane lets the
// next request of its database run while it still waits (what a replicated
// host does between a write's commit and its upload), and each request
// still runs once, in the order sent: the third request, queued behind the
// second, is not handed the lane a second time when the first handler
// returns.
func TestPassLaneRunsTheNextRequest(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var ran []string
	db := broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
		mu.Lock()
		ran = append(ran, c.RequestID)
		mu.Unlock()
		broker.PassLane(ctx)
		broker.PassLane(ctx) // a second call does nothing
		switch c.RequestID {
		case "w1":
			<-release
		case "w2":
			time.Sleep(50 * time.Millisecond) // w3 waits behind it meanwhile
		}
		return &frame.DBResponse{OK: true, Result: &frame.DBResult{}}
	})
	h := newHost(t, broker.Options{DB: db}, relay.Options{NoInspect: true})
	p := h.page(t)
	inst := p.start("s", "a")
	for _, rid := range []string{"w1", "w2", "w3"} {
		p.frame("s", execFrame(inst, rid, "INSERT INTO t VALUES (1)"))
	}
	for _, rid := range []string{"w2", "w3"} {
		if err := okAnswer(p.terminal("s", rid)); err != nil {
			t.Fatalf("%s while w1 waits: %v", rid, err)
		}
	}
	close(release)
	if err := okAnswer(p.terminal("s", "w1")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(ran) != "[w1 w2 w3]" {
		t.Fatalf("the handler ran %v, want [w1 w2 w3], each once", ran)
	}
}

// TestPassLaneKeepsTheOrder is the order property (see
// TestDBRequestsTakeEffectInOrder) over a handler that passes the lane as
// soon as the store answered and then waits a random moment before it
// returns, so answers go out in any order: every read still sees every
// write sent before it, and no write is overtaken by an earlier one.
func TestPassLaneKeepsTheOrder(t *testing.T) {
	st := broker.Store(openStore(t))
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	var mu sync.Mutex
	waits := rand.New(rand.NewPCG(seed, 2))
	db := broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
		resp := st.DBRequest(ctx, c, r)
		broker.PassLane(ctx)
		mu.Lock()
		d := time.Duration(waits.IntN(2000)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
		return resp
	})
	h := newHost(t, broker.Options{DB: db, MaxInFlight: 1024}, relay.Options{NoInspect: true})
	p := h.page(t)
	slots := []string{"s0", "s1", "s2"}
	inst := map[string]string{}
	for _, s := range slots {
		inst[s] = p.start(s, "a")
	}
	for i, sql := range []string{"CREATE TABLE c(id INTEGER PRIMARY KEY, n INTEGER NOT NULL)", "INSERT INTO c VALUES (1, 0)"} {
		rid := fmt.Sprint("setup", i)
		p.frame("s0", execFrame(inst["s0"], rid, sql))
		if err := okAnswer(p.terminal("s0", rid)); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	g := opGen{slots: slots, inst: inst, prefix: "k", row: 1}
	model, seq := dbModel{kv: map[string]string{}}, 0
	for round := range 4 {
		if err := burst(t, p, g, rng, &model, &seq, 100); err != nil {
			t.Fatalf("round %d, %v (seed %d)", round, err, seed)
		}
	}
}
