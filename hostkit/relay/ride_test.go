package relay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
	"github.com/snuggen/snuggen/hostkit/store"
)

// inspectRow is an inspector row as the page reads it.
type inspectRow struct {
	T     string `json:"t"`
	Entry struct {
		Dir, Slot, Type, RequestID, Verdict, Code string
	} `json:"entry"`
}

// rowOf decodes the inspector row among the page's raw messages; ok false
// for any other message.
func rowOf(raw []byte) (r inspectRow, ok bool) {
	if json.Unmarshal(raw, &r) != nil || r.T != "inspect" {
		return r, false
	}
	return r, true
}

// checkRowsInOrder reads what the page got for the kvGets k0…k(n-1) of each
// slot: every request shows exactly once as its row in, its answer and its
// row out, in that order, and the rows in come in the order the requests
// were sent (requests sent without waiting may be answered after later
// ones arrive, and in any order).
func checkRowsInOrder(t *testing.T, p *slowPage, slots []string, n int) {
	t.Helper()
	p.mu.Lock()
	raw := p.raw
	p.mu.Unlock()
	type key struct{ slot, rid string }
	seen := map[key]string{} // what of the request came so far
	nextIn := map[string]int{}
	for i, data := range raw {
		var k key
		var what string
		if r, ok := rowOf(data); ok {
			if r.Entry.Type != frame.TypeDBRequest && r.Entry.Type != frame.TypeDBResponse {
				continue // host-ready's rows
			}
			k, what = key{r.Entry.Slot, r.Entry.RequestID}, "row "+r.Entry.Dir
		} else {
			var m relayMsg
			if json.Unmarshal(data, &m) != nil || m.T != "frame" {
				continue
			}
			f, err := frame.Parse(m.Frame)
			if _, ok := f.(*frame.DBResponse); !ok || err != nil {
				continue
			}
			k, what = key{m.Slot, frame.RequestIDOf(f)}, "answer"
		}
		want := map[string]string{"": "row in", "row in": "answer", "answer": "row out"}[seen[k]]
		if what != want {
			t.Fatalf("message %d: %s's %s of %s after its %q, want its %s", i, k.slot, what, k.rid, seen[k], want)
		}
		if what == "row in" {
			if wantRid := fmt.Sprintf("k%d", nextIn[k.slot]); k.rid != wantRid {
				t.Fatalf("message %d: %s's row in of %s, want the row in of %s", i, k.slot, k.rid, wantRid)
			}
			nextIn[k.slot]++
		}
		seen[k] = what
	}
	for _, s := range slots {
		for i := range n {
			if got := seen[key{s, fmt.Sprintf("k%d", i)}]; got != "row out" {
				t.Fatalf("%s: k%d ended at its %q, want its row out", s, i, got)
			}
		}
	}
}

// waitRaw waits until match holds for a message the page read, failing
// when the connection ends first.
func (p *slowPage) waitRaw(what string, match func([]byte) bool) {
	p.t.Helper()
	stop := context.AfterFunc(p.ctx, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := 0; ; p.cond.Wait() {
		for ; i < len(p.raw); i++ {
			if match(p.raw[i]) {
				return
			}
		}
		if p.closedErr != nil || p.ctx.Err() != nil {
			p.t.Fatalf("waiting for %s: the connection ended (%v) after %d messages", what, p.closedErr, len(p.raw))
		}
	}
}

func kvGet(slot, inst, rid string) string {
	return fmt.Sprintf(`{"t":"frame","slot":%q,"frame":{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"kvGet","key":"k"}}`, slot, rid, inst)
}

// The inspector shows every frame in order, whatever answers it and however
// fast the page reads: for each request its row in, its answer, its row
// out. An accepted request's row waits in the queue for its answer and
// goes out with it; a request answered at once (here: no database, so the
// broker refuses it while the relay handles the frame) has its answer
// queued before the relay has the request's verdict, and the row still
// goes first. Two apps send hundreds of requests without waiting, while the
// page reads slowly, then at full speed.
func TestInspectorRowsInOrderWhateverAnswers(t *testing.T) {
	for _, withDB := range []bool{true, false} {
		t.Run(fmt.Sprintf("db=%v", withDB), func(t *testing.T) {
			var opts broker.Options
			if withDB {
				st, err := store.Open(t.TempDir(), store.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { st.Close() })
				opts.DB = broker.Store(st)
			}
			b := broker.New(opts)
			p := relayWith(t, b, relay.Options{})
			slots := []string{"s1", "s2"}
			for _, s := range slots {
				p.send(`{"t":"mount","slot":"` + s + `","app":"` + s + `"}`)
				p.send(`{"t":"load","slot":"` + s + `"}`)
			}
			p.resume(200 * time.Microsecond)
			inst := map[string]string{"s1": p.instance("s1"), "s2": p.instance("s2")}
			const n = 600
			for i := range n {
				if i == n/2 {
					p.setDelay(0)
				}
				for _, s := range slots {
					p.send(kvGet(s, inst[s], fmt.Sprintf("k%d", i)))
				}
			}
			// Requests sent without waiting may be answered in any order:
			// wait for every row out.
			out := 0
			p.waitRaw("every row out", func(data []byte) bool {
				if r, ok := rowOf(data); ok && r.Entry.Dir == "out" && r.Entry.Type == frame.TypeDBResponse {
					out++
				}
				return out == n*len(slots)
			})
			if err := p.sync(); err != nil {
				t.Fatalf("the page was cut off: %v", err)
			}
			checkRowsInOrder(t, p, slots, n)
		})
	}
}

// The row of a request whose answer does not come soon is not kept for the
// answer: the page sees the request arrive while the agent still works on
// it (the sweep writes the row alone once it has waited a sweep period).
// Without the sweep this test waits for the row until its deadline.
func TestInspectorShowsARequestStillWaitingForItsAnswer(t *testing.T) {
	release := make(chan struct{})
	b := broker.New(broker.Options{Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return &frame.AppResponse{RequestID: m.RequestID, OK: true, Streaming: new(bool), Data: json.RawMessage(`{"done":true}`)}
	})})
	p := relayWith(t, b, relay.Options{})
	p.send(`{"t":"mount","slot":"s1","app":"s1"}`)
	p.send(`{"t":"load","slot":"s1"}`)
	p.resume(0)
	inst := p.instance("s1")
	for i := range 3 {
		rid := fmt.Sprintf("slow%d", i)
		p.send(ask("s1", inst, rid, "wait"))
		p.waitRaw("the row in of "+rid, func(data []byte) bool {
			r, ok := rowOf(data)
			return ok && r.Entry.Dir == "in" && r.Entry.RequestID == rid && r.Entry.Verdict == "accept"
		})
	}
	close(release)
	for i := range 3 {
		if r := p.terminal("s1", fmt.Sprintf("slow%d", i)); !r.OK {
			t.Fatalf("answer %d: %+v", i, r.Error)
		}
	}
}
