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

// A product's settings page acts for one signed-in user: GrantFor,
// RevokeFor and ForgetFor change that user's grants only, announce to that
// user only, and GrantsFor lists that user's grants only.
func TestSettingsActForOneUser(t *testing.T) {
	up := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("hi")) }))
	defer up.Close()
	var asked atomic.Int32
	confirm := ConfirmFunc(func(context.Context, ConfirmRequest) (Decision, error) {
		asked.Add(1)
		return Deny, nil
	})
	var events []ConnectionEvent
	t.Setenv("NETGATE_USERS_TEST", "users-test-secret")
	origin := "https://example.com:" + portOf(t, up.URL)
	cfg := Config{Connections: []Connection{{Name: "up", Origin: origin, Header: "X-Key", SecretEnv: "NETGATE_USERS_TEST"}}}
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{up}, WithConfirmer(confirm),
		WithConnectionHook(func(e ConnectionEvent) { events = append(events, e) }))
	alice := App{User: "alice", Key: "todo", Name: "Todo"}
	bob := App{User: "bob", Key: "todo", Name: "Todo"}

	for _, u := range []string{"alice", "bob"} {
		if err := g.GrantFor(u, "todo", origin+"/settings"); err != nil {
			t.Fatal(err)
		}
	}
	if len(events) != 2 || events[0].User != "alice" || events[1].User != "bob" || events[1].State != StateConnected {
		t.Fatalf("events %+v, want alice's and bob's connected", events)
	}
	wantOK(t, get(g, alice, origin+"/a", nil), 200)
	wantOK(t, get(g, bob, origin+"/b", nil), 200)
	if asked.Load() != 0 {
		t.Fatalf("asked %d times with both granted", asked.Load())
	}

	if err := g.RevokeFor("alice", "todo", origin); err != nil {
		t.Fatal(err)
	}
	if len(events) != 3 || events[2].User != "alice" || events[2].State != StateRevoked {
		t.Fatalf("events %+v, want alice's revoked last", events)
	}
	if got := g.GrantsFor("alice", "todo"); len(got) != 0 {
		t.Errorf("alice still holds %+v", got)
	}
	if got := g.GrantsFor("bob", "todo"); len(got) != 1 || got[0].User != "bob" || got[0].Origin != origin {
		t.Errorf("bob holds %+v, want his grant for %s", got, origin)
	}
	wantCode(t, get(g, alice, origin+"/a", nil), frame.CodeNetConfirmDenied) // asked again, says no
	wantOK(t, get(g, bob, origin+"/b", nil), 200)
	if asked.Load() != 1 {
		t.Errorf("asked %d times, want alice once", asked.Load())
	}

	if err := g.ForgetFor("bob", "todo"); err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || events[3].User != "bob" || events[3].State != StateRevoked {
		t.Fatalf("events %+v, want bob's revoked last", events)
	}
	if got := g.GrantsFor("bob", "todo"); len(got) != 0 {
		t.Errorf("bob still holds %+v after ForgetFor", got)
	}
}
