package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/server"
)

type catalog map[string]string

func (c catalog) Apps() []server.AppInfo {
	var out []server.AppInfo
	for k := range c {
		out = append(out, server.AppInfo{App: k, URL: server.AppPath(k), DisplayName: k})
	}
	return out
}

func (c catalog) Document(_ context.Context, key string) ([]byte, bool, error) {
	d, ok := c[key]
	return []byte(d), ok, nil
}

func startServer(t *testing.T) string {
	t.Helper()
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "relay", http.StatusTeapot) })
	s, err := server.New(server.Options{Catalog: catalog{"todo": "<!doctype html><p>todo"}, Relay: relay})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	return "http://" + ln.Addr().String()
}

func get(t *testing.T, url string) (*http.Response, string) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func TestAppDocumentHeaders(t *testing.T) {
	base := startServer(t)
	res, body := get(t, base+"/apps/todo/")
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	h := res.Header
	csp := h.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", "sandbox allow-scripts", "frame-ancestors " + base} {
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
	if !strings.HasPrefix(body, "<!doctype html>"+string(server.Prelude)) {
		t.Errorf("body %q does not start with the prelude", body)
	}
	if res, _ := get(t, base+"/apps/nope/"); res.StatusCode != 404 {
		t.Errorf("unknown app: status %d", res.StatusCode)
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
	if !strings.Contains(csp, "frame-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("runner CSP %q", csp)
	}
	if !strings.Contains(body, `id="inspector"`) {
		t.Error("runner page lacks the inspector")
	}
	res, body = get(t, base+"/apps.json")
	var list struct{ Apps []server.AppInfo }
	if err := json.Unmarshal([]byte(body), &list); err != nil || len(list.Apps) != 1 || list.Apps[0].URL != "/apps/todo/" {
		t.Errorf("apps.json = %s (%v)", body, err)
	}
	if res, _ := get(t, base+"/ws"); res.StatusCode != http.StatusTeapot {
		t.Errorf("/ws did not reach the relay: %d", res.StatusCode)
	}
}
