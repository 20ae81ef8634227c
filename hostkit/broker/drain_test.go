package broker_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// A write running when the host shuts down (SIGTERM) is answered what
// happened, not CANCELLED (which an app takes for not done, and sends
// again): Shutdown ends the other requests at once, lets running writes
// finish within ShutdownGrace, and answers a write still running then
// HOST_ERROR (it may or may not have been kept).
func TestShutdownLetsRunningWritesFinish(t *testing.T) {
	started := map[string]chan struct{}{"slow": make(chan struct{}), "stuck": make(chan struct{}), "read": make(chan struct{})}
	release := make(chan struct{})
	h := newHost(t, broker.Options{
		ShutdownGrace: time.Second,
		DB: broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
			key := *r.Key
			close(started[key])
			switch key {
			case "slow": // a write past its commit, waiting for its upload
				<-release
			default:
				<-ctx.Done()
			}
			found := false
			return &frame.DBResponse{RequestID: r.RequestID, OK: true, Result: &frame.DBResult{Found: &found, Value: json.RawMessage("null")}}
		}),
	}, relay.Options{})
	p := h.page(t)
	// Three apps: each database has its own lane, so all three run at once.
	a, b, c := p.start("s1", "a"), p.start("s2", "b"), p.start("s3", "c")
	p.frame("s1", dbKV(a, "w1", "kvSet", "slow", "1"))
	p.frame("s2", dbKV(b, "w2", "kvSet", "stuck", "1"))
	p.frame("s3", dbKV(c, "r1", "kvGet", "read", ""))
	for _, ch := range started {
		<-ch
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		shut <- h.b.Shutdown(ctx)
	}()
	if f := p.terminal("s3", "r1"); f.code() != frame.CodeCancelled {
		t.Fatalf("the read: %+v, want CANCELLED", f.Error)
	}
	close(release)
	if f := p.terminal("s1", "w1"); f.code() != "" {
		t.Fatalf("the write that finished during the shutdown: %+v, want its answer", f.Error)
	}
	if f := p.terminal("s2", "w2"); f.code() != frame.CodeHostError {
		t.Fatalf("the write still running past the grace: %+v, want HOST_ERROR", f.Error)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
}
