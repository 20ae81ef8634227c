package hostkit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/snuggen/snuggen/hostkit/metrics"
)

// WithMetrics makes the host count into m (hostkit/metrics) instead of a
// Metrics of its own: a host in replicated mode gives its Cluster and
// itself the same one, so /metrics has both.
func WithMetrics(m *metrics.Metrics) Option {
	return func(c *config) error {
		if m == nil {
			return errors.New("hostkit: WithMetrics(nil)")
		}
		c.metrics = m
		return nil
	}
}

// WithOpsAddr serves the operator's endpoints on a listener of their own
// at addr: GET /metrics (Prometheus text format), /healthz and /readyz
// (see OpsHandler). It is meant for the operator's network only: the
// metrics name installed apps and count their requests (never a user, a
// URL or a request's content). The runner's address answers /healthz and
// /readyz too, but never /metrics.
func WithOpsAddr(addr string) Option {
	return func(c *config) error { c.opsAddr = addr; return nil }
}

// readyTimeout bounds one readiness check (a PostgreSQL round trip in
// replicated mode).
const readyTimeout = 2 * time.Second

// Ready reports whether the host can serve requests: it is not shutting
// down, its store is open, and in replicated mode the Cluster is ready (it
// implements Ready(ctx) error: PostgreSQL answers and the leases are being
// renewed). nil means ready; the error says what is not.
func (h *Host) Ready(ctx context.Context) error {
	if h.Broker != nil && h.Broker.Closing() {
		return errors.New("the host is shutting down")
	}
	if h.Store != nil {
		if err := h.Store.Ready(); err != nil {
			return fmt.Errorf("store: %w", err)
		}
	}
	if r, ok := h.Cluster.(interface{ Ready(context.Context) error }); ok {
		if err := r.Ready(ctx); err != nil {
			return err
		}
	}
	return nil
}

// OpsHandler serves the operator's endpoints:
//
//	GET /metrics  the host's metrics (hostkit/metrics), Prometheus text format
//	GET /healthz  200 "ok" while the process serves (liveness)
//	GET /readyz   200 "ready", or 503 with the reason (Ready)
func (h *Host) OpsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h.Metrics.Handler())
	probes := h.probes()
	mux.Handle("GET /healthz", probes)
	mux.Handle("GET /readyz", probes)
	return mux
}

// probes answers /healthz and /readyz (on the runner's address too).
func (h *Host) probes() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if r.URL.Path == "/healthz" {
			_, _ = fmt.Fprintln(w, "ok")
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		if err := h.Ready(ctx); err != nil {
			http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		_, _ = fmt.Fprintln(w, "ready")
	})
}

// OpsURL is the operator's endpoints' base address (http://host:port), or
// "" without WithOpsAddr.
func (h *Host) OpsURL() string {
	if h.opsLn == nil {
		return ""
	}
	return "http://" + h.opsLn.Addr().String()
}

// listenOps opens WithOpsAddr's listener.
func (h *Host) listenOps(addr string) error {
	if addr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("hostkit: listen on %s for the operator's endpoints: %w", addr, err)
	}
	h.opsLn = ln
	h.opsSrv = &http.Server{Handler: h.OpsHandler(), ReadHeaderTimeout: 10 * time.Second}
	return nil
}

// serveOps serves the operator's endpoints until Shutdown (a no-op without
// WithOpsAddr). Its goroutine is the host's: Shutdown waits for it.
func (h *Host) serveOps() {
	if h.opsSrv == nil {
		return
	}
	h.opsOnce.Do(func() {
		h.opsDone = make(chan struct{})
		go func() {
			defer close(h.opsDone)
			_ = h.opsSrv.Serve(h.opsLn)
		}()
	})
}

// closeOps stops the operator's endpoints: last in Shutdown, so /readyz
// says "shutting down" while the rest ends.
func (h *Host) closeOps(ctx context.Context) error {
	if h.opsSrv == nil {
		return nil
	}
	err := h.opsSrv.Shutdown(ctx)
	_ = h.opsLn.Close()
	h.opsOnce.Do(func() {}) // never served: no goroutine to wait for
	if h.opsDone != nil {
		<-h.opsDone
	}
	if err != nil {
		return fmt.Errorf("hostkit: operator's endpoints: %w", err)
	}
	return nil
}
