package netgate

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// script is a Confirmer that answers from a list and records what it was
// shown.
type script struct {
	mu      sync.Mutex
	answers []Decision
	asked   []ConfirmRequest
}

func (s *script) ConfirmNet(_ context.Context, req ConfirmRequest) (Decision, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if len(s.answers) == 0 {
		return "", errors.New("script exhausted")
	}
	d := s.answers[0]
	s.answers = s.answers[1:]
	return d, nil
}

func TestConfirmGate(t *testing.T) {
	const token = "grant-secret-123456"
	t.Setenv("NETGATE_GRANT", token)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Connections: []Connection{{Name: "svc", Origin: origin, Header: "X-Svc", SecretEnv: "NETGATE_GRANT"}}}
	grants := filepath.Join(t.TempDir(), "data", "net-grants.json")
	sc := &script{answers: []Decision{Once, Deny, Always}}
	var events []ConnectionEvent
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(sc), WithGrantsFile(grants),
		WithConnectionHook(func(e ConnectionEvent) { events = append(events, e) }))
	url := origin + "/items?id=7#frag"

	// once: allowed, nothing stored, asked again next time.
	wantOK(t, get(g, app1, url, nil), 200)
	if _, err := os.Stat(grants); err == nil {
		t.Fatal("once wrote a grant")
	}
	// deny.
	e := wantCode(t, get(g, app1, url, nil), frame.CodeNetConfirmDenied)
	if e.Retryable {
		t.Fatal("deny is not retryable")
	}
	// always: stored, not asked again.
	wantOK(t, get(g, app1, url, nil), 200)
	wantOK(t, get(g, app1, origin+"/other", nil), 200)
	if len(sc.asked) != 3 {
		t.Fatalf("asked %d times", len(sc.asked))
	}
	want := ConfirmRequest{AppKey: "todo", AppName: "Todo", Method: "GET", URL: origin + "/items?id=7", Origin: origin}
	if sc.asked[0] != want {
		t.Fatalf("the dialog showed %+v, want %+v", sc.asked[0], want)
	}
	if len(events) != 1 || events[0].State != StateConnected || events[0].Connection != "svc" {
		t.Fatalf("events %v", events)
	}
	b, err := os.ReadFile(grants)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"app": "todo"`) || !strings.Contains(string(b), origin) || strings.Contains(string(b), token) {
		t.Fatalf("grants file %s", b)
	}
	// The grant is the app's, per origin: another app and another origin ask.
	wantCode(t, get(g, App{Key: "notes", Name: "Notes", Confirmer: &script{answers: []Decision{Deny}}}, url, nil), frame.CodeNetConfirmDenied)
	if got := g.Grants("todo"); len(got) != 1 || got[0].Origin != origin {
		t.Fatalf("grants %v", got)
	}

	// Persisted: a new gate on the same file does not ask.
	g2 := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithGrantsFile(grants))
	wantOK(t, get(g2, app1, url, nil), 200)
	// No confirmer and no grant: NET_NOT_APPROVED.
	wantCode(t, get(g2, App{Key: "fresh"}, url, nil), frame.CodeNetNotApproved)
	// A confirmer that fails to ask is NET_NOT_APPROVED too.
	wantCode(t, get(g2, App{Key: "fresh", Confirmer: &script{}}, url, nil), frame.CodeNetNotApproved)
	// A confirmer with an answer the gate does not know.
	wantCode(t, get(g2, App{Key: "fresh", Confirmer: &script{answers: []Decision{"maybe"}}}, url, nil), frame.CodeNetNotApproved)

	// Revoke: asked again.
	if err := g2.Revoke("todo", origin); err != nil {
		t.Fatal(err)
	}
	wantCode(t, get(g2, app1, url, nil), frame.CodeNetNotApproved)
	g3 := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithGrantsFile(grants))
	wantCode(t, get(g3, app1, url, nil), frame.CodeNetNotApproved)
}

func TestImportedApp(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	grants := filepath.Join(t.TempDir(), "grants.json")
	sc := &script{answers: []Decision{Always}}
	g := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(sc), WithGrantsFile(grants))
	imp := App{Key: "imported-app", Name: "Shared", Imported: true}
	url := exampleURL(t, srv, "/")
	wantCode(t, get(g, imp, url, nil), frame.CodeNetImportedUnapproved)
	if c := g.Check(context.Background(), imp, "GET", url); c.Code != frame.CodeNetImportedUnapproved {
		t.Fatalf("check %+v", c)
	}
	if len(sc.asked) != 0 {
		t.Fatal("an unreviewed import must not prompt")
	}
	if err := g.Review(imp.Key); err != nil {
		t.Fatal(err)
	}
	wantOK(t, get(g, imp, url, nil), 200)
	if len(sc.asked) != 1 {
		t.Fatalf("asked %d", len(sc.asked))
	}
	// Reviews persist; Forget (re-import) drops grants and the review.
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithGrantsFile(grants))
	wantOK(t, get(g2, imp, url, nil), 200)
	if err := g2.Forget(imp.Key); err != nil {
		t.Fatal(err)
	}
	wantCode(t, get(g2, imp, url, nil), frame.CodeNetImportedUnapproved)
}

func TestGrantsFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "grants.json")
	os.WriteFile(bad, []byte("{not json"), 0o600)
	if _, err := New(Config{}, WithGrantsFile(bad)); err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "move it away") {
		t.Fatalf("err %v", err)
	}
	// A failed save leaves the grants as they were, in memory and on disk.
	path := filepath.Join(dir, "grants2.json")
	g, err := New(Config{}, WithGrantsFile(path))
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Grant("a", "https://one.example"); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(path)
	// Swap the file for a non-empty directory: the rename over it fails.
	os.Rename(path, path+".saved")
	os.MkdirAll(filepath.Join(path, "block"), 0o700)
	if err := g.Grant("a", "https://two.example"); err == nil {
		t.Fatal("a save that cannot rename succeeded")
	}
	if got := g.Grants("a"); len(got) != 1 || got[0].Origin != "https://one.example" {
		t.Fatalf("grants after a failed save: %v", got)
	}
	if after, _ := os.ReadFile(path + ".saved"); string(after) != string(before) {
		t.Fatal("the old file changed")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".grants-*")); len(left) != 0 {
		t.Fatalf("temp files left: %v", left)
	}
}
