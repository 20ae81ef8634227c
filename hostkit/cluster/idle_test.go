package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// fdsUnder counts this process's open descriptors on files under dir.
func fdsUnder(t testing.TB, dir string) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatalf("reading the open descriptors: %v", err)
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(target, dir+"/") {
			n++
		}
	}
	return n
}

func ownsNothing(c *Cluster) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.owned) == 0
}

// idleWindow is how long the test watches idle databases (IDLE_WINDOW=60s
// for the figures of docs/scale.md).
func idleWindow(t testing.TB) time.Duration {
	if v := os.Getenv("IDLE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("IDLE_WINDOW: %v", err)
		}
		return d
	}
	return 3 * time.Second
}

// An idle database is given up: a last upload, the lease freed, its files
// closed, and then it costs no object-store request and no descriptor,
// where one kept (IdleRelease below zero, as before) is listed and
// uploaded to all along. The next request takes it again and reuses the
// local copy (no download); a copy another owner wrote after is not reused.
func TestIdleDatabaseIsReleased(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	const ttl = 2 * time.Second
	cfg := func(idle time.Duration) Config {
		return Config{Postgres: pg, ObjectStore: s3.url("idle"), LeaseTTL: ttl, IdleRelease: idle, Secrets: []string{testSecret}}
	}
	a := openClusterWith(t, cfg(2*time.Second))
	b := openClusterWith(t, cfg(2*time.Second))
	kept := openClusterWith(t, cfg(-1))
	install(t, a, b, kept)
	for _, c := range []*Cluster{a, kept} {
		mustExec(t, c, c.ID(), "notes", "CREATE TABLE log(v TEXT)")
		mustExec(t, c, c.ID(), "notes", "INSERT INTO log VALUES ('one')")
	}
	if fdsUnder(t, a.dbDir) == 0 {
		t.Fatal("an owned database holds no descriptor: the count is wrong")
	}
	waitFor(t, "a to give its idle database up", func() bool { return ownsNothing(a) })
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	before := readLeaseRow(t, conn, a.ID(), "notes")
	if before.owner != "" {
		t.Fatalf("the idle database's lease names %q, want nobody", before.owner)
	}
	if n := fdsUnder(t, a.dbDir); n != 0 {
		t.Errorf("%d descriptors open on the idle database, want 0", n)
	}
	pathOf := func(c *Cluster) string {
		return strings.TrimSuffix(c.obj.dbPrefix(dbKey{c.ID(), "notes"}, 1), "/e1")
	}
	aReqs, keptReqs := s3.requests(pathOf(a)), s3.requests(pathOf(kept))
	window := idleWindow(t)
	time.Sleep(window) // the window the requests are counted over
	aIdle, keptIdle := s3.requests(pathOf(a))-aReqs, s3.requests(pathOf(kept))-keptReqs
	t.Logf("over %s idle: %d object-store requests for the released database, %d for one kept (%.0f a minute); descriptors %d released, %d kept",
		window, aIdle, keptIdle, float64(keptIdle)*float64(time.Minute)/float64(window), fdsUnder(t, a.dbDir), fdsUnder(t, kept.dbDir))
	if aIdle != 0 {
		t.Errorf("%d object-store requests for the released database, want 0", aIdle)
	}

	// The next request takes it again: one lease, the local copy reused.
	gets := s3.requests("GET /snug/" + pathOf(a))
	if got := one(mustExec(t, a, a.ID(), "notes", "SELECT count(*) FROM log")); got != "1" {
		t.Fatalf("%s rows after taking the idle database again, want 1", got)
	}
	if n := s3.requests("GET /snug/"+pathOf(a)) - gets; n != 0 {
		t.Errorf("taking the idle database again downloaded %d objects, want 0 (the local copy reused)", n)
	}
	if after := readLeaseRow(t, conn, a.ID(), "notes"); after.owner != a.ID() || after.epoch != before.epoch+1 {
		t.Errorf("lease %s at epoch %d after taking it again, want a at %d", after.owner, after.epoch, before.epoch+1)
	}

	// Given up again, written by b meanwhile: a's copy is old and not reused.
	waitFor(t, "a to give it up again", func() bool { return ownsNothing(a) })
	mustExec(t, b, a.ID(), "notes", "INSERT INTO log VALUES ('two')")
	waitFor(t, "b to give it up", func() bool { return ownsNothing(b) })
	if got := one(mustExec(t, a, a.ID(), "notes", "SELECT count(*) FROM log")); got != "2" {
		t.Fatalf("%s rows after b wrote, want 2: a reused its old copy", got)
	}
}
