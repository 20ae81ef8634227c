package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// scriptedAgent is a fake agent whose behaviour the request's action names:
// it answers, streams, fails, panics, answers nothing, or hangs until the
// broker ends the request (and then still tries to stream and answer).
func scriptedAgent() broker.AgentHandler {
	return broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
		ok := &frame.AppResponse{RequestID: m.RequestID, OK: true, Streaming: new(bool), Data: json.RawMessage(`{"message":"ok"}`)}
		switch m.Action {
		case "stream":
			stream("a")
			stream("ab")
			return ok
		case "slow":
			select {
			case <-time.After(time.Duration(len(m.RequestID)%3) * time.Millisecond):
			case <-ctx.Done():
			}
			stream("late?")
			return ok
		case "err":
			return &frame.AppResponse{RequestID: m.RequestID, Error: frame.NewError(frame.CodeNetworkError, "agent unreachable")}
		case "panic":
			panic("agent crashed")
		case "nil":
			return nil
		case "hang":
			<-ctx.Done()
			stream("after the end")
			return ok
		}
		return ok
	})
}

func scriptedDB() broker.DBHandler {
	return broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
		key := ""
		if r.Key != nil {
			key = *r.Key
		}
		switch key {
		case "hang":
			<-ctx.Done()
		case "panic":
			panic("db crashed")
		}
		found := false
		return &frame.DBResponse{RequestID: r.RequestID, OK: true, Result: &frame.DBResult{Found: &found, Value: json.RawMessage("null")}}
	})
}

// slotModel is what the test knows it sent to one slot.
type slotModel struct {
	name    string
	inst    string
	fresh   []string // ids that must get exactly one terminal (unless the slot died); resent ids get nothing more
	dead    bool
	deathAt int // the marker host-ready number after which the slot gets nothing
}

// TestR3Property drives thousands of random interleavings of requests,
// duplicates, cancels, re-announces, navigations, unmounts, forged and
// malformed frames, agent failures, panics and hangs, timeouts and a
// shutdown through the real relay, and checks on the wire: every accepted
// requestId gets exactly one terminal frame and nothing after it, a
// duplicate gets nothing, and a dead instance gets nothing after its death.
// R3_SEED=n reruns one round.
func TestR3Property(t *testing.T) {
	rounds, scenarios := 24, 90 // 2160 scenarios
	var seeds []uint64
	if s := os.Getenv("R3_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		seeds = []uint64{n}
	} else {
		for i := range rounds {
			seeds = append(seeds, uint64(1000+i))
		}
	}
	start := time.Now()
	total := 0
	for _, seed := range seeds {
		total += r3Round(t, seed, scenarios)
		if t.Failed() {
			t.Fatalf("seed %d failed (rerun with R3_SEED=%d)", seed, seed)
		}
	}
	t.Logf("%d rounds, %d scenarios, %d requests in %s", len(seeds), len(seeds)*scenarios, total, time.Since(start).Round(time.Millisecond))
}

