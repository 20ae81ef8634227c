package mcpapps_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// byHeader is an Authenticate that takes the user from X-Test-User, as an
// authenticating proxy's header.
func byHeader(o *mcpapps.Options) {
	o.Authenticate = func(r *http.Request) (string, error) {
		if u := r.Header.Get("X-Test-User"); u != "" {
			return u, nil
		}
		return "", errors.New("no user")
	}
}

// rawPost sends one JSON-RPC message to the endpoint as a streamable HTTP
// client does (protocol 2025-11-25, with a session), as user in session id
// ("" for none), and returns the status, the session id the answer names
// and its body.
func (e *env) rawPost(t testing.TB, user, id, body string) (int, string, string) {
	t.Helper()
	return e.raw(t, http.MethodPost, user, id, body)
}

func (e *env) raw(t testing.TB, method, user, id, body string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(method, e.http.URL+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	if user != "" {
		req.Header.Set("X-Test-User", user)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res.StatusCode, res.Header.Get("Mcp-Session-Id"), string(b)
}

const (
	initializeBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	initializedBody = `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`
	pingBody        = `{"jsonrpc":"2.0","id":2,"method":"ping","params":{}}`
)

// openSession opens an MCP session as a client does (initialize, then
// notifications/initialized) and returns its id, or the refusal's status
// and body.
func (e *env) openSession(t testing.TB, user string) (id string, status int, body string) {
	t.Helper()
	status, id, body = e.rawPost(t, user, "", initializeBody)
	if status != http.StatusOK || id == "" {
		return "", status, body
	}
	if st, _, b := e.rawPost(t, user, id, initializedBody); st != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", st, b)
	}
	return id, status, body
}

// liveSessions counts the go-sdk sessions of every MCP server of e.
func (e *env) liveSessions() int {
	seen := map[any]bool{}
	n := 0
	for _, k := range e.srv.Keys() {
		m := e.srv.MCP(k)
		if seen[m] {
			continue
		}
		seen[m] = true
		for range m.Sessions() {
			n++
		}
	}
	return n
}

// usage is what the process holds: the heap after a collection, the
// goroutine stacks and the goroutines.
type usage struct{ heap, stacks, goroutines int64 }

func measure() usage {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return usage{int64(ms.HeapAlloc), int64(ms.StackInuse), int64(runtime.NumGoroutine())}
}

// withIdle sets a short session idle time.
func withIdle(d time.Duration) func(*mcpapps.Options) {
	return func(o *mcpapps.Options) { byHeader(o); o.SessionIdle = d }
}

// TestAbandonedSessionsCloseAndAreForgotten: clients that open MCP
// sessions and never end them (a tab closed, a host restarted, a client
// opening them in a loop) cost the host nothing once the sessions have
// been idle: go-sdk's session is closed, its owner entry forgotten, its
// goroutine gone and its memory given back, round after round. An expired
// session's id then gets go-sdk's 404, for its owner and for anyone else,
// and its owner opens new ones: each user opens the most one may hold
// (MaxSessions) in each round. On the old code every session stayed:
// after 500 abandoned sessions, 500 go-sdk sessions and 500 owner entries,
// 5.3 KB of heap and a goroutine (2.4 KB of stack) each, for ever.
func TestAbandonedSessionsCloseAndAreForgotten(t *testing.T) {
	const idle = time.Second
	e := newEnv(t, withIdle(idle))
	users := []string{"u1", "u2", "u3", "u4"}
	n := int64(len(users) * mcpapps.DefaultMaxSessions)
	id, _, _ := e.openSession(t, "warm")
	e.raw(t, http.MethodDelete, "warm", id, "")
	http.DefaultClient.CloseIdleConnections()
	base := measure()
	var after []usage
	for round := range 2 {
		ids := e.abandon(t, users, int(n))
		if st, _, b := e.rawPost(t, users[0], "", initializeBody); st != http.StatusTooManyRequests {
			t.Fatalf("round %d: a session past the cap: %d %s", round, st, b)
		}
		open := measure()
		t.Logf("round %d: %d sessions open, %d owned, %d B of heap and %d B of stack each", round, e.liveSessions(), e.srv.OwnedSessions(), (open.heap-base.heap)/n, (open.stacks-base.stacks)/n)
		e.waitForgotten(t, idle)
		for i, id := range ids {
			owner := users[i%len(users)]
			for _, who := range []string{owner, "intruder"} {
				if st, _, b := e.rawPost(t, who, id, pingBody); st != http.StatusNotFound {
					t.Fatalf("round %d: %s in %s's expired session: %d %s, want go-sdk's 404", round, who, owner, st, b)
				}
			}
		}
		http.DefaultClient.CloseIdleConnections()
		after = append(after, measure())
		t.Logf("round %d, expired: heap %+d B, stacks %+d B, goroutines %+d from the start", round, after[round].heap-base.heap, after[round].stacks-base.stacks, after[round].goroutines-base.goroutines)
	}
	// Flat: a second round leaves nothing more than the first; what the
	// first leaves is growth made once (the maps' high water, state made
	// on first use: 20 to 190 KB), not a session's 5.3 KB.
	if g := after[0].goroutines - base.goroutines; g > 2 {
		t.Errorf("%d goroutines more after %d sessions expired", g, n)
	}
	if grown := after[0].heap - base.heap; grown > n*2048 {
		t.Errorf("%d expired sessions left %d B of heap (%d B each)", n, grown, grown/n)
	}
	if grown := after[1].heap - after[0].heap; grown > n*256 {
		t.Errorf("a second round of %d expired sessions grew the heap %d B (%d B each)", n, grown, grown/n)
	}
	if id, st, b := e.openSession(t, users[0]); id == "" {
		t.Errorf("a new session after expiry: %d %s", st, b)
	}
}

// abandon opens n sessions, of users in turn, and leaves them; it returns
// their ids.
func (e *env) abandon(t *testing.T, users []string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id, st, b := e.openSession(t, users[i%len(users)])
		if id == "" {
			t.Fatalf("session %d: %d %s", i, st, b)
		}
		ids = append(ids, id)
	}
	http.DefaultClient.CloseIdleConnections()
	return ids
}

