package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReplicasThroughput measures, in one run and with the same client,
// how many writes one plain `snuggen serve` acknowledges and how many three
// replicas do (PostgreSQL and the S3 server on loopback), and the latency
// of an acknowledgement: the figures bench/replicas prints side by side
// (Issue 30 item 5). The replicas are measured twice: with each user's
// writers spread over all three (half of the writes forwarded to the
// owner), and with each user pinned to one replica, as a load balancer
// that pins users does (docs/scale.md); plain serve is measured before and
// after them, and the ratios are against the mean. Every write the replicas
// acknowledged must be read back afterwards through every replica, once
// (the rows have no unique key): speed is not bought with loss.
func TestReplicasThroughput(t *testing.T) {
	load := replicasLoad(t, "four serve processes under load")
	s3 := startS3(t)
	bin := snuggenBinary(t)
	dir := t.TempDir()
	appFile := filepath.Join(dir, "log.html")
	if err := os.WriteFile(appFile, []byte(logApp), 0o644); err != nil {
		t.Fatal(err)
	}
	plain := startServe(t, "plain", bin, false, "--data", filepath.Join(dir, "plain"), appFile)
	// The same three replicas twice: uploads staged beside each database
	// (--cluster-staging beside), and in memory (a directory on /dev/shm,
	// what the default picks where /dev/shm has room).
	stage := memDir(t)
	users := []string{"alice", "bob"}
	// SNUG_REPLICAS_WRITERS=8 puts several writers of a user on one
	// replica that forwards them (docs/scale.md, forwarding).
	writers := 4
	if v, err := strconv.Atoi(os.Getenv("SNUG_REPLICAS_WRITERS")); err == nil && v > 0 {
		writers = v
	}
	// Writer w of user u goes to replica (u+w) mod 3: each user's first
	// writer, which makes the table and so takes the lease, is on another
	// replica, as leases spread over a fleet.
	spread := func(u, w int) int { return (u + w) % 3 }
	pinned := func(u, _ int) int { return u % 3 }
	// cluster measures three replicas (a PostgreSQL database of their own)
	// spread and then pinned, reads every acknowledged write back through
	// each, and stops them.
	cluster := func(prefix string, flags ...string) (s, p writeFigures) {
		pg := freshDB(t)
		var reps []*replica
		for _, name := range []string{"r1", "r2", "r3"} {
			reps = append(reps, startReplica(t, prefix+name, bin, pg, s3.url(prefix), filepath.Join(dir, prefix), appFile, 10*time.Second, flags...))
		}
		measure := func(place func(u, w int) int) writeFigures {
			sent := s3.requests("/snug/" + prefix + "/")
			f := measureWrites(t, reps, place, users, writers, load)
			f.objReqs = s3.requests("/snug/"+prefix+"/") - sent
			return f
		}
		s, p = measure(spread), measure(pinned)
		for _, r := range reps {
			for _, u := range users {
				got := readIDs(t, r.origin, u)
				for _, f := range []writeFigures{s, p} {
					for _, id := range f.ids[u] {
						if got[id] != 1 {
							t.Fatalf("%s's acknowledged write %s is there %d times through %s, want once", u, id, got[id], r.name)
						}
					}
				}
			}
		}
		for _, r := range reps {
			r.kill()
		}
		return s, p
	}
	// Plain serve before and after the replicas: the machine's speed
	// drifts over a minute, and the ratio is against the mean of both.
	place := func(int, int) int { return 0 }
	p0 := measureWrites(t, []*replica{plain}, place, users, writers, load)
	ms, mp := cluster("mem", "--cluster-staging", stage)
	ds, dp := cluster("disk", "--cluster-staging", StageBeside)
	p1 := measureWrites(t, []*replica{plain}, place, users, writers, load)
	base := (p0.rate + p1.rate) / 2
	t.Logf("FIGURE throughput (%d users x %d writers, %s each): plain serve %s, and after the replicas %s; "+
		"three replicas staging in memory (the default where /dev/shm has room), users spread: %s (%.2fx plain's acks/s), users pinned: %s (%.2fx); "+
		"staging beside the databases, spread: %s (%.2fx), pinned: %s (%.2fx)",
		len(users), writers, load, p0, p1, ms, ms.rate/base, mp, mp.rate/base, ds, ds.rate/base, dp, dp.rate/base)
}

