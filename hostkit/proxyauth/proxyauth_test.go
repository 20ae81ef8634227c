package proxyauth

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

const (
	current  = "0123456789abcdef0123456789abcdef-current"
	previous = "0123456789abcdef0123456789abcdef-previous"
)

// serveAuth serves, on a real loopback socket, the user auth names or 401.
func serveAuth(t *testing.T, auth func(*http.Request) (string, error)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := auth(r)
		if err != nil {
			http.Error(w, "not signed in", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, u)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func get(t *testing.T, url string, h http.Header) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header = h
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A client that sends the user header itself is refused unless it also
// carries the proxy's secret (current or previous, during a rotation).
func TestUserHeaderNeedsTheProxysSecret(t *testing.T) {
	auth, err := New(Config{UserHeader: "X-Forwarded-User", Secrets: []string{current, previous}})
	if err != nil {
		t.Fatal(err)
	}
	url := serveAuth(t, auth)
	for _, tc := range []struct {
		name string
		h    http.Header
		want int
		user string
	}{
		{"header alone", http.Header{"X-Forwarded-User": {"alice"}}, 401, ""},
		{"guessed secret", http.Header{"X-Forwarded-User": {"alice"}, SecretHeader: {strings.Repeat("0", 64)}}, 401, ""},
		{"secret's prefix", http.Header{"X-Forwarded-User": {"alice"}, SecretHeader: {current[:32]}}, 401, ""},
		{"client's copy beside the proxy's", http.Header{"X-Forwarded-User": {"alice"}, SecretHeader: {"x", current}}, 401, ""},
		{"two users", http.Header{"X-Forwarded-User": {"mallory", "alice"}, SecretHeader: {current}}, 401, ""},
		{"secret, no user", http.Header{SecretHeader: {current}}, 401, ""},
		{"current secret", http.Header{"X-Forwarded-User": {"alice"}, SecretHeader: {current}}, 200, "alice"},
		{"previous secret", http.Header{"X-Forwarded-User": {"bob"}, SecretHeader: {previous}}, 200, "bob"},
	} {
		code, body := get(t, url, tc.h)
		if code != tc.want || (tc.want == 200 && body != tc.user) {
			t.Errorf("%s: HTTP %d %q, want %d %q", tc.name, code, body, tc.want, tc.user)
		}
	}
}

// Once a rotation is over (the old line removed from the file, the host
// restarted), the old secret is refused like any other.
func TestRetiredSecretRefused(t *testing.T) {
	auth, err := New(Config{UserHeader: "X-Forwarded-User", Secrets: []string{current}})
	if err != nil {
		t.Fatal(err)
	}
	url := serveAuth(t, auth)
	if code, _ := get(t, url, http.Header{"X-Forwarded-User": {"bob"}, SecretHeader: {previous}}); code != 401 {
		t.Errorf("the retired secret got HTTP %d", code)
	}
	if code, u := get(t, url, http.Header{"X-Forwarded-User": {"bob"}, SecretHeader: {current}}); code != 200 || u != "bob" {
		t.Errorf("the current secret got HTTP %d %q", code, u)
	}
}

// With trusted addresses, a connection from anywhere else is refused with
// the header; from the proxy's address it is believed.
func TestUserHeaderOnlyFromTrustedAddresses(t *testing.T) {
	elsewhere, err := New(Config{UserHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("10.9.0.0/16")}})
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := get(t, serveAuth(t, elsewhere), http.Header{"X-Forwarded-User": {"alice"}}); code != 401 {
		t.Errorf("a connection from outside the trusted prefix got HTTP %d", code)
	}
	// The address is the connection's own: a client naming the proxy's
	// address in a forwarding header is still refused.
	for _, h := range []string{"X-Forwarded-For", "X-Real-Ip", "Forwarded", "True-Client-Ip", "X-Client-Ip"} {
		v := "10.9.0.7"
		if h == "Forwarded" {
			v = "for=10.9.0.7"
		}
		if code, _ := get(t, serveAuth(t, elsewhere), http.Header{"X-Forwarded-User": {"alice"}, h: {v}}); code != 401 {
			t.Errorf("a client claiming the proxy's address in %s got HTTP %d", h, code)
		}
	}
	here, err := New(Config{UserHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Secrets: []string{current}})
	if err != nil {
		t.Fatal(err)
	}
	url := serveAuth(t, here)
	if code, _ := get(t, url, http.Header{"X-Forwarded-User": {"alice"}}); code != 401 {
		t.Errorf("trusted address without the secret (both configured) got HTTP %d", code)
	}
	if code, u := get(t, url, http.Header{"X-Forwarded-User": {"alice"}, SecretHeader: {current}}); code != 200 || u != "alice" {
		t.Errorf("the proxy's request got HTTP %d %q", code, u)
	}
}

// A configuration that would believe the header from anyone is refused.
func TestNewRefusesTheHeaderAlone(t *testing.T) {
	for _, cfg := range []Config{
		{UserHeader: "X-Forwarded-User"},
		{UserHeader: "X-Forwarded-User", Secrets: []string{"short"}},
		{Secrets: []string{current}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
}
