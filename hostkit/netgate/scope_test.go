package netgate

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// ambiguousPaths are paths the gate reads as inside /v1/ and that servers
// in the wild route elsewhere (decoding %2F before routing, stripping ;
// parameters, merging or keeping //, reading %5C or \ as /, NFKC or
// overlong UTF-8, double decoding), with a word the refusal must say.
var ambiguousPaths = map[string]string{
	"/v1/..%2fadmin":                "encoded slash",
	"/v1/..%2Fadmin":                "encoded slash",
	"/v1/%2e%2e%2fadmin":            "encoded slash",
	"/v1/a%2Fb":                     "encoded slash",
	"/v1/..%5cadmin":                "encoded backslash",
	"/v1/..%5Cadmin":                "encoded backslash",
	"/v1/..;/admin":                 "path parameter",
	"/v1/..;jsessionid=1/admin":     "path parameter",
	"/v1/..%3b/admin":               "path parameter",
	"/v1/..%3B/admin":               "path parameter",
	"/v1//x":                        "empty segment",
	"/v1//admin/..":                 "empty segment",
	"/v1/x%00":                      "control character",
	"/v1/x%0d%0aX-Injected:%201":    "control character",
	"/v1/%c0%af..%c0%afadmin":       "UTF-8",
	"/v1/%C0%AE%C0%AE/admin":        "UTF-8",
	"/v1/%e0%80%afadmin":            "UTF-8",
	"/v1/..%252fadmin":              "encoded slash",
	"/v1/..%25252Fadmin":            "encoded slash",
	"/v1/%252e%252e/admin":          "dot segment",
	"/v1/%ef%bc%8f..%ef%bc%8fadmin": "fold",
	"/v1/%EF%BC%8E%EF%BC%8E/admin":  "fold",
	"/v1/..%E2%88%95admin":          "fold",
	"/v1/%e3%80%82%e3%80%82/admin":  "fold",
	"/v1/.../admin":                 "dot segment",
	"/v1/..%20/admin":               "dot segment",
}

// TestScopedCredentialAmbiguousPaths is issue 11 item 8: a credential scoped
// to /v1/ must not be sent with a path some server reads as outside /v1/.
// Each path is a real request to a loopback server that records the
// credentials it receives; each is refused before anything is sent, with
// NET_INVALID_REQUEST and the reason.
func TestScopedCredentialAmbiguousPaths(t *testing.T) {
	const token = "scoped-secret-0123456789"
	t.Setenv("NETGATE_SCOPED", token)
	var mu sync.Mutex
	var saw []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		saw = append(saw, r.RequestURI+" auth="+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/jump":
			http.Redirect(w, r, "/v1/..%2fadmin", http.StatusFound)
		default:
			io.WriteString(w, "ok")
		}
	}))
	defer srv.Close()
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Connections: []Connection{{Name: "v1", URLPrefix: origin + "/v1/", Header: "Authorization",
		ValueFormat: "Bearer {secret}", SecretEnv: "NETGATE_SCOPED"}}, Rate: Rate{PerMinute: 10000}}
	asked := 0
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(ConfirmFunc(func(context.Context, ConfirmRequest) (Decision, error) {
		asked++
		return Once, nil
	})))
	for path, why := range ambiguousPaths {
		r := get(g, app1, origin+path, nil)
		if r.OK || r.Error.Code != frame.CodeNetInvalidRequest {
			t.Fatalf("%s: %s", path, describeResp(r))
		}
		e := wantCode(t, r, frame.CodeNetInvalidRequest)
		if !strings.Contains(e.Message, why) || !strings.Contains(e.Message, `"v1"`) {
			t.Errorf("%s: message %q does not say %q", path, e.Message, why)
		}
		if c := g.Check(context.Background(), App{}, "GET", origin+path); c.Allow || c.Code != frame.CodeNetInvalidRequest {
			t.Errorf("check %s: %+v", path, c)
		}
	}
	if asked != 0 {
		t.Fatalf("ambiguous paths reached the dialog %d times", asked)
	}
	mu.Lock()
	if len(saw) != 0 {
		t.Fatalf("the server received %v", saw)
	}
	mu.Unlock()

	// Unambiguous paths keep working: in scope with the credential, out of
	// scope (the gate removes dot segments as servers do) without.
	wantOK(t, get(g, app1, origin+"/v1/items?q=a%2Fb;c//d", nil), 200)
	wantOK(t, get(g, app1, origin+"/v1/../admin", nil), 200)
	wantOK(t, get(g, app1, origin+"/v1/caf%C3%A9", nil), 200)
	// A same-origin redirect into an ambiguous path is refused too.
	wantCode(t, get(g, app1, origin+"/v1/jump", nil), frame.CodeNetRedirectBlocked)
	mu.Lock()
	want := []string{
		"/v1/items?q=a%2Fb;c//d auth=Bearer " + token,
		"/admin auth=",
		"/v1/caf%C3%A9 auth=Bearer " + token,
		"/v1/jump auth=Bearer " + token,
	}
	if strings.Join(saw, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the server received\n%s\nwant\n%s", strings.Join(saw, "\n"), strings.Join(want, "\n"))
	}
	mu.Unlock()

	// A connection for the whole origin has no scope to escape: the same
	// paths pass.
	g2 := loopGate(t, Config{Connections: []Connection{{Name: "all", Origin: origin, Header: "Authorization",
		SecretEnv: "NETGATE_SCOPED"}}}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	wantOK(t, get(g2, app1, origin+"/v1//x", nil), 200)
	wantOK(t, get(g2, app1, origin+"/v1/..%2fadmin", nil), 200)

	// A urlPrefix that is itself ambiguous is a config error naming it.
	_, err := New(Config{Connections: []Connection{{Name: "odd", URLPrefix: origin + "/v1;x/", Header: "X-Key", SecretEnv: "NETGATE_SCOPED"}}})
	if err == nil || !strings.Contains(err.Error(), "odd") || !strings.Contains(err.Error(), "path parameter") {
		t.Fatalf("config error %v", err)
	}
}
