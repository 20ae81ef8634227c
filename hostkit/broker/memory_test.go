package broker_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// discardPort is a transport that drops what it is sent.
type discardPort struct{ n *int }

func (p discardPort) Send(frame.Frame, []byte) { *p.n++ }

func heapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// An instance's memory for the requestIds it used is bounded however many
// requests it makes: the heap per instance after three windows' worth of
// ids stays within the documented 24 bytes an id (plus the session itself).
// On the old unbounded set it grew with every id: 72 MiB at its 2²¹ cap.
func TestRequestIDMemoryPerInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 100k frames")
	}
	const instances = 2
	n := 3 * broker.DefaultRequestIDMemory
	b := broker.New(broker.Options{})
	defer b.Shutdown(context.Background())
	ctx := context.Background()
	sent := 0
	before := heapAlloc()
	var ss []*broker.Session
	for i := 0; i < instances; i++ {
		s, err := b.Open("a", discardPort{&sent})
		if err != nil {
			t.Fatal(err)
		}
		s.Load()
		for j := 0; j < n; j++ {
			// No db is offered: each request is refused with a terminal
			// HOST_ERROR, and its id is used all the same.
			raw := fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":"r%d","instanceId":%q,"op":"kvGet","key":"k"}`, j, s.InstanceID())
			if v := s.Receive(ctx, []byte(raw)); v.Verdict != "reject" {
				t.Fatalf("request %d: %+v", j, v)
			}
		}
		ss = append(ss, s)
	}
	per := float64(heapAlloc()-before) / instances
	runtime.KeepAlive(ss)
	if sent != instances*(n+1) {
		t.Fatalf("%d frames sent, want %d (one answer per id and host-ready)", sent, instances*(n+1))
	}
	limit := 24*float64(broker.DefaultRequestIDMemory) + 64<<10
	t.Logf("heap per instance after %d requestIds (window %d): %.0f KiB (limit %.0f KiB)", n, broker.DefaultRequestIDMemory, per/1024, limit/1024)
	if per > limit {
		t.Fatalf("heap per instance %.0f KiB, over %.0f KiB", per/1024, limit/1024)
	}
}
