package cluster

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/snuggen/snuggen/hostkit/metrics"
)

// gathered is the sample of family name with the labels want (summed over
// the others; a histogram's count) in m's registry.
func gathered(t *testing.T, m *metrics.Metrics, name string, want map[string]string) float64 {
	t.Helper()
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	next:
		for _, s := range f.Metric {
			for k, v := range want {
				found := false
				for _, l := range s.Label {
					found = found || (l.GetName() == k && l.GetValue() == v)
				}
				if !found {
					continue next
				}
			}
			sum += s.GetCounter().GetValue() + s.GetGauge().GetValue() + float64(s.GetHistogram().GetSampleCount())
		}
	}
	return sum
}

// TestClusterMetrics: a write through the owner, a read forwarded from
// another replica and a hand-over move the counters of each replica's own
// Metrics — leases taken and held, acknowledgements, forwards, restores
// and object-store calls — and Ready holds until the replica closes.
func TestClusterMetrics(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	ma, mb := metrics.New(), metrics.New()
	a := openClusterWith(t, Config{Postgres: pg, ObjectStore: s3.url("ops"), LeaseTTL: 2 * time.Second, Secrets: []string{testSecret}, Metrics: ma})
	b := openClusterWith(t, Config{Postgres: pg, ObjectStore: s3.url("ops"), LeaseTTL: 2 * time.Second, Secrets: []string{testSecret}, Metrics: mb})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, c := range []*Cluster{a, b} {
		if err := c.Ready(ctx); err != nil {
			t.Fatalf("Ready = %v", err)
		}
	}
	mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
	mustExec(t, a, "alice", "todo", "INSERT INTO t VALUES (1)")
	if r := mustExec(t, b, "alice", "todo", "SELECT count(*) FROM t"); one(r) != "1" {
		t.Fatalf("through b: %v", r.Rows)
	}
	for _, c := range []struct {
		m      *metrics.Metrics
		name   string
		labels map[string]string
		min    float64
	}{
		{ma, "snug_cluster_leases_taken_total", map[string]string{"how": "free"}, 1},
		{ma, "snug_cluster_leases_held", nil, 1},
		{ma, "snug_cluster_ack_seconds", nil, 2},
		{ma, "snug_objstore_requests_total", map[string]string{"op": "put"}, 1},
		{mb, "snug_cluster_forwards_total", map[string]string{"outcome": "ok"}, 1},
	} {
		if got := gathered(t, c.m, c.name, c.labels); got < c.min {
			t.Errorf("%s%v = %v, want at least %v", c.name, c.labels, got, c.min)
		}
	}
	if got := gathered(t, ma, "snug_objstore_errors_total", nil); got != 0 {
		t.Errorf("snug_objstore_errors_total = %v, want 0", got)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := a.Ready(ctx); err == nil {
		t.Error("Ready = nil after Close")
	}
	mustExec(t, b, "alice", "todo", "INSERT INTO t VALUES (2)")
	if got := gathered(t, mb, "snug_cluster_restores_total", map[string]string{"outcome": "ok"}); got != 1 {
		t.Errorf("b's restores = %v, want 1 (it took the database over from a's upload)", got)
	}
	if got := gathered(t, mb, "snug_cluster_leases_held", nil); got != 1 {
		t.Errorf("b's leases held = %v, want 1", got)
	}
}

// TestClusterNotReadyWithoutPostgres: a replica whose PostgreSQL stops
// answering it (its database refuses connections, its sessions ended) is
// not ready, and says why; once PostgreSQL answers again it is ready.
func TestClusterNotReadyWithoutPostgres(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	a := openCluster(t, pg, s3.url("ready"), 2*time.Second)
	mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := a.Ready(ctx); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	name := pg[strings.LastIndex(pg, "/")+1 : strings.Index(pg, "?")]
	admin, err := pgx.Connect(ctx, postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	allow := func(on bool) {
		t.Helper()
		if _, err := admin.Exec(ctx, fmt.Sprintf("ALTER DATABASE %s ALLOW_CONNECTIONS %t", name, on)); err != nil {
			t.Fatal(err)
		}
	}
	allow(false)
	defer allow(true) // before the replica's Close (deferred later, run earlier)
	if _, err := admin.Exec(ctx, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", name); err != nil {
		t.Fatal(err)
	}
	wait := func(ready bool) error {
		t.Helper()
		for {
			err := a.Ready(ctx)
			if (err == nil) == ready {
				return err
			}
			if ctx.Err() != nil {
				t.Fatalf("Ready = %v, want ready=%v", err, ready)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if err := wait(false); !strings.Contains(err.Error(), "PostgreSQL") {
		t.Errorf("Ready = %v, want PostgreSQL named", err)
	}
	allow(true)
	wait(true)
}
