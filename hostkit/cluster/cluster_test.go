package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// A write through one replica is read through another (forwarded to the
// owner); when the owner closes, the other takes the database over,
// restored from object storage, with the write in it.
func TestForwardAndHandOver(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	a := openCluster(t, pg, s3.url("hand"), 2*time.Second)
	b := openCluster(t, pg, s3.url("hand"), 2*time.Second)
	mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
	mustExec(t, a, "alice", "todo", "INSERT INTO t VALUES (1), (2)")
	if r := mustExec(t, b, "alice", "todo", "SELECT sum(x) FROM t"); one(r) != "3" {
		t.Fatalf("through b: %v", r.Rows)
	}
	b.mu.Lock()
	_, bOwns := b.owned[dbKey{"alice", "todo"}]
	b.mu.Unlock()
	if bOwns {
		t.Fatal("b took the database while a owned it")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustExec(t, b, "alice", "todo", "INSERT INTO t VALUES (3)")
	if r := mustExec(t, b, "alice", "todo", "SELECT count(*) FROM t"); one(r) != "3" {
		t.Fatalf("after the hand-over: %v", r.Rows)
	}
	t.Logf("objects: %v", s3.keys(t, "hand/"))
}

// A statement that only reads does not wait for an upload; anything that
// may write does, WITH and comments included.
func TestIsWrite(t *testing.T) {
	for sql, want := range map[string]bool{
		"SELECT * FROM t": false, "  select 1": false, "(SELECT 1)": false, "VALUES (1)": false,
		"EXPLAIN QUERY PLAN SELECT 1": false, "PRAGMA table_info(t)": false,
		"INSERT INTO t VALUES (1)": true, "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x": true,
		"/* SELECT */ DELETE FROM t": true, "-- SELECT\nDELETE FROM t": true, "CREATE TABLE t(x)": true, "": true,
	} {
		if got := isWrite(&frame.DBRequest{Op: frame.OpExec, SQL: &sql}); got != want {
			t.Errorf("isWrite(%q) = %v, want %v", sql, got, want)
		}
	}
	for op, want := range map[string]bool{frame.OpKvSet: true, frame.OpKvGet: false, frame.OpExport: false} {
		if got := isWrite(&frame.DBRequest{Op: op}); got != want {
			t.Errorf("isWrite(op %s) = %v", op, got)
		}
	}
}
