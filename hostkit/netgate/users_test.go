package netgate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// A grant is one user's: alice's "always" for an origin does not let bob's
// instance of the same app through, bob is asked himself, and the grants
// file keeps both apart across a restart. Audit entries and connection
// events name the user.
func TestGrantsAreKeptPerUser(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) }))
	defer up.Close()
	file := filepath.Join(t.TempDir(), "grants.json")
	var asked atomic.Int32
	var answer atomic.Value
	answer.Store(Always)
	confirm := ConfirmFunc(func(_ context.Context, req ConfirmRequest) (Decision, error) {
		asked.Add(1)
		return answer.Load().(Decision), nil
	})
	var entries []Entry
	var events []ConnectionEvent
	t.Setenv("NETGATE_USERS_TEST", "users-test-secret")
	origin := "https://example.com:" + portOf(t, up.URL)
	cfg := Config{Connections: []Connection{{Name: "up", Origin: origin, Header: "X-Key", SecretEnv: "NETGATE_USERS_TEST"}}}
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{up}, WithConfirmer(confirm), WithGrantsFile(file),
		WithAuditSink(func(e Entry) { entries = append(entries, e) }),
		WithConnectionHook(func(e ConnectionEvent) { events = append(events, e) }))

	alice := App{User: "alice", Key: "todo", Name: "Todo"}
	bob := App{User: "bob", Key: "todo", Name: "Todo"}
	wantOK(t, get(g, alice, origin+"/a", nil), 200)
	if asked.Load() != 1 {
		t.Fatalf("asked %d times for alice's first request", asked.Load())
	}
	wantOK(t, get(g, alice, origin+"/a", nil), 200) // granted now
	if asked.Load() != 1 {
		t.Fatalf("alice was asked again after her always")
	}
	answer.Store(Deny)
	wantCode(t, get(g, bob, origin+"/b", nil), frame.CodeNetConfirmDenied)
	if asked.Load() != 2 {
		t.Fatalf("bob was not asked: alice's grant let him through")
	}
	if len(events) != 1 || events[0].User != "alice" || events[0].App != "todo" || events[0].State != StateConnected {
		t.Errorf("connection events %+v, want one for alice's grant", events)
	}
	if len(entries) != 3 || entries[0].User != "alice" || entries[2].User != "bob" {
		t.Errorf("audit entries %+v, want alice, alice, bob", entries)
	}
	if got := g.Grants("todo"); len(got) != 0 {
		t.Errorf("the local user sees grants %+v of signed-in users", got)
	}

	// The file keeps them apart across a restart.
	g2 := loopGate(t, cfg, exampleRes(), []*httptest.Server{up}, WithConfirmer(confirm), WithGrantsFile(file))
	wantOK(t, get(g2, alice, origin+"/a", nil), 200)
	wantCode(t, get(g2, bob, origin+"/b", nil), frame.CodeNetConfirmDenied)
	if asked.Load() != 3 {
		t.Errorf("after a restart: asked %d times, want only bob asked again", asked.Load())
	}
}
