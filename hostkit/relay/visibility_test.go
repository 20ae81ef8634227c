package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
)

// page is the runner page's side of the relay over a real WebSocket on
// loopback.
type page struct {
	t   *testing.T
	ctx context.Context
	ws  *websocket.Conn
}

func dialPage(t *testing.T) *page {
	t.Helper()
	addr, origin := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		t.Fatalf("dial the relay: %v", err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return &page{t: t, ctx: ctx, ws: ws}
}

func (p *page) send(msg string) {
	p.t.Helper()
	if err := p.ws.Write(p.ctx, websocket.MessageText, []byte(msg)); err != nil {
		p.t.Fatalf("send %s: %v", msg, err)
	}
}

// got is one frame the host sent to a slot, parsed as the app's runtime
// would.
type got struct {
	slot string
	f    frame.Frame
}

func (g got) String() string {
	if ev, ok := g.f.(*frame.HostEvent); ok {
		return g.slot + " " + ev.FrameType() + " " + ev.Event + " " + string(ev.Data)
	}
	return g.slot + " " + g.f.FrameType()
}

// framesUntilReady reads the host's messages until slot's host-ready
// arrives and returns the frames (not the inspect entries) read on the way,
// that one included.
func (p *page) framesUntilReady(slot string) []got {
	p.t.Helper()
	var out []got
	for {
		typ, data, err := p.ws.Read(p.ctx)
		if err != nil {
			p.t.Fatalf("read (frames so far %v): %v", out, err)
		}
		if typ != websocket.MessageText {
			p.t.Fatalf("binary message from the relay")
		}
		var m struct {
			T     string          `json:"t"`
			Slot  string          `json:"slot"`
			Frame json.RawMessage `json:"frame"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			p.t.Fatalf("relay message %s: %v", data, err)
		}
		if m.T != "frame" {
			continue
		}
		f, err := frame.Parse(m.Frame)
		if err != nil {
			p.t.Fatalf("frame to %s does not parse: %s: %v", m.Slot, m.Frame, err)
		}
		out = append(out, got{m.Slot, f})
		if m.Slot == slot && f.FrameType() == frame.TypeHostReady {
			return out
		}
	}
}

// mountLoad mounts app in slot and loads it, as the page does when the
// iframe is created and fires load.
func (p *page) mountLoad(slot string) {
	p.send(`{"t":"mount","slot":"` + slot + `","app":"todo"}`)
	p.send(`{"t":"load","slot":"` + slot + `"}`)
}

// settle loads one more slot and returns every frame sent before its
// host-ready: the relay handles a page's messages in order and queues its
// answers in order, so anything owed to earlier slots is in there.
func (p *page) settle() []got {
	p.t.Helper()
	p.mountLoad("sentinel")
	fs := p.framesUntilReady("sentinel")
	return fs[:len(fs)-1]
}

func wantHidden(t *testing.T, g got) {
	t.Helper()
	ev, ok := g.f.(*frame.HostEvent)
	if !ok || ev.Event != frame.EventVisibility {
		t.Fatalf("%s: want a visibility host-event", g)
	}
	var d struct {
		Visible *bool `json:"visible"`
	}
	if err := json.Unmarshal(ev.Data, &d); err != nil || d.Visible == nil || *d.Visible {
		t.Fatalf("%s: want data {visible:false}", g)
	}
}

// An app instance mounted while the page is hidden is told so right after
// its host-ready, before anything else.
func TestVisibilityHiddenPageTellsNewInstance(t *testing.T) {
	p := dialPage(t)
	p.send(`{"t":"visibility","visible":false}`)
	p.mountLoad("s1")
	fs := p.framesUntilReady("s1")
	if len(fs) != 1 {
		t.Fatalf("frames before s1's host-ready: %v", fs)
	}
	rest := p.settle()
	if len(rest) != 1 || rest[0].slot != "s1" {
		t.Fatalf("after s1's host-ready: %v, want one visibility event for s1", rest)
	}
	wantHidden(t, rest[0])
}

// A slot mounted while the page is visible and loaded after it was hidden
// gets the state once, after its host-ready: never before it (it could not
// handle it) and not twice.
func TestVisibilityHiddenBeforeFirstLoadComesAfterHostReady(t *testing.T) {
	p := dialPage(t)
	p.send(`{"t":"mount","slot":"s1","app":"todo"}`)
	p.send(`{"t":"visibility","visible":false}`)
	p.send(`{"t":"load","slot":"s1"}`)
	fs := p.framesUntilReady("s1")
	if len(fs) != 1 {
		t.Fatalf("frames before s1's host-ready: %v", fs)
	}
	rest := p.settle()
	if len(rest) != 1 || rest[0].slot != "s1" {
		t.Fatalf("after s1's host-ready: %v, want one visibility event for s1", rest)
	}
	wantHidden(t, rest[0])
}

// A page that never reported its visibility, or last reported visible,
// sends its new instances nothing beyond host-ready.
func TestVisibilityVisiblePageSendsNoExtraEvent(t *testing.T) {
	for _, tc := range []struct {
		name string
		msgs []string
	}{
		{"never reported", nil},
		{"reported visible", []string{`{"t":"visibility","visible":true}`}},
		{"hidden then visible", []string{`{"t":"visibility","visible":false}`, `{"t":"visibility","visible":true}`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := dialPage(t)
			for _, m := range tc.msgs {
				p.send(m)
			}
			p.mountLoad("s1")
			fs := p.framesUntilReady("s1")
			if len(fs) != 1 {
				t.Fatalf("frames before s1's host-ready: %v", fs)
			}
			if rest := p.settle(); len(rest) != 0 {
				t.Fatalf("after s1's host-ready: %v, want nothing", rest)
			}
		})
	}
}

// The hidden state belongs to the connection that reported it: another
// page (or the same page after a reconnect, before it reports) starts
// visible.
func TestVisibilityIsPerConnection(t *testing.T) {
	addr, origin := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func() *page {
		ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err != nil {
			t.Fatalf("dial the relay: %v", err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return &page{t: t, ctx: ctx, ws: ws}
	}
	hidden, other := dial(), dial()
	hidden.send(`{"t":"visibility","visible":false}`)
	hidden.mountLoad("s1")
	hidden.framesUntilReady("s1")
	if rest := hidden.settle(); len(rest) != 1 {
		t.Fatalf("hidden page after s1's host-ready: %v, want one visibility event", rest)
	}
	other.mountLoad("s1")
	other.framesUntilReady("s1")
	if rest := other.settle(); len(rest) != 0 {
		t.Fatalf("other page after s1's host-ready: %v, want nothing", rest)
	}
}

// A page that is hidden after its instance loaded tells it once; a later
// navigation (second load) gets no host-ready and no event.
func TestVisibilityLoadedInstanceToldOnceNotAfterNavigation(t *testing.T) {
	p := dialPage(t)
	p.mountLoad("s1")
	p.framesUntilReady("s1")
	p.send(`{"t":"visibility","visible":false}`)
	p.send(`{"t":"load","slot":"s1"}`) // navigated: the instance is dead
	rest := p.settle()
	if len(rest) != 1 || rest[0].slot != "s1" {
		t.Fatalf("after hiding and navigating s1: %v, want one visibility event", rest)
	}
	wantHidden(t, rest[0])
}
