package hostkit_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/relayclient"
)

// opsUser is the signed-in user of TestOpsMetrics: no label may name it.
const opsUser = "canary-user-5b1e@example.com"

// startOpsHost starts a host serving one app ("hello") with storage, the
// governed network, a signed-in user and the operator's endpoints on a
// listener of their own, and a page connected to it.
func startOpsHost(t *testing.T) (*hostkit.Host, *relayclient.Client) {
	t.Helper()
	h, err := hostkit.New(
		hostkit.WithApps(hostkit.RawApp("hello", []byte(`<!doctype html><title>Hello</title><p>hi`))),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithNet(netgate.Config{}),
		hostkit.WithAuthenticate(func(*http.Request) (string, error) { return opsUser, nil }),
		hostkit.WithOpsAddr("127.0.0.1:0"),
	)
	if err != nil {
		t.Fatal(err)
	}
	go h.Serve()
	t.Cleanup(func() { _ = h.Shutdown(context.Background()) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := relayclient.Dial(ctx, h.Origin(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return h, c
}

// scrape GETs the operator's /metrics over HTTP and parses it.
func scrape(t *testing.T, h *hostkit.Host) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	body := get(t, h.OpsURL()+"/metrics", http.StatusOK)
	fams, err := new(expfmt.TextParser).TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams, body
}

// get GETs url and checks its status.
func get(t *testing.T, url string, status int) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != status {
		t.Fatalf("GET %s: %d %s, want %d", url, res.StatusCode, b, status)
	}
	return string(b)
}

// value is the sample of family name whose labels include want (summed
// over the others; a histogram's count), 0 when none.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) float64 {
	f := fams[name]
	if f == nil {
		return 0
	}
	sum := 0.0
	for _, m := range f.Metric {
		ok := true
		for k, v := range want {
			found := false
			for _, l := range m.Label {
				if l.GetName() == k && l.GetValue() == v {
					found = true
				}
			}
			ok = ok && found
		}
		if !ok {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		case m.Histogram != nil:
			sum += float64(m.Histogram.GetSampleCount())
		}
	}
	return sum
}

// TestOpsMetrics drives requests through a real host (a page on the
// relay's WebSocket) and scrapes /metrics over HTTP: the per-app request
// and error counters, the agent's latency, the net gate's decision and the
// instances moved, and no label carries the user, the SQL or the key.
func TestOpsMetrics(t *testing.T) {
	h, c := startOpsHost(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inst, err := c.Mount(ctx, "s1", "hello")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := scrape(t, h)
	if got := value(before, "snug_instances", nil); got != 1 {
		t.Errorf("snug_instances = %v, want 1", got)
	}
	for _, r := range []frame.DBRequest{
		{Op: frame.OpKvSet, Key: new("canary-key"), Value: []byte(`1`)},
		{Op: frame.OpKvGet, Key: new("canary-key")},
		{Op: frame.OpExec, SQL: new("SELECT canary_column FROM nowhere")},
	} {
		if _, err := c.DB(ctx, "s1", inst, r); err != nil {
			t.Fatal(err)
		}
	}
	rid := c.NextID()
	if ans, err := c.Request(ctx, "s1", &frame.AppMessage{RequestID: rid, InstanceID: inst, AppID: "test.hello", Action: "greet"}, rid); err != nil {
		t.Fatal(err)
	} else if e := frame.ErrorOf(ans); e != nil {
		t.Fatalf("app-message answered %s", e.Code)
	}
	net, err := c.Net(ctx, "s1", inst, frame.NetRequest{URL: "https://canary-host.example/x", Method: frame.MethodGet})
	if err != nil {
		t.Fatal(err)
	}
	if net.OK || net.Error == nil {
		t.Fatalf("net-request = %+v, want refused (the page denies the dialog)", net)
	}

	fams, body := scrape(t, h)
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"snug_requests_total", map[string]string{"app": "hello", "kind": "db"}, 3},
		{"snug_requests_total", map[string]string{"app": "hello", "kind": "agent"}, 1},
		{"snug_requests_total", map[string]string{"app": "hello", "kind": "net"}, 1},
		{"snug_request_errors_total", map[string]string{"app": "hello", "kind": "db", "code": frame.CodeDBSQLError}, 1},
		{"snug_request_errors_total", map[string]string{"app": "hello", "kind": "net", "code": net.Error.Code}, 1},
		{"snug_agent_request_seconds", map[string]string{"outcome": "ok"}, 1},
		{"snug_net_decisions_total", map[string]string{"decision": "refused", "code": net.Error.Code}, 1},
	} {
		if got := value(fams, c.name, c.labels); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	for _, secret := range []string{opsUser, "canary-key", "canary_column", "canary-host", inst} {
		if strings.Contains(body, secret) {
			t.Errorf("/metrics names %q: labels must not carry user data", secret)
		}
	}
	// The runner's address is the users': it does not serve the metrics.
	get(t, h.Origin()+"/metrics", http.StatusNotFound)
}

// TestOpsProbes: /healthz and /readyz answer on the operator's address and
// the runner's; /readyz fails once the store is closed, and says so.
func TestOpsProbes(t *testing.T) {
	h, _ := startOpsHost(t)
	for _, base := range []string{h.OpsURL(), h.Origin()} {
		if got := get(t, base+"/healthz", http.StatusOK); got != "ok\n" {
			t.Errorf("%s/healthz = %q", base, got)
		}
		if got := get(t, base+"/readyz", http.StatusOK); got != "ready\n" {
			t.Errorf("%s/readyz = %q", base, got)
		}
	}
	if err := h.Store.Close(); err != nil {
		t.Fatal(err)
	}
	for _, base := range []string{h.OpsURL(), h.Origin()} {
		if got := get(t, base+"/readyz", http.StatusServiceUnavailable); !strings.Contains(got, "store") {
			t.Errorf("%s/readyz = %q, want the store named", base, got)
		}
		get(t, base+"/healthz", http.StatusOK) // alive all the same
	}
}
