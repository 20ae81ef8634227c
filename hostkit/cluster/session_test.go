package cluster

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// A replica renews one session row however many databases it holds: with
// 10,000 leases naming its session, a renewal updates one row and keeps
// every lease live. The statement that renewed each lease (one row per
// database, as before sessions) is timed on the same rows for the figure.
func TestSessionRenewalIsOneRow(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("session"), 2*time.Second)
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	const n = 10000
	if _, err := conn.Exec(context.Background(), `INSERT INTO snug_leases (usr, app, owner, owner_url, epoch, expires_at, session)
		SELECT 'u' || i, 'app', $1, $2, 1, 'infinity', $3 FROM generate_series(1, $4) AS i`,
		c.ID(), c.InternalURL(), c.sessionID(), n); err != nil {
		t.Fatal(err)
	}
	// As many leases of a replica from before sessions, for the figure.
	if _, err := conn.Exec(context.Background(), `INSERT INTO snug_leases (usr, app, owner, owner_url, epoch, expires_at)
		SELECT 'u' || i, 'old', 'before-sessions', 'http://127.0.0.1:1', 1, now() FROM generate_series(1, $1) AS i`, n); err != nil {
		t.Fatal(err)
	}
	median := func(f func()) time.Duration {
		var d []time.Duration
		for range 9 {
			start := time.Now()
			f()
			d = append(d, time.Since(start))
		}
		slices.Sort(d)
		return d[len(d)/2]
	}
	session := median(func() {
		tag, err := c.pool.Exec(context.Background(), renewSessionSQL, c.sessionID(), c.ttl.Seconds())
		if err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("renew the session: %v, %d rows", err, tag.RowsAffected())
		}
	})
	perLease := median(func() {
		tag, err := c.pool.Exec(context.Background(), `UPDATE snug_leases SET expires_at = now() + make_interval(secs => $2)
			WHERE owner = $1`, "before-sessions", c.ttl.Seconds())
		if err != nil || tag.RowsAffected() != n {
			t.Fatalf("renew every lease: %v, %d rows", err, tag.RowsAffected())
		}
	})
	perSec := 3 / DefaultLeaseTTL.Seconds() // renewals a second at the default TTL
	t.Logf("FIGURE renewing %d leases: one session row %s (median of 9), one row per lease %s; at the default TTL %s a replica's renewals update %.1f rows a second (%.0f before, one per lease)",
		n, session, perLease, DefaultLeaseTTL, perSec, perSec*n)
	// The leases live by the session: still live two TTLs on.
	time.Sleep(2 * c.ttl) // past the leases' own TTL, while the session is renewed
	l, found, err := c.readLease(context.Background(), dbKey{"u1", "app"})
	if err != nil || !found || !l.live || l.owner != c.ID() {
		t.Fatalf("a lease of the renewed session: %+v %v %v", l, found, err)
	}
}

// TestLeaseLoadAsTheFleetGrows simulates fleets of replicas against one
// PostgreSQL: each fake replica holds its session and leasesEach leases
// (rows naming the session, as a real replica's do) and renews with the
// statement a replica sends (renewSessionSQL) every TTL/3, all at once.
// PostgreSQL's renewal load grows with the replicas and not with the
// leases, and each renewal stays far inside the TTL/3 a replica allows it;
// renewing one row per lease (before sessions) would have cost leases × 3
// / TTL statements' rows a second.
func TestLeaseLoadAsTheFleetGrows(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("fleet"), 2*time.Second) // the schema
	ctx := context.Background()
	const ttl, leasesEach, window = 3 * time.Second, 10000, 3 * time.Second
	made := 0
	for _, replicas := range []int{1, 10, 50} {
		for ; made < replicas; made++ {
			id := fmt.Sprintf("fake-%d", made)
			if _, err := c.pool.Exec(ctx, `INSERT INTO snug_sessions (id, replica, expires_at) VALUES ($1, $1, now() + make_interval(secs => $2))`, id, ttl.Seconds()); err != nil {
				t.Fatal(err)
			}
			if _, err := c.pool.Exec(ctx, `INSERT INTO snug_leases (usr, app, owner, owner_url, epoch, expires_at, session)
				SELECT $1 || '-u' || i, 'app', $1, 'http://127.0.0.1:1', 1, 'infinity', $1 FROM generate_series(1, $2) AS i`, id, leasesEach); err != nil {
				t.Fatal(err)
			}
		}
		// Making the new replicas' leases can outlast the TTL on a slow
		// machine: the fleet starts its window live, as running replicas
		// are.
		if _, err := c.pool.Exec(ctx, `UPDATE snug_sessions SET expires_at = now() + make_interval(secs => $1) WHERE id LIKE 'fake-%'`, ttl.Seconds()); err != nil {
			t.Fatal(err)
		}
		lat, stmts := renewFleet(t, c, replicas, ttl, window)
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		rate := float64(stmts) / window.Seconds()
		t.Logf("FIGURE lease load, %d replicas x %d leases (%d in all), TTL %s: %.1f renewal statements a second, one row each (p50 %s, p99 %s); one row per lease would be %.0f rows a second",
			replicas, leasesEach, replicas*leasesEach, ttl, rate, p50.Round(time.Microsecond), p99.Round(time.Microsecond), float64(replicas*leasesEach)*3/ttl.Seconds())
		if want := float64(replicas) * 3 / ttl.Seconds(); rate > 1.5*want+1 {
			t.Errorf("%d replicas sent %.1f renewals a second, want about %.1f (one each every TTL/3)", replicas, rate, want)
		}
		if p99 > ttl/3 {
			t.Errorf("%d replicas: a renewal took %s, past the TTL/3 a replica allows it", replicas, p99)
		}
	}
}

// renewFleet renews the sessions fake-0 … fake-(replicas-1) every ttl/3
// for window, each from a goroutine of its own as each replica would, and
// returns every renewal's time and how many were sent.
func renewFleet(t *testing.T, c *Cluster, replicas int, ttl, window time.Duration) ([]time.Duration, int) {
	t.Helper()
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	end := time.Now().Add(window)
	for i := range replicas {
		wg.Go(func() {
			id := fmt.Sprintf("fake-%d", i)
			// The replicas' ticks fall anywhere in the period.
			next := time.Now().Add(time.Duration(i) * ttl / 3 / time.Duration(replicas))
			for ; next.Before(end); next = next.Add(ttl / 3) {
				time.Sleep(time.Until(next))
				start := time.Now()
				tag, err := c.pool.Exec(context.Background(), renewSessionSQL, id, ttl.Seconds())
				d := time.Since(start)
				if err != nil || tag.RowsAffected() != 1 {
					t.Errorf("renew %s: %v, %d rows", id, err, tag.RowsAffected())
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return lat, len(lat)
}
