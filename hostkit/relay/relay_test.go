package relay_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/relay"
)

func serve(t *testing.T) (addr, origin string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr = ln.Addr().String()
	origin = "http://" + addr
	b := broker.New(broker.Options{})
	rl, err := relay.New(b, relay.Options{Origin: origin, Host: addr})
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: rl}}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
		rl.Close(ctx)
		srv.Close()
	})
	return addr, origin
}

// The attacks on the upgrade: a page of another origin (CSRF against a
// loopback service), no Origin at all, and DNS rebinding (right origin
// string for the attacker's name, wrong Host).
func TestUpgradeRefusesForeignOriginAndHost(t *testing.T) {
	addr, origin := serve(t)
	cases := []struct {
		name   string
		origin string
		host   string
	}{
		{"foreign origin", "http://evil.example", ""},
		{"origin of another port", "http://127.0.0.1:1", ""},
		{"origin with other scheme", "https://" + addr, ""},
		{"null origin (sandboxed frame)", "null", ""},
		{"no origin", "", ""},
		{"rebinding: foreign Host", "http://evil.example:" + portOf(addr), "evil.example:" + portOf(addr)},
		{"right origin, foreign Host", origin, "localhost:" + portOf(addr)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			h := http.Header{}
			if tc.origin != "" {
				h.Set("Origin", tc.origin)
			}
			ws, resp, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: h, Host: tc.host})
			if err == nil {
				ws.CloseNow()
				t.Fatal("upgrade accepted")
			}
			if resp == nil || resp.StatusCode != http.StatusForbidden {
				t.Fatalf("want 403, got %v (%v)", resp, err)
			}
		})
	}
	t.Run("own origin and host", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
		if err != nil {
			t.Fatalf("the runner's own page was refused: %v", err)
		}
		ws.CloseNow()
	})
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func TestNewRefusesBadOptions(t *testing.T) {
	b := broker.New(broker.Options{})
	for _, o := range []relay.Options{
		{Origin: "", Host: "127.0.0.1:1"},
		{Origin: "127.0.0.1:1", Host: "127.0.0.1:1"},
		{Origin: "http://127.0.0.1:1/path", Host: "127.0.0.1:1"},
		{Origin: "http://127.0.0.1:1", Host: ""},
	} {
		if _, err := relay.New(b, o); err == nil {
			t.Errorf("relay.New(%+v) accepted", o)
		}
	}
}

// A page that sends a message past the relay's read limit (twice the
// largest frame's size class) is closed with 1009, message too big: the read
// loop reads into its pooled buffer through the library's Reader, which
// keeps the limit, and never takes the message in.
func TestMessagePastTheReadLimitClosesTheConnection(t *testing.T) {
	addr, origin := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if err != nil {
		t.Fatalf("dial the relay: %v", err)
	}
	defer ws.CloseNow()
	big := make([]byte, 2*frame.MaxDBFrameBytes+1)
	for i := range big {
		big[i] = 'a'
	}
	// The relay may close before the whole message is written.
	_ = ws.Write(ctx, websocket.MessageText, big)
	for {
		_, _, err := ws.Read(ctx)
		if err == nil {
			continue // host-ready and anything before the close
		}
		if s := websocket.CloseStatus(err); s != websocket.StatusMessageTooBig {
			t.Fatalf("the connection ended with %v (status %v), want %v", err, s, websocket.StatusMessageTooBig)
		}
		return
	}
}