// memDir is a new directory on a memory file system (/dev/shm), removed
// when the test ends.
func memDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "snug-staging-")
	if err != nil {
		t.Fatalf("a directory in memory (/dev/shm) to stage uploads in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// writeFigures is one measured load: acknowledged writes per second and the
// latency of an acknowledgement.
type writeFigures struct {
	n        int
	rate     float64
	p50, p99 time.Duration
	ids      map[string][]string // acknowledged, by user
	objReqs  int                 // object-store requests while writing (replicas only)
	// The p50 of the writes sent through the owner of their database and
	// of those forwarded to it (replicas, some writers elsewhere only).
	ownerP50, forwardedP50 time.Duration
}

func (f writeFigures) String() string {
	s := fmt.Sprintf("%d acks, %.0f acks/s, p50 %s, p99 %s", f.n, f.rate,
		f.p50.Round(10*time.Microsecond), f.p99.Round(10*time.Microsecond))
	if f.objReqs > 0 {
		s += fmt.Sprintf(", %.2f object-store requests per ack", float64(f.objReqs)/float64(f.n))
	}
	if f.forwardedP50 > 0 {
		s += fmt.Sprintf(" (p50 through the owner %s, forwarded %s)", f.ownerP50.Round(10*time.Microsecond), f.forwardedP50.Round(10*time.Microsecond))
	}
	return s
}

var measures atomic.Int32

// measureWrites runs writers per user, writer w of user u on a page of
// reps[place(u, w)], each sending one INSERT after the other for d, and
// returns the figures.
// Any write not acknowledged fails the test (nothing fails over here).
func measureWrites(t *testing.T, reps []*replica, place func(u, w int) int, users []string, writers int, d time.Duration) writeFigures {
	t.Helper()
	m := measures.Add(1) // in the ids: a database can hold rows of two measures
	ctx := context.Background()
	type result struct {
		user      string
		forwarded bool // its page is on another replica than the owner's
		ids       []string
		lat       []time.Duration
		err       error
	}
	pages := map[[2]int]*page{}
	for ui, u := range users {
		for w := 0; w < writers; w++ {
			dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			pg, err := openPage(dctx, reps[place(ui, w)].origin, u)
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			defer pg.c.Close()
			if r, err := pg.exec(ctx, "CREATE TABLE IF NOT EXISTS log(id TEXT, at INTEGER)"); err != nil || !r.OK {
				t.Fatalf("create the table: %v %+v", err, r)
			}
			pages[[2]int{ui, w}] = pg
		}
	}
	results := make(chan result, len(pages))
	var wg sync.WaitGroup
	began := time.Now()
	end := began.Add(d)
	for key, pg := range pages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The user's first page made the table, so its replica took
			// the lease.
			res := result{user: users[key[0]], forwarded: place(key[0], key[1]) != place(key[0], 0)}
			for n := 0; time.Now().Before(end); n++ {
				id := fmt.Sprintf("%s-m%d-w%d-%d", res.user, m, key[1], n)
				t0 := time.Now()
				r, err := pg.exec(ctx, "INSERT INTO log(id, at) VALUES (?, ?)", id, t0.UnixMilli())
				if err == nil && !r.OK {
					err = fmt.Errorf("%s: %s", r.Error.Code, r.Error.Message)
				}
				if err != nil {
					res.err = err
					break
				}
				res.lat = append(res.lat, time.Since(t0))
				res.ids = append(res.ids, id)
			}
			results <- res
		}()
	}
	wg.Wait()
	took := time.Since(began)
	close(results)
	f := writeFigures{ids: map[string][]string{}}
	var lat, owner, forwarded []time.Duration
	for res := range results {
		if res.err != nil {
			t.Fatalf("a write of %s was not acknowledged: %v", res.user, res.err)
		}
		f.ids[res.user] = append(f.ids[res.user], res.ids...)
		lat = append(lat, res.lat...)
		if res.forwarded {
			forwarded = append(forwarded, res.lat...)
		} else {
			owner = append(owner, res.lat...)
		}
	}
	if len(lat) == 0 {
		t.Fatal("no write acknowledged")
	}
	f.n = len(lat)
	f.rate = float64(f.n) / took.Seconds()
	f.p50, f.p99 = quantile(lat, 0.5), quantile(lat, 0.99)
	if len(forwarded) > 0 {
		f.ownerP50, f.forwardedP50 = quantile(owner, 0.5), quantile(forwarded, 0.5)
	}
	return f
}

// quantile sorts lat and returns its q quantile (0 for none).
func quantile(lat []time.Duration, q float64) time.Duration {
	if len(lat) == 0 {
		return 0
	}
	slices.Sort(lat)
	return lat[int(float64(len(lat))*q)]
}
