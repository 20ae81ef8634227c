package broker_test

// The harness runs the real transport: a relay and a broker behind an HTTP
// server on loopback, and a WebSocket client playing the runner page.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

type host struct {
	b      *broker.Broker
	rl     *relay.Relay
	srv    *httptest.Server
	addr   string
	origin string
}

func newHost(t testing.TB, opts broker.Options, ropts relay.Options) *host {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	h := &host{addr: addr, origin: "http://" + addr}
	h.b = broker.New(opts)
	ropts.Origin, ropts.Host = h.origin, addr
	h.rl, err = relay.New(h.b, ropts)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /ws", h.rl)
	h.srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux}}
	h.srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		h.b.Shutdown(ctx)
		h.rl.Close(ctx)
		h.srv.Close()
	})
	return h
}

// msg is one host → page relay message.
type msg struct {
	T     string          `json:"t"`
	Slot  string          `json:"slot"`
	Frame json.RawMessage `json:"frame"`
	Entry struct {
		Dir       string `json:"dir"`
		Slot      string `json:"slot"`
		Type      string `json:"type"`
		RequestID string `json:"requestId"`
		Verdict   string `json:"verdict"`
		Code      string `json:"code"`
		Message   string `json:"message"`
	} `json:"entry"`
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	App    string `json:"app"`
	Method string `json:"method"`
	URL    string `json:"url"`

	f frameView // Frame decoded
}

// frameView is the part of a host→app frame the tests look at.
type frameView struct {
	Type             string          `json:"type"`
	RequestID        string          `json:"requestId"`
	InstanceID       string          `json:"instanceId"`
	OK               *bool           `json:"ok"`
	Streaming        *bool           `json:"streaming"`
	Text             string          `json:"text"`
	Data             json.RawMessage `json:"data"`
	Result           json.RawMessage `json:"result"`
	Status           any             `json:"status"`
	Reason           string          `json:"reason"`
	Event            string          `json:"event"`
	Capabilities     map[string]bool `json:"capabilities"`
	ProtocolVersions []int           `json:"protocolVersions"`
	Error            *struct {
		Code      string `json:"code"`
		Message   string `json:"message"`
		Retryable bool   `json:"retryable"`
		// RetryAfterMs is nil when absent.
		RetryAfterMs *int `json:"retryAfterMs"`
	} `json:"error"`
}

// terminal reports whether the frame ends its request (R3).
func (f frameView) terminal() bool {
	switch f.Type {
	case "snug:app-response":
		return !(f.OK != nil && *f.OK && f.Streaming != nil && *f.Streaming)
	case "snug:db-response", "snug:net-response", "snug:open-url-result":
		return true
	}
	return false
}

func (f frameView) code() string {
	if f.Error != nil {
		return f.Error.Code
	}
	return ""
}

// page is a WebSocket client speaking the relay protocol like the runner
// page. Every message it receives is kept in order.
type page struct {
	t  testing.TB
	ws *websocket.Conn

	mu     sync.Mutex
	cond   *sync.Cond
	log    []msg
	err    error
	fences int // fence's count, for a fresh slot each time
}

func (h *host) page(t testing.TB) *page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+h.addr+"/ws", &websocket.DialOptions{
		HTTPHeader: http.Header{"Origin": {h.origin}},
	})
	if err != nil {
		t.Fatalf("dial relay: %v", err)
	}
	ws.SetReadLimit(-1)
	p := &page{t: t, ws: ws}
	p.cond = sync.NewCond(&p.mu)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, data, err := ws.Read(context.Background())
			p.mu.Lock()
			if err != nil {
				p.err = err
				p.cond.Broadcast()
				p.mu.Unlock()
				return
			}
			var m msg
			if jerr := json.Unmarshal(data, &m); jerr != nil {
				p.err = fmt.Errorf("bad relay message %s: %w", data, jerr)
			}
			if len(m.Frame) > 0 {
				_ = json.Unmarshal(m.Frame, &m.f)
			}
			p.log = append(p.log, m)
			p.cond.Broadcast()
			p.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ws.CloseNow()
		<-done
	})
	return p
}

func (p *page) send(v any) {
	p.t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		p.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := p.ws.Write(ctx, websocket.MessageText, raw); err != nil {
		p.t.Fatalf("page send: %v", err)
	}
}

func (p *page) mount(slot, app string) {
	p.send(map[string]string{"t": "mount", "slot": slot, "app": app})
}
func (p *page) load(slot string)    { p.send(map[string]string{"t": "load", "slot": slot}) }
func (p *page) unmount(slot string) { p.send(map[string]string{"t": "unmount", "slot": slot}) }

// frame relays a frame from slot's iframe: a JSON text, sent as received.
func (p *page) frame(slot, frameJSON string) {
	p.t.Helper()
	p.send(map[string]any{"t": "frame", "slot": slot, "frame": json.RawMessage(frameJSON)})
}

