package relay

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/store"
)

// TestFlushRoutesWriteTheSameBytes runs one page's session, a corpus of
// requests and their answers with the inspector on, through both routes
// an answer can take to the socket: written at once on the goroutine that
// made it (flush's fast route, sockwrite) and handed to a writer goroutine
// (the reference route). The page must receive the same messages, byte for
// byte, in the same order (the instance id, random, set aside).
func TestFlushRoutesWriteTheSameBytes(t *testing.T) {
	fast := pageSession(t, false)
	ref := pageSession(t, true)
	if len(fast) != len(ref) {
		t.Fatalf("the fast route sent %d messages, the writer %d:\n%s\n---\n%s", len(fast), len(ref), strings.Join(fast, "\n"), strings.Join(ref, "\n"))
	}
	for i := range ref {
		if fast[i] != ref[i] {
			t.Errorf("message %d differs:\n fast: %.300s\n  ref: %.300s", i, fast[i], ref[i])
		}
	}
}

var instanceIDs = regexp.MustCompile(`"instanceId":"[^"]*"`)

// pageSession is the messages one page gets for the corpus from a relay
// whose answers take the writer goroutine (writerOnly) or the fast route.
func pageSession(t *testing.T, writerOnly bool) []string {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	b := broker.New(broker.Options{DB: broker.Store(st)})
	clock := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	rl, err := New(b, Options{Origin: "http://" + addr, Host: addr, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	rl.writerOnly = writerOnly
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: rl}}
	srv.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		b.Shutdown(ctx)
		rl.Close(ctx)
		srv.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+addr+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"Origin": {"http://" + addr}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	var got []string
	send := func(msg string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// until reads up to the message that holds want, and the inspector
	// row that follows it.
	until := func(want string) {
		for seen := false; ; {
			_, m, err := ws.Read(ctx)
			if err != nil {
				t.Fatalf("waiting for %s: %v", want, err)
			}
			got = append(got, instanceIDs.ReplaceAllString(string(m), `"instanceId":"X"`))
			if seen && strings.Contains(string(m), `"t":"inspect"`) && strings.Contains(string(m), `"dir":"out"`) {
				return
			}
			seen = seen || strings.Contains(string(m), want) && strings.Contains(string(m), `"t":"frame"`)
		}
	}
	send(`{"t":"mount","slot":"s","app":"a"}`)
	send(`{"t":"load","slot":"s"}`)
	until(`snug:host-ready`)
	var inst string
	rl.mu.Lock()
	for c := range rl.conns {
		inst = c.slot("s").sess.InstanceID()
	}
	rl.mu.Unlock()
	values := []string{`{"a":[1,2,{"b":null}]}`, `"<&>\u2028"`, `"` + strings.Repeat("z", 70000) + `"`, `-0.5e-3`}
	for i, v := range values {
		send(fmt.Sprintf(`{"t":"frame","slot":"s","frame":{"v":1,"type":"snug:db-request","requestId":"set%d","instanceId":%q,"op":"kvSet","key":"k%d","value":%s}}`, i, inst, i, v))
		until(fmt.Sprintf(`"set%d"`, i))
		for j := range 2 { // the second read is from the store's cache
			send(fmt.Sprintf(`{"t":"frame","slot":"s","frame":{"v":1,"type":"snug:db-request","requestId":"get%d-%d","instanceId":%q,"op":"kvGet","key":"k%d"}}`, i, j, inst, i))
			until(fmt.Sprintf(`"get%d-%d"`, i, j))
		}
	}
	// A frame the broker refuses (no key).
	send(`{"t":"frame","slot":"s","frame":{"v":1,"type":"snug:db-request","requestId":"bad","instanceId":"` + inst + `","op":"kvGet"}}`)
	until(`"bad"`)
	return got
}