func r3Round(t *testing.T, seed uint64, scenarios int) int {
	rng := rand.New(rand.NewPCG(seed, seed*7919))
	h := newHost(t, broker.Options{
		Agent:       scriptedAgent(),
		DB:          scriptedDB(),
		MaxInFlight: 4,
		Timeout:     time.Duration(30+rng.IntN(120)) * time.Millisecond,
	}, relay.Options{})
	p := h.page(t)
	p.start("m", "marker")
	markers := 1

	slots := make([]*slotModel, scenarios)
	for i := range slots {
		slots[i] = &slotModel{name: "s" + strconv.Itoa(i)}
		p.mount(slots[i].name, "app"+strconv.Itoa(i%5))
		p.load(slots[i].name)
	}
	for _, s := range slots {
		s.inst = p.frameFor(s.name, frame.TypeHostReady, "").InstanceID
	}

	actions := []string{"ok", "stream", "slow", "err", "panic", "nil", "hang", "hang"}
	ops := scenarios * 12
	shutdownAt := -1
	if rng.IntN(3) > 0 {
		shutdownAt = rng.IntN(ops)
	}
	shutdownDone := make(chan error, 1)
	next := 0
	requests := 0
	for op := 0; op < ops; op++ {
		if op == shutdownAt {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
				defer cancel()
				shutdownDone <- h.b.Shutdown(ctx)
			}()
		}
		s := slots[rng.IntN(len(slots))]
		if s.dead {
			continue
		}
		switch r := rng.IntN(100); {
		case r < 40: // a new request
			next++
			requests++
			rid := "r" + strconv.Itoa(next)
			if rng.IntN(4) == 0 {
				key := []string{"k", "hang", "panic"}[rng.IntN(3)]
				p.frame(s.name, dbKV(s.inst, rid, "kvGet", key, ""))
			} else {
				p.frame(s.name, appMessage(s.inst, rid, actions[rng.IntN(len(actions))]))
			}
			s.fresh = append(s.fresh, rid)
		case r < 50: // a duplicate of an id this slot used
			if len(s.fresh) > 0 {
				rid := s.fresh[rng.IntN(len(s.fresh))]
				p.frame(s.name, appMessage(s.inst, rid, "ok"))
			}
		case r < 65: // cancel one of them (maybe long finished)
			if len(s.fresh) > 0 {
				p.frame(s.name, cancelFrame(s.inst, s.fresh[rng.IntN(len(s.fresh))]))
			}
		case r < 71:
			p.frame(s.name, announce)
		case r < 74: // forged instanceId: answered MALFORMED, once
			next++
			rid := "f" + strconv.Itoa(next)
			p.frame(s.name, appMessage(s.inst+"x", rid, "ok"))
			s.fresh = append(s.fresh, rid)
		case r < 77: // malformed with a recovered id: fresh, or reused (silent)
			next++
			rid := "x" + strconv.Itoa(next)
			if len(s.fresh) > 0 && rng.IntN(2) == 0 {
				rid = s.fresh[rng.IntN(len(s.fresh))]
			} else {
				s.fresh = append(s.fresh, rid)
			}
			p.frame(s.name, fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"nope"}`, rid, s.inst))
		case r < 79: // the frame navigates
			p.load(s.name)
			s.dead = true
		case r < 80: // the page removes the frame
			p.unmount(s.name)
			s.dead = true
		case r < 90:
			time.Sleep(time.Duration(rng.IntN(300)) * time.Microsecond)
		default:
			// nothing: let the handlers race the next frames
		}
		if s.dead && s.deathAt == 0 {
			p.frame("m", announce) // a marker: its host-ready follows the kill on the wire
			markers++
			s.deathAt = markers
		}
	}
	if shutdownAt >= 0 {
		if err := <-shutdownDone; err != nil {
			t.Errorf("shutdown: %v", err)
		}
	}
	// Let the host read everything sent so far: a marker's host-ready comes
	// back only after every earlier message was handled.
	p.frame("m", announce)
	markers++
	seenMarkers := 0
	p.wait(0, waitLimit, func(m msg) bool {
		if m.Slot == "m" && m.f.Type == frame.TypeHostReady {
			seenMarkers++
		}
		return seenMarkers == markers
	})

	// End of the round: shutdown (again) ends whatever is still in flight,
	// then the relay flushes and closes; the page's log is then complete.
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := h.b.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := h.rl.Close(ctx); err != nil {
		t.Errorf("relay close: %v", err)
	}
	p.mu.Lock()
	for p.err == nil {
		p.cond.Wait()
	}
	log := p.log
	p.mu.Unlock()
	checkR3(t, seed, log, slots)
	return requests
}

func checkR3(t *testing.T, seed uint64, log []msg, slots []*slotModel) {
	type seen struct {
		frames    int
		terminals int
		afterTerm int
	}
	bySlot := map[string]map[string]*seen{}
	markerHR := 0
	markerAt := map[int]int{} // marker number → log index
	for i, m := range log {
		if m.T != "frame" {
			continue
		}
		if m.Slot == "m" && m.f.Type == frame.TypeHostReady {
			markerHR++
			markerAt[markerHR] = i
			continue
		}
		if m.f.RequestID == "" {
			continue
		}
		ids := bySlot[m.Slot]
		if ids == nil {
			ids = map[string]*seen{}
			bySlot[m.Slot] = ids
		}
		s := ids[m.f.RequestID]
		if s == nil {
			s = &seen{}
			ids[m.f.RequestID] = s
		}
		s.frames++
		if s.terminals > 0 {
			s.afterTerm++
		}
		if m.f.terminal() {
			s.terminals++
		}
	}
	for _, sl := range slots {
		if !sl.dead {
			continue
		}
		cut, ok := markerAt[sl.deathAt]
		if !ok {
			t.Errorf("seed %d: marker %d missing", seed, sl.deathAt)
			continue
		}
		for i := cut + 1; i < len(log); i++ {
			if m := log[i]; m.T == "frame" && m.Slot == sl.name {
				t.Errorf("seed %d: %s got a frame after it died: %s", seed, sl.name, m.Frame)
			}
		}
	}
	for _, sl := range slots {
		ids := bySlot[sl.name]
		for _, rid := range sl.fresh {
			s := ids[rid]
			if s == nil {
				s = &seen{}
			}
			switch {
			case s.terminals > 1:
				t.Errorf("seed %d: %s %s: %d terminal frames", seed, sl.name, rid, s.terminals)
			case s.afterTerm > 0:
				t.Errorf("seed %d: %s %s: %d frames after the terminal", seed, sl.name, rid, s.afterTerm)
			case s.terminals == 0 && !sl.dead:
				t.Errorf("seed %d: %s %s: no terminal frame (%d frames)", seed, sl.name, rid, s.frames)
			}
		}
	}
}

// An error answer that says streaming:false, as R3 allows (ok:false is
// terminal whatever streaming says), reaches the app with the handler's
// code, message and retryable flag, not HOST_ERROR: data is required only
// of ok:true, streaming:false (issue 26 item 10).
func TestErrorAnswerWithStreamingFalseKeepsItsCode(t *testing.T) {
	h := newHost(t, broker.Options{
		Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
			return &frame.AppResponse{OK: false, Streaming: new(bool), Error: frame.NewError(frame.CodeNetworkError, "the agent is unreachable")}
		}),
	}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.frame("s1", appMessage(inst, "e1", "go"))
	f := p.terminal("s1", "e1")
	if f.code() != frame.CodeNetworkError || f.Error.Message != "the agent is unreachable" || !f.Error.Retryable {
		t.Fatalf("terminal %+v %+v, want the handler's %s, retryable", f, f.Error, frame.CodeNetworkError)
	}
	if f.Streaming == nil || *f.Streaming || f.OK == nil || *f.OK {
		t.Errorf("terminal ok=%v streaming=%v, want the handler's ok:false, streaming:false", f.OK, f.Streaming)
	}
}
