package cluster

import (
	"context"
	"slices"
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
		tag, err := c.pool.Exec(context.Background(), `UPDATE snug_sessions SET expires_at = now() + make_interval(secs => $2)
			WHERE id = $1 AND expires_at > now()`, c.sessionID(), c.ttl.Seconds())
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