// wait returns the first message from index from on that matches, waiting
// up to d; it also returns the index after it.
func (p *page) wait(from int, d time.Duration, match func(m msg) bool) (msg, int) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := from; ; {
		for ; i < len(p.log); i++ {
			if match(p.log[i]) {
				return p.log[i], i + 1
			}
		}
		if p.err != nil || time.Now().After(deadline) {
			p.t.Fatalf("no matching relay message within %s (connection: %v); got:\n%s", d, p.err, p.dumpLocked(from))
		}
		p.cond.Wait()
	}
}

// frameFor waits for slot's next frame matching rid (any rid when "") of
// type typ (any when "").
func (p *page) frameFor(slot, typ, rid string) frameView {
	p.t.Helper()
	m, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.T == "frame" && m.Slot == slot && (typ == "" || m.f.Type == typ) && (rid == "" || m.f.RequestID == rid)
	})
	return m.f
}

// terminal waits for the terminal frame of rid on slot.
func (p *page) terminal(slot, rid string) frameView {
	p.t.Helper()
	m, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.T == "frame" && m.Slot == slot && m.f.RequestID == rid && m.f.terminal()
	})
	return m.f
}

// inspected waits for the inbound inspect entry of a frame with rid (or of
// type typ when rid is "").
func (p *page) inspected(slot, typ, rid string) msg {
	p.t.Helper()
	m, _ := p.wait(0, waitLimit, func(m msg) bool {
		return m.T == "inspect" && m.Entry.Dir == "in" && m.Entry.Slot == slot &&
			(typ == "" || m.Entry.Type == typ) && (rid == "" || m.Entry.RequestID == rid)
	})
	return m
}

// frames returns every frame so far for slot and rid.
func (p *page) frames(slot, rid string) []frameView {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []frameView
	for _, m := range p.log {
		if m.T == "frame" && m.Slot == slot && m.f.RequestID == rid {
			out = append(out, m.f)
		}
	}
	return out
}

func (p *page) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.log)
}

func (p *page) dumpLocked(from int) string {
	var b strings.Builder
	for i := from; i < len(p.log) && i < from+60; i++ {
		m := p.log[i]
		if m.T == "frame" {
			fmt.Fprintf(&b, "  frame %s %s\n", m.Slot, m.Frame)
		} else {
			raw, _ := json.Marshal(m.Entry)
			fmt.Fprintf(&b, "  %s %s %s\n", m.T, m.ID, raw)
		}
	}
	return b.String()
}

// start mounts and loads slot for app and returns its instanceId from
// host-ready.
func (p *page) start(slot, app string) string {
	p.t.Helper()
	p.mount(slot, app)
	p.load(slot)
	hr := p.frameFor(slot, "snug:host-ready", "")
	if hr.InstanceID == "" {
		p.t.Fatalf("host-ready without instanceId")
	}
	return hr.InstanceID
}

// fence returns once the relay has handled everything this page sent
// before it, and the page has read everything the host sent while handling
// it: a test asserts that nothing more came, for what the relay's reader
// does (frame checks, refusals, ignored frames, answers from the page's
// messages), without a quiet window. It sends a frame for a slot with no
// app, which the relay's reader answers with an inspector row on the same
// queue, in order. Work a handler does on a worker later is not fenced: a
// test waits for that work's own end (an agent call gone, a terminal).
func (p *page) fence() {
	p.t.Helper()
	p.mu.Lock()
	p.fences++
	slot := fmt.Sprintf("fence-%d", p.fences)
	p.mu.Unlock()
	p.send(map[string]any{"t": "frame", "slot": slot, "frame": json.RawMessage(`{}`)})
	p.wait(0, waitLimit, func(m msg) bool { return m.T == "inspect" && m.Entry.Slot == slot })
}

func appMessage(inst, rid, action string) string {
	return fmt.Sprintf(`{"v":1,"type":"snug:app-message","requestId":%q,"instanceId":%q,"appId":"test.app","action":%q}`, rid, inst, action)
}

func dbKV(inst, rid, op, key, value string) string {
	if op == "kvSet" {
		return fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"kvSet","key":%q,"value":%s}`, rid, inst, key, value)
	}
	return fmt.Sprintf(`{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":%q,"key":%q}`, rid, inst, op, key)
}

func cancelFrame(inst, rid string) string {
	return fmt.Sprintf(`{"v":1,"type":"snug:app-cancel","requestId":%q,"instanceId":%q}`, rid, inst)
}

const announce = `{"v":1,"type":"snug:app-announce","appId":"test.app","displayName":"Test App"}`

// waitLimit bounds every wait for a message: generous, since it is only
// reached when a test fails (and CI machines are busy).
const waitLimit = 20 * time.Second
