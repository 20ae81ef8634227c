package cluster

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/relayclient"
)

// A write of an app database waits behind the commits of the writes sent
// before it, not behind their uploads: through the host's broker, while
// the first write's upload hangs, a second page of the same user and app
// commits its write (the lane was passed on), and neither is acknowledged
// until the upload ends. Without it one user's writes on their replica
// paid one upload each, in a row (issue 30 item 5).
func TestWritesWaitForCommitsNotUploads(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("pipe"), 10*time.Second)
	h := notesHost(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	exec := func(p *relayclient.Client, inst, sql string) *frame.DBResponse {
		r, err := p.DB(ctx, "s1", inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql})
		if err != nil {
			t.Error(err)
			return &frame.DBResponse{Error: &frame.Error{Code: "TEST", Message: err.Error()}}
		}
		return r
	}
	var pages [2]*relayclient.Client
	var insts [2]string
	for i := range pages {
		p, err := relayclient.Dial(ctx, h.Origin(), http.Header{"X-User": {"alice"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		if insts[i], err = p.Mount(ctx, "s1", "notes"); err != nil {
			t.Fatal(err)
		}
		pages[i] = p
	}
	if r := exec(pages[0], insts[0], "CREATE TABLE t(x)"); !r.OK {
		t.Fatalf("create: %+v", r.Error)
	}
	c.mu.Lock()
	o := c.owned[dbKey{"alice", "notes"}]
	c.mu.Unlock()
	if o == nil {
		t.Fatal("the replica does not own alice's database")
	}
	release := s3.holdPuts()
	defer func() {
		if release != nil {
			release()
		}
	}()
	answers := make(chan *frame.DBResponse, 2)
	go func() { answers <- exec(pages[0], insts[0], "INSERT INTO t VALUES (1)") }()
	waitFor(t, "the first write's upload to start", func() bool { return s3.heldPuts() > 0 })
	go func() { answers <- exec(pages[1], insts[1], "INSERT INTO t VALUES (2)") }()
	waitFor(t, "the second write to commit while the first one's upload hangs", func() bool {
		return countRows(t, o.path, "SELECT count(*) FROM t") == 2
	})
	select {
	case r := <-answers:
		t.Fatalf("a write was answered (%+v) before its upload", r)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	release = nil
	for range 2 {
		if r := <-answers; !r.OK {
			t.Fatalf("a write: %+v", r.Error)
		}
	}
	if r := exec(pages[1], insts[1], "SELECT count(*) FROM t"); !r.OK || one(r.Result) != "2" {
		t.Fatalf("read back: %+v %+v", r.Result, r.Error)
	}
}
