package cli

import (
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
)

// TestServeMetricsAddr: serve --metrics-addr answers /metrics, /healthz
// and /readyz there, and the counters moved by a request through the
// runner's relay are in it, labelled with the app's key.
func TestServeMetricsAddr(t *testing.T) {
	var ops atomic.Value
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv,
		metricsAddr: "127.0.0.1:0", ready: func(h *hostkit.Host) { ops.Store(h.OpsURL()) }}
	requestThroughServe(t, o, frame.TypeDBRequest, `"op":"kvGet","key":"k"`)
	base, _ := ops.Load().(string)
	if base == "" {
		t.Fatal("serve --metrics-addr: the host has no operator's address")
	}
	get := func(path string) string {
		t.Helper()
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return string(b)
	}
	if body := get("/metrics"); !strings.Contains(body, `snug_requests_total{app="hello",kind="db"} 1`) {
		t.Errorf("/metrics has no kvGet of hello:\n%s", body)
	}
	get("/healthz")
	get("/readyz")
}
