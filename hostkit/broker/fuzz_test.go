package broker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// logPort keeps every frame a session sends, in order.
type logPort struct {
	mu     sync.Mutex
	frames []frameView
}

func (p *logPort) Send(f frame.Frame, raw []byte) {
	var v frameView
	_ = json.Unmarshal(raw, &v)
	p.mu.Lock()
	p.frames = append(p.frames, v)
	p.mu.Unlock()
}

// FuzzReceive feeds arbitrary frames to a session, each twice, then shuts
// the broker down: whatever the bytes, the broker must not panic, and no
// requestId may get a second terminal or a frame after its terminal.
func FuzzReceive(f *testing.F) {
	for _, seed := range []string{
		announce,
		appMessage("INST", "r1", "ok"),
		appMessage("INST", "r1", "hang"),
		appMessage("forged", "r2", "ok"),
		cancelFrame("INST", "r1"),
		dbKV("INST", "d1", "kvGet", "k", ""),
		dbKV("INST", "d2", "kvSet", "hang", `{"a":1}`),
		`{"v":1,"type":"snug:db-request","requestId":"d3","instanceId":"INST","op":"nope"}`,
		`{"v":2,"type":"snug:app-message","requestId":"v2"}`,
		`{"v":1,"type":"snug:open-url-request","requestId":"o1","instanceId":"INST","url":"https://example.com/"}`,
		`{"v":1,"type":"snug:net-request","requestId":"n1","instanceId":"INST","url":"https://example.com/","method":"GET","headers":{"Cookie":"x"}}`,
		`{"v":1,"type":"snug:app-event","instanceId":"INST","event":"resize","data":{"height":12}}`,
		`{"v":1,"type":"snug:unknown","requestId":"u1"}`,
		`{"v":1,"type":"snug:app-response","requestId":"x","ok":true,"streaming":false,"data":{}}`,
		`[1,2]`, `null`, `{`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		b := broker.New(broker.Options{
			Agent: scriptedAgent(),
			DB:    scriptedDB(),
			Net: broker.NetFunc(func(ctx context.Context, c broker.Call, r *frame.NetRequest) *frame.NetResponse {
				<-ctx.Done()
				return nil
			}),
			OpenURL: broker.OpenURLFunc(func(ctx context.Context, c broker.Call, r *frame.OpenURLRequest) *frame.OpenURLResult {
				panic("dialog crashed")
			}),
			MaxInFlight: 2,
		})
		port := &logPort{}
		s, err := b.Open("fuzz", port)
		if err != nil {
			t.Fatal(err)
		}
		s.Load()
		// Let the input name the real instance where it says INST.
		in := bytes.Replace(raw, []byte("INST"), []byte(s.InstanceID()), 1)
		s.Receive(context.Background(), in)
		s.Receive(context.Background(), in)
		if err := b.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		port.mu.Lock()
		defer port.mu.Unlock()
		ended := map[string]bool{}
		for _, fv := range port.frames {
			if fv.RequestID == "" {
				continue
			}
			if ended[fv.RequestID] {
				t.Fatalf("a frame after the terminal of %q: %+v", fv.RequestID, fv)
			}
			if fv.terminal() {
				ended[fv.RequestID] = true
			}
		}
	})
}
