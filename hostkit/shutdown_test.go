package hostkit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
)

// pageClient plays the runner page over the relay WebSocket.
type pageClient struct {
	t   *testing.T
	ctx context.Context
	ws  *websocket.Conn
}

func dialPage(t *testing.T, h *hostkit.Host) *pageClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	ws, _, err := websocket.Dial(ctx, strings.Replace(h.Origin(), "http", "ws", 1)+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.Origin()}}})
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(16 << 20)
	t.Cleanup(func() { ws.CloseNow() })
	return &pageClient{t: t, ctx: ctx, ws: ws}
}

func (p *pageClient) send(format string, args ...any) {
	p.t.Helper()
	if err := p.ws.Write(p.ctx, websocket.MessageText, []byte(fmt.Sprintf(format, args...))); err != nil {
		p.t.Fatal(err)
	}
}

type relayMsg struct {
	T     string         `json:"t"`
	Slot  string         `json:"slot"`
	Frame map[string]any `json:"frame"`
	App   string         `json:"app"`
}

// read returns the next relay message, or ok false when the socket closed.
func (p *pageClient) read() (relayMsg, bool) {
	_, data, err := p.ws.Read(p.ctx)
	if err != nil {
		return relayMsg{}, false
	}
	var m relayMsg
	if err := json.Unmarshal(data, &m); err != nil {
		p.t.Fatalf("relay sent %q: %v", data, err)
	}
	return m, true
}

func (p *pageClient) nextFrame() map[string]any {
	p.t.Helper()
	for {
		m, ok := p.read()
		if !ok {
			p.t.Fatal("the relay closed")
		}
		if m.T == "frame" {
			return m.Frame
		}
	}
}

// Shutdown sends every request in flight its terminal frame before the
// page's connection closes.
func TestShutdownSendsTerminalsFirst(t *testing.T) {
	h, err := hostkit.New(
		hostkit.WithApps(hostkit.BuiltApp("slow", []byte("<!doctype html>"), hostkit.Meta{})),
		hostkit.WithAgent(offline.New(offline.Options{ChunkSize: 1, Delay: 200 * time.Millisecond})),
	)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.Serve() }()
	p := dialPage(t, h)
	p.send(`{"t":"mount","slot":"s1","app":"slow"}`)
	p.send(`{"t":"load","slot":"s1"}`)
	ready := p.nextFrame()
	const n = 5
	for i := range n {
		p.send(`{"t":"frame","slot":"s1","frame":{"v":1,"type":"snug:app-message","requestId":"r%d","instanceId":%q,"appId":"x","action":"slow"}}`, i, ready["instanceId"])
	}
	// Wait until every request streams, so all five are in flight.
	streaming := map[string]bool{}
	for len(streaming) < n {
		f := p.nextFrame()
		if f["streaming"] == true {
			streaming[f["requestId"].(string)] = true
		}
	}
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- h.Shutdown(ctx)
	}()
	terminals := map[string]string{}
	for {
		m, ok := p.read()
		if !ok {
			break
		}
		if m.T != "frame" || m.Frame["streaming"] == true {
			continue
		}
		rid := m.Frame["requestId"].(string)
		if _, dup := terminals[rid]; dup {
			t.Errorf("second terminal for %s", rid)
		}
		code := ""
		if e, ok := m.Frame["error"].(map[string]any); ok {
			code, _ = e["code"].(string)
		}
		terminals[rid] = code
	}
	if len(terminals) != n {
		t.Fatalf("terminals before close: %v, want %d", terminals, n)
	}
	for rid, code := range terminals {
		if code != "CANCELLED" {
			t.Errorf("%s ended with %q, want CANCELLED", rid, code)
		}
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if err := <-served; err != nil {
		t.Fatal(err)
	}
}

// The relay refuses a page from another origin, and a Host other than the
// bound address (DNS rebinding).
func TestRelayRefusesForeignPages(t *testing.T) {
	h := startHost(t)
	u := strings.Replace(h.Origin(), "http", "ws", 1) + "/ws"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://evil.example"}}}); err == nil {
		t.Error("a foreign Origin was accepted")
	}
	if _, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"null"}}}); err == nil {
		t.Error("Origin null (a sandboxed frame) was accepted")
	}
	if _, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{Host: "rebind.example:80", HTTPHeader: http.Header{"Origin": {h.Origin()}}}); err == nil {
		t.Error("a foreign Host was accepted")
	}
}
