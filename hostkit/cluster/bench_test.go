package cluster

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/store"
)

// BenchmarkAckedWrite is one acknowledged write (commit, upload, lease
// check) on the owning replica, against the same write on the local store
// alone (no replication) as the baseline, with 1 and 16 writers: the
// object store's round trip per acknowledgement, and what the group commit
// saves of it under concurrency.
func BenchmarkAckedWrite(b *testing.B) {
	pg, s3 := freshDB(b), startS3(b)
	c := openCluster(b, pg, s3.url("bench"), 10*time.Second)
	mustExec(b, c, "u", "bench", "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")
	st, err := store.Open(b.TempDir(), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	local := broker.Store(st)
	local.DBRequest(context.Background(), call("u", "bench"), &frame.DBRequest{Op: frame.OpExec, SQL: str("CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT)")})
	var seq atomic.Int64
	insert := func(h broker.DBHandler) {
		sql := "INSERT INTO t(v) VALUES (?)"
		r := h.DBRequest(context.Background(), call("u", "bench"), &frame.DBRequest{RequestID: "r", InstanceID: "i", Op: frame.OpExec, SQL: &sql, Params: []any{fmt.Sprint(seq.Add(1))}})
		if !r.OK {
			b.Fatal(r.Error.Message)
		}
	}
	for _, par := range []int{1, 16} {
		for _, tc := range []struct {
			name string
			h    broker.DBHandler
		}{{"local-store", local}, {"replicated", c.DB()}} {
			b.Run(fmt.Sprintf("%s/writers=%d", tc.name, par), func(b *testing.B) {
				b.SetParallelism(par)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						insert(tc.h)
					}
				})
			})
		}
	}
}
