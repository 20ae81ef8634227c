package cluster

import (
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// A write of an app database waits behind the commits of the writes sent
// before it, not behind their uploads: through the host's broker, while
// the first write's upload hangs, a second page of the same user and app
// commits its write (the lane was passed on), and neither is acknowledged
// until the upload ends. Without it one user's writes on their replica
// paid one upload each, in a row (issue 30 item 5).
func TestWritesWaitForCommitsNotUploads(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	ctx, a, b, o := twoPages(t, Config{Postgres: pg, ObjectStore: s3.url("pipe"), LeaseTTL: 10 * time.Second, Secrets: []string{testSecret}})
	release := s3.holdPuts()
	defer release()
	answers := make(chan *frame.DBResponse, 2)
	go func() { answers <- a.exec(ctx, "INSERT INTO t VALUES (1)") }()
	waitFor(t, "the first write's upload to start", func() bool { return s3.heldPuts() > 0 })
	go func() { answers <- b.exec(ctx, "INSERT INTO t VALUES (2)") }()
	waitFor(t, "the second write to commit while the first one's upload hangs", func() bool {
		return countRows(t, o.path, "SELECT count(*) FROM t") == 2
	})
	select {
	case r := <-answers:
		t.Fatalf("a write was answered (%+v) before its upload", r)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	for range 2 {
		if r := <-answers; !r.OK {
			t.Fatalf("a write: %+v", r.Error)
		}
	}
	if r := b.exec(ctx, "SELECT count(*) FROM t"); !r.OK || one(r.Result) != "2" {
		t.Fatalf("read back: %+v %+v", r.Result, r.Error)
	}
}

// A round waits for the writers the round before it is answering, not
// only for as many writes as that round held: a writer whose write joined
// while the round synced (one forwarded from another replica, whose
// answers take longer to come back) shares the next upload with the
// writer just answered, where rounds used to alternate between the two,
// each write waiting for the other's round and then its own (issue 30
// item 5). The gathering window is long here, so the machine's speed
// does not decide it; the held upload bounds it.
func TestRoundWaitsForTheWritersItAnswered(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	ctx, a, b, o := twoPages(t, Config{Postgres: pg, ObjectStore: s3.url("gather"), LeaseTTL: 10 * time.Second,
		Secrets: []string{testSecret}, gatherWindow: time.Minute})
	release := s3.holdPuts()
	defer release()
	// a's write is in the round that syncs; b's joins the next one.
	answers := make(chan *frame.DBResponse, 3)
	go func() {
		answers <- a.exec(ctx, "INSERT INTO t VALUES (1)")
		answers <- a.exec(ctx, "INSERT INTO t VALUES (3)") // at once, as a writer does
	}()
	waitFor(t, "a's upload to start", func() bool { return s3.heldPuts() > 0 })
	go func() { answers <- b.exec(ctx, "INSERT INTO t VALUES (2)") }()
	waitFor(t, "b's write to commit while a's upload hangs", func() bool {
		return countRows(t, o.path, "SELECT count(*) FROM t") == 2
	})
	o.gmu.Lock()
	next := o.pending
	o.gmu.Unlock()
	if next == nil {
		t.Fatal("b's write joined no round")
	}
	// The round took this long: the syncer gathers for at most as long.
	time.Sleep(time.Second)
	release()
	for range 3 {
		if r := <-answers; !r.OK {
			t.Fatalf("a write: %+v", r.Error)
		}
	}
	o.gmu.Lock()
	n := next.n
	o.gmu.Unlock()
	if n != 2 {
		t.Errorf("the round after a's held %d writes, want 2 (b's and a's next)", n)
	}
	if n := countRows(t, o.path, "SELECT count(*) FROM t"); n != 3 {
		t.Errorf("%d rows, want 3", n)
	}
}
