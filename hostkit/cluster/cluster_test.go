package cluster

import (
	"context"
	"testing"
	"time"
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