// waitForgotten waits until go-sdk holds no session and the server no
// owner entry, while requests keep coming (here, in no session): entries
// are swept as they come.
func (e *env) waitForgotten(t *testing.T, idle time.Duration) {
	t.Helper()
	if !browsertest.Poll(func() bool {
		e.rawPost(t, "u1", "no-such-session", pingBody)
		return e.liveSessions() == 0 && e.srv.OwnedSessions() == 0
	}) {
		t.Fatalf("%d go-sdk sessions live, %d owner entries, %s after the last was opened (idle time %s)", e.liveSessions(), e.srv.OwnedSessions(), browsertest.WaitTimeout, idle)
	}
}

// TestSessionCapPerUser: one user holds at most MaxSessions (64 by
// default) MCP sessions at once; without an authenticator every loopback
// caller together does. The next is refused 429 naming the limit and the
// idle time, never by ending another session: the user's 64 all still
// answer, another user opens theirs, and once one of the 64 ends its user
// opens a new one.
func TestSessionCapPerUser(t *testing.T) {
	for name, opt := range map[string]func(*mcpapps.Options){"proxy header": byHeader, "no authenticator": nil} {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, opt)
			alice := ""
			if opt != nil {
				alice = "alice"
			}
			ids := make([]string, mcpapps.DefaultMaxSessions)
			for i := range ids {
				var st int
				var b string
				if ids[i], st, b = e.openSession(t, alice); ids[i] == "" {
					t.Fatalf("session %d: %d %s", i+1, st, b)
				}
			}
			st, id, b := e.rawPost(t, alice, "", initializeBody)
			if st != http.StatusTooManyRequests || id != "" || !strings.Contains(b, "64") || !strings.Contains(b, "30m0s without a request") {
				t.Fatalf("session 65: %d %q %s", st, id, b)
			}
			for i, id := range ids {
				if st, _, b := e.rawPost(t, alice, id, pingBody); st != http.StatusOK {
					t.Fatalf("session %d after the refusal: %d %s", i+1, st, b)
				}
			}
			if opt != nil {
				if id, st, b := e.openSession(t, "bob"); id == "" {
					t.Fatalf("bob's first session: %d %s", st, b)
				}
			}
			if st, _, b := e.raw(t, http.MethodDelete, alice, ids[0], ""); st != http.StatusNoContent {
				t.Fatalf("DELETE: %d %s", st, b)
			}
			if id, st, b := e.openSession(t, alice); id == "" {
				t.Fatalf("a session after one ended: %d %s", st, b)
			}
		})
	}
}

// TestSessionInUseStaysOpen: a session whose client keeps calling stays
// open for many times the idle time, and stays its user's (another user
// who holds its id is refused 403, never served in it). Once its client
// stops it expires: the id is go-sdk's 404 for anyone, the client's next
// call fails, and the client opens a new session.
func TestSessionInUseStaysOpen(t *testing.T) {
	// A loaded machine may stall between two calls: an idle time of a
	// second leaves room for that.
	const idle = time.Second
	e := newEnv(t, withIdle(idle))
	c := mcp.NewClient(&mcp.Implementation{Name: "test-host", Version: "1"}, nil)
	connect := func() *mcp.ClientSession {
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
			Endpoint: e.http.URL + "/mcp", HTTPClient: &http.Client{Transport: asUser("alice")},
		}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice := connect()
	// Longer than an idle session takes to be closed and forgotten (the
	// idle time, the margin of half of it and a second, a sweep).
	for start := time.Now(); time.Since(start) < 3*idle+time.Second; {
		if _, err := alice.ListTools(context.Background(), nil); err != nil {
			t.Fatalf("a call %s after the session opened: %v", time.Since(start), err)
		}
	}
	if st, _, b := e.rawPost(t, "bob", alice.ID(), pingBody); st != http.StatusForbidden {
		t.Fatalf("bob in alice's session in use: %d %s", st, b)
	}
	// Now idle: bob is refused until go-sdk has closed it, then gets 404.
	var st int
	var b string
	if !browsertest.Poll(func() bool {
		st, _, b = e.rawPost(t, "bob", alice.ID(), pingBody)
		return st != http.StatusForbidden
	}) || st != http.StatusNotFound {
		t.Fatalf("bob in alice's idle session: %d %s", st, b)
	}
	if _, err := alice.ListTools(context.Background(), nil); err == nil {
		t.Fatal("a call in the expired session succeeded")
	}
	if _, err := connect().ListTools(context.Background(), nil); err != nil {
		t.Fatalf("a new session: %v", err)
	}
}
