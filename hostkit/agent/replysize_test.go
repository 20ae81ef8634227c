package agent_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

// endless is a hostile agent endpoint: after the reply's first events it
// sends events made by next until the client hangs up, and records how many
// bytes it wrote and when it saw the client go.
type endless struct {
	written atomic.Int64
	gone    chan time.Time
}

func newEndless(t *testing.T, wf wire, prefix []string, next func(w http.ResponseWriter) error) (*endless, *fakeAgent) {
	e := &endless{gone: make(chan time.Time, 1)}
	fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
		wf.stream(w, prefix, false)
		cw := &countingWriter{w: w, n: &e.written}
		for {
			if err := next(cw); err != nil || r.Context().Err() != nil {
				e.gone <- time.Now()
				return
			}
		}
	})
	return e, fa
}

type countingWriter struct {
	w http.ResponseWriter
	n *atomic.Int64
}

func (c *countingWriter) Header() http.Header { return c.w.Header() }
func (c *countingWriter) WriteHeader(s int)   { c.w.WriteHeader(s) }
func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

// heapUse runs the collector and returns the live heap.
func heapUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestReplySizeCapEndlessReply: an agent that never stops sending text is
// cut at Options.MaxReplyBytes: the request is answered PARSE_FAILED with
// the limit named, the host hangs up on the server, and the host's memory
// stays a small multiple of the limit.
func TestReplySizeCapEndlessReply(t *testing.T) {
	const limit = 1 << 20
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			piece := strings.Repeat("x", 32<<10)
			e, fa := newEndless(t, wf, []string{`{"message":"`}, func(w http.ResponseWriter) error {
				return wf.delta(w, piece)
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{MaxReplyBytes: limit})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			var streamed, longest int
			var peak atomic.Uint64
			before := heapUse()
			start := time.Now()
			_, ferr := br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), func(text string) {
				streamed++
				longest = len(text)
				if streamed%8 == 0 {
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					if m.HeapAlloc > peak.Load() {
						peak.Store(m.HeapAlloc)
					}
				}
			})
			el := time.Since(start)
			if ferr == nil || ferr.Code != frame.CodeParseFailed {
				t.Fatalf("err %+v, want PARSE_FAILED", ferr)
			}
			if !strings.Contains(ferr.Message, "1 MiB") || ferr.RawExcerpt == nil || !strings.HasPrefix(*ferr.RawExcerpt, `{"message":"xxx`) {
				t.Errorf("error %q, excerpt %v: want the limit named and the reply's start", ferr.Message, ferr.RawExcerpt)
			}
			if el > 10*time.Second {
				t.Errorf("answered after %s", el)
			}
			select {
			case at := <-e.gone:
				t.Logf("answered after %s; the server saw the host hang up at %s, having written %d bytes",
					el, at.Sub(start), e.written.Load())
			case <-time.After(10 * time.Second):
				t.Fatal("the host kept reading after answering")
			}
			if longest > frame.MaxFrameBytes {
				t.Errorf("streamed a %d-byte text, more than a frame carries", longest)
			}
			if streamed > 200 {
				t.Errorf("%d streaming texts for one reply: not coalesced", streamed)
			}
			if grew := int64(peak.Load()) - int64(before); grew > 32*limit {
				t.Errorf("the heap grew by %d bytes while reading, limit %d", grew, limit)
			} else {
				t.Logf("heap growth while reading: %d KiB (limit %d KiB); %d streaming texts", grew>>10, limit>>10, streamed)
			}
		})
	}
}

// TestReplySizeCapNoise: an agent that sends events without text forever
// (empty choices, pings) is cut too, by the bytes of event stream read.
func TestReplySizeCapNoise(t *testing.T) {
	const limit = 64 << 10
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			e, fa := newEndless(t, wf, []string{`{"message":"hi"`}, func(w http.ResponseWriter) error {
				return wf.noise(w, "")
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{MaxReplyBytes: limit})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			_, ferr := br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
			if ferr == nil || ferr.Code != frame.CodeParseFailed {
				t.Fatalf("err %+v, want PARSE_FAILED", ferr)
			}
			select {
			case <-e.gone:
			case <-time.After(10 * time.Second):
				t.Fatal("the host kept reading after answering")
			}
			t.Logf("answered after %s; the server wrote %d bytes", time.Since(start), e.written.Load())
		})
	}
}

// TestNothingReadAfterTheEnd: what a server sends after [DONE] or
// message_stop is not read: the reply is answered at its end marker.
func TestNothingReadAfterTheEnd(t *testing.T) {
	for _, wf := range wires {
		t.Run(wf.name, func(t *testing.T) {
			reply := `{"message":"done"}`
			e := &endless{gone: make(chan time.Time, 1)}
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				wf.stream(w, []string{reply}, true)
				cw := &countingWriter{w: w, n: &e.written}
				for wf.delta(cw, strings.Repeat("y", 32<<10)) == nil && r.Context().Err() == nil {
				}
				e.gone <- time.Now()
			})
			br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			data, ferr := br.Ask(ctx, agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
			if ferr != nil || string(data) != reply {
				t.Fatalf("%s %+v", data, ferr)
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("answered after %s", el)
			}
			select {
			case <-e.gone:
			case <-time.After(10 * time.Second):
				t.Fatal("the host kept reading after the end marker")
			}
		})
	}
}

// TestReplySizeDefault: without an option the limit is
// agent.DefaultMaxReplyBytes: a reply just under it is answered, one past it
// is refused.
func TestReplySizeDefault(t *testing.T) {
	wf := wires[0]
	for _, tc := range []struct {
		size int
		ok   bool
	}{{agent.DefaultMaxReplyBytes - 64, true}, {agent.DefaultMaxReplyBytes + 1, false}} {
		body := strings.Repeat("z", tc.size-len(`{"message":""}`))
		reply := `{"message":"` + body + `"}`
		fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
			wf.stream(w, chunked(reply, 64<<10), true)
		})
		br := agent.NewBridge(wf.backend(t, fa.srv.URL), agent.Options{})
		data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", ""), nil)
		if tc.ok && (ferr != nil || len(data) != len(reply)) {
			t.Errorf("%d bytes: %d bytes of data, %+v", tc.size, len(data), ferr)
		}
		if !tc.ok && (ferr == nil || ferr.Code != frame.CodeParseFailed || !strings.Contains(ferr.Message, "4 MiB")) {
			t.Errorf("%d bytes: %+v, want PARSE_FAILED naming 4 MiB", tc.size, ferr)
		}
	}
}
