package broker_test

import (
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

type tapPort struct {
	mu    sync.Mutex
	types []string
	next  broker.Port
}

func (p *tapPort) Send(f frame.Frame, raw []byte) {
	p.mu.Lock()
	p.types = append(p.types, f.FrameType())
	p.mu.Unlock()
	p.next.Send(f, raw)
}

// Options.Tap wraps each session's port: the wrapper gets every frame the
// broker sends (after its checks) and decides what reaches the transport.
func TestTapWrapsEverySessionsPort(t *testing.T) {
	var mu sync.Mutex
	taps := map[string]*tapPort{}
	b := broker.New(broker.Options{Tap: func(app string, p broker.Port) broker.Port {
		tp := &tapPort{next: p}
		mu.Lock()
		taps[app] = tp
		mu.Unlock()
		return tp
	}})
	inner := &logPort{}
	s, err := b.Open("notes", inner)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Load()
	mu.Lock()
	tp := taps["notes"]
	mu.Unlock()
	if tp == nil {
		t.Fatal("Tap was not called for the session's app")
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	inner.mu.Lock()
	defer inner.mu.Unlock()
	if len(tp.types) != 1 || tp.types[0] != frame.TypeHostReady || len(inner.frames) != 1 {
		t.Fatalf("the tap saw %v and passed on %d frames, want the host-ready once", tp.types, len(inner.frames))
	}
}
