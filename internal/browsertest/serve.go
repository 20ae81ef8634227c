package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Server is what ServeHost runs: hostkit's *Host has these methods.
type Server interface {
	Serve() error
	Shutdown(context.Context) error
}

// ServeHost serves s until the test ends, then shuts it down (within 10 s)
// and reports an error from either as a test error.
func ServeHost(t testing.TB, s Server) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
}

// ServePages serves pages (path → HTML document) on loopback until the
// test ends and returns the server's base URL; other paths get 404.
func ServePages(t testing.TB, pages map[string]string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(p))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
