package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/server"
	"github.com/snuggen/snuggen/internal/testenv"
)

type catalog map[string]string

func (c catalog) Apps() []server.AppInfo {
	var out []server.AppInfo
	for k := range c {
		out = append(out, server.AppInfo{App: k, DisplayName: k})
	}
	return out
}

func (c catalog) Document(_ context.Context, key string) ([]byte, bool, error) {
	d, ok := c[key]
	return []byte(d), ok, nil
}

func startServer(t *testing.T) string {
	t.Helper()
	s := startServerFor(t, catalog{"todo": "<!doctype html><p>todo"})
	return s.Origin()
}

func startServerFor(t *testing.T, c catalog) *server.Server {
	t.Helper()
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "relay", http.StatusTeapot) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Options{Catalog: c, Relay: relay, Origin: "http://" + ln.Addr().String()})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("serve: %v", err)
		}
	})
	return s
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := testenv.LocalhostClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestAppDocumentHeaders(t *testing.T) {
	base := startServer(t)
	port := base[strings.LastIndex(base, ":")+1:]
	res, body := get(t, "http://todo.localhost:"+port+"/")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	h := res.Header
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", "require-trusted-types-for 'script'", "trusted-types default", "sandbox allow-scripts", "frame-ancestors " + base} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Errorf("headers %v", h)
	}
	pp := h.Get("Permissions-Policy")
	for _, f := range []string{"camera=()", "microphone=()", "geolocation=()", "usb=()", "payment=()"} {
		if !strings.Contains(pp, f) {
			t.Errorf("Permissions-Policy %q lacks %s", pp, f)
		}
	}
	if !strings.HasPrefix(body, "<!DOCTYPE html><html><head><script>"+server.Prelude()+"</script>") {
		t.Errorf("body %q does not start with the prelude", body)
	}
	if res, _ := get(t, "http://nope.localhost:"+port+"/"); res.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("unknown app: status %d, want 421", res.StatusCode)
	}
	if res, _ := get(t, base+"/apps/todo/"); res.StatusCode != 404 {
		t.Errorf("an app document on the runner's host: status %d, want 404", res.StatusCode)
	}
}

func TestRunnerPageHeaders(t *testing.T) {
	base := startServer(t)
	res, body := get(t, base+"/")
	h := res.Header
	if h.Get("Cross-Origin-Opener-Policy") != "same-origin" {
		t.Errorf("COOP = %q", h.Get("Cross-Origin-Opener-Policy"))
	}
	csp := h.Get("Content-Security-Policy")
	port := base[strings.LastIndex(base, ":")+1:]
	if !strings.Contains(csp, "frame-src http://*.localhost:"+port) || strings.Contains(csp, "'self'; frame") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("runner CSP %q", csp)
	}
	if !strings.Contains(body, `id="inspector"`) {
		t.Error("runner page lacks the inspector")
	}
	_, body = get(t, base+"/apps.json")
	var list struct{ Apps []server.AppInfo }
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Apps) != 1 || list.Apps[0].URL != "http://todo.localhost:"+port+"/" {
		t.Errorf("apps.json = %s (%v)", body, err)
	}
	if res, _ := get(t, base+"/ws"); res.StatusCode != http.StatusTeapot {
		t.Errorf("/ws did not reach the relay: %d", res.StatusCode)
	}
}

func TestAppLabels(t *testing.T) {
	for key, want := range map[string]string{"todo": "todo", "my-app2": "my-app2", "a": "a"} {
		if got := server.AppLabel(key); got != want {
			t.Errorf("AppLabel(%q) = %q, want %q", key, got, want)
		}
	}
	seen := map[string]string{}
	for _, key := range []string{"Todo", "todo", "my.app", "app", "my_app", "xn--app", "k--abc", "-x", "x-", strings.Repeat("a", 64), strings.Repeat("a", 63), "ab--cd"} {
		l := server.AppLabel(key)
		if !regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`).MatchString(l) {
			t.Errorf("AppLabel(%q) = %q: not a DNS label", key, l)
		}
		if other, dup := seen[l]; dup {
			t.Errorf("AppLabel(%q) = AppLabel(%q) = %q", key, other, l)
		}
		seen[l] = key
	}
}

// Each app's document answers only on its own host, at its root; the
// runner's routes only on the runner's address; any other Host is 421.
func TestRoutesByHost(t *testing.T) {
	s := startServerFor(t, catalog{"todo": "<!doctype html><p>todo", "My.App": "<!doctype html><p>mine"})
	base := s.Origin()
	port := base[strings.LastIndex(base, ":")+1:]
	mine := s.AppDocumentURL("My.App")
	if !strings.HasPrefix(mine, "http://k--") || !strings.HasSuffix(mine, ".localhost:"+port+"/") {
		t.Fatalf("AppDocumentURL(My.App) = %q", mine)
	}
	for _, c := range []struct {
		host, path string
		status     int
		has        string
	}{
		{"todo.localhost:" + port, "/", 200, "todo"},
		{"todo.localhost:" + port, "/?q=1", 200, "todo"},
		{strings.TrimSuffix(strings.TrimPrefix(mine, "http://"), "/"), "/", 200, "mine"},
		{"todo.localhost:" + port, "/apps.json", 404, ""},
		{"todo.localhost:" + port, "/ws", 404, ""},
		{"todo.localhost:" + port, "/index.html", 404, ""},
		{"todo.localhost:" + port, "/%2e/", 404, ""},
		{"TODO.localhost:" + port, "/", 421, ""},
		{"todo.localhost:1", "/", 421, ""},
		{"todo.localhost", "/", 421, ""},
		{"x.todo.localhost:" + port, "/", 421, ""},
		{"todo.localhost.evil.example:" + port, "/", 421, ""},
		{"my.app.localhost:" + port, "/", 421, ""},
		{"localhost:" + port, "/", 421, ""},
		{"127.0.0.1:" + port, "/", 200, "inspector"},
		{"127.0.0.1:" + port, "/apps/todo/", 404, ""},
		{"127.0.0.1:" + port, "/apps.json", 200, "todo.localhost"},
	} {
		req, err := http.NewRequest(http.MethodGet, base+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = c.host
		res, err := testenv.LocalhostClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != c.status || !strings.Contains(string(b), c.has) {
			t.Errorf("Host %q GET %s: %d %.100q, want %d with %q", c.host, c.path, res.StatusCode, b, c.status, c.has)
		}
		if c.status == 421 && !strings.Contains(string(b), "127.0.0.1:"+port) {
			t.Errorf("Host %q: the refusal %q does not name the server's own address", c.host, b)
		}
	}
	// Writes are not served anywhere.
	req, _ := http.NewRequest(http.MethodPost, base+"/apps.json", strings.NewReader("{}"))
	res, err := testenv.LocalhostClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /apps.json: %d, want 405", res.StatusCode)
	}
}
