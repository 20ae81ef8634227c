package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// The lease protocol (docs/scale.md). A lease names its owner's session
// (snug_sessions: one row per running replica, renewed in one statement
// however many databases it holds) and its epoch; it is live while its
// session is (a freed lease has expires_at in the past; a held one
// 'infinity'). PostgreSQL's clock alone decides expiry, and a session that
// expired is never renewed again, so what a replica took over stays taken.
// A replica bounds its own view of its session by its monotonic clock from
// the moment it sent the query that read or set the expiry (which is later
// than that, on PostgreSQL's clock), so its view never outlives the row.

// leaseRow is what a replica reads of a lease.
type leaseRow struct {
	owner, ownerURL string
	epoch           int64
	live            bool          // expires_at > now()
	left            time.Duration // expires_at - now(), on PostgreSQL's clock, when read
	prefix          string
	session         string // the session holding it ('' when freed)
}

func (c *Cluster) readLease(ctx context.Context, k dbKey) (leaseRow, bool, error) {
	c.leaseReads.Add(1)
	var r leaseRow
	var left float64
	err := c.pool.QueryRow(ctx, `SELECT l.owner, l.owner_url, l.epoch,
			l.expires_at > now() AND (l.session = '' OR coalesce(s.expires_at > now(), false)),
			CASE WHEN isfinite(least(l.expires_at, s.expires_at))
				THEN extract(epoch FROM least(l.expires_at, s.expires_at) - now())::float8 ELSE 0 END,
			l.prefix, l.session
		FROM snug_leases l LEFT JOIN snug_sessions s ON s.id = l.session
		WHERE l.usr = $1 AND l.app = $2`, k.user, k.app).
		Scan(&r.owner, &r.ownerURL, &r.epoch, &r.live, &left, &r.prefix, &r.session)
	if isNoRows(err) {
		return leaseRow{}, false, nil
	}
	if err != nil {
		return leaseRow{}, false, fmt.Errorf("read the lease: %v", redact(err))
	}
	r.left = time.Duration(left * float64(time.Second))
	return r, true, nil
}

// sessionLive is the SQL condition that session $n is live.
func sessionLive(n int) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM snug_sessions s WHERE s.id = $%d AND s.expires_at > now())`, n)
}

// acquire takes k's lease when it is free, its session expired, or it is
// already this session's, with the epoch incremented; ok is false when
// another live session holds it. It returns the new epoch and the prefix
// the last owner published.
func (c *Cluster) acquire(ctx context.Context, k dbKey) (epoch int64, prefix string, ok bool, err error) {
	err = c.pool.QueryRow(ctx, `INSERT INTO snug_leases AS l (usr, app, owner, owner_url, epoch, expires_at, session)
		VALUES ($1, $2, $3, $4, 1, 'infinity', $5)
		ON CONFLICT (usr, app) DO UPDATE
			SET owner = EXCLUDED.owner, owner_url = EXCLUDED.owner_url,
			    epoch = l.epoch + 1, expires_at = 'infinity', session = EXCLUDED.session
			WHERE l.session = EXCLUDED.session OR l.expires_at <= now()
			   OR l.session <> '' AND NOT EXISTS (SELECT 1 FROM snug_sessions s WHERE s.id = l.session AND s.expires_at > now())
		RETURNING epoch, prefix`,
		k.user, k.app, c.id, c.cfg.Advertise, c.sessionID()).Scan(&epoch, &prefix)
	if isNoRows(err) {
		return 0, "", false, nil
	}
	if err != nil {
		return 0, "", false, fmt.Errorf("take the lease: %v", redact(err))
	}
	return epoch, prefix, true, nil
}

// fence checks that this replica still holds k's lease at epoch under a
// live session: the check every acknowledgement waits for (a read: a
// successor takes the lease only once the session expired, after this).
// held is false when another replica took it (or an import of ours moved
// the epoch on); until is how long the session is known live.
func (c *Cluster) fence(ctx context.Context, k dbKey, epoch int64) (held bool, until time.Time, err error) {
	sent := time.Now()
	var left float64
	err = c.pool.QueryRow(ctx, `SELECT extract(epoch FROM s.expires_at - now())::float8
		FROM snug_leases l JOIN snug_sessions s ON s.id = l.session
		WHERE l.usr = $1 AND l.app = $2 AND l.owner = $3 AND l.epoch = $4 AND l.session = $5 AND s.expires_at > now()`,
		k.user, k.app, c.id, epoch, c.sessionID()).Scan(&left)
	if isNoRows(err) {
		return false, sent, nil
	}
	if err != nil {
		return false, sent, fmt.Errorf("check the lease: %v", redact(err))
	}
	return true, sent.Add(min(time.Duration(left*float64(time.Second)), c.ttl)), nil
}

// publish records prefix as where k's database is, once its first snapshot
// is there, conditioned on holding the lease at epoch.
func (c *Cluster) publish(ctx context.Context, k dbKey, epoch int64, prefix string) (held bool, err error) {
	tag, err := c.pool.Exec(ctx, `UPDATE snug_leases SET prefix = $5
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4 AND session = $6 AND `+sessionLive(6),
		k.user, k.app, c.id, epoch, prefix, c.sessionID())
	if err != nil {
		return false, fmt.Errorf("publish the replica: %v", redact(err))
	}
	return tag.RowsAffected() == 1, nil
}

// bump starts a new epoch of a lease this replica holds at epoch (an
// import swaps the whole file); the published prefix stays the old one
// until the new epoch's snapshot is uploaded.
func (c *Cluster) bump(ctx context.Context, k dbKey, epoch int64) (next int64, held bool, err error) {
	err = c.pool.QueryRow(ctx, `UPDATE snug_leases SET epoch = epoch + 1
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4 AND session = $5 AND `+sessionLive(5)+` RETURNING epoch`,
		k.user, k.app, c.id, epoch, c.sessionID()).Scan(&next)
	if isNoRows(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("start a new epoch: %v", redact(err))
	}
	return next, true, nil
}

// free lets the lease go at once (a replica handing a database over): the
// next replica that needs it takes it without waiting for the TTL.
func (c *Cluster) free(ctx context.Context, k dbKey, epoch int64) error {
	_, err := c.pool.Exec(ctx, `UPDATE snug_leases SET expires_at = now(), owner = '', owner_url = '', session = ''
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4`, k.user, k.app, c.id, epoch)
	if err != nil {
		return fmt.Errorf("free the lease: %v", redact(err))
	}
	return nil
}

// sessionID is this replica's current session.
func (c *Cluster) sessionID() string {
	c.sessMu.Lock()
	defer c.sessMu.Unlock()
	return c.session
}

// newSession starts a session for this replica: every lease it takes from
// now on names it.
func (c *Cluster) newSession(ctx context.Context) error {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	id := c.id + "-" + hex.EncodeToString(b[:])
	sent := time.Now()
	if _, err := c.pool.Exec(ctx, `INSERT INTO snug_sessions (id, replica, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))`,
		id, c.id, c.ttl.Seconds()); err != nil {
		return fmt.Errorf("start a session: %v", redact(err))
	}
	c.sessMu.Lock()
	c.session = id
	c.sessMu.Unlock()
	c.sessUntil.Store(mono(sent.Add(c.ttl)))
	return nil
}

// extendSession moves this replica's view of its session to until.
func (c *Cluster) extendSession(until time.Time) {
	v := mono(until)
	for {
		cur := c.sessUntil.Load()
		if v <= cur || c.sessUntil.CompareAndSwap(cur, v) {
			return
		}
	}
}

// sessionValid reports whether this replica's view of its session holds.
func (c *Cluster) sessionValid() bool { return mono(time.Now()) < c.sessUntil.Load() }

// renewLoop renews this replica's session every third of the TTL, one
// statement however many databases it holds.
func (c *Cluster) renewLoop() {
	t := time.NewTicker(c.ttl / 3)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		c.renewAll()
		c.releaseIdle()
	}
}

// errSessionExpired is a renewal that found the session expired.
var errSessionExpired = errors.New("the session expired before it was renewed")

// renewSessionSQL renews session $1 for $2 seconds, unless it expired: the
// one statement a replica sends every TTL/3, however many leases it holds.
const renewSessionSQL = `UPDATE snug_sessions SET expires_at = now() + make_interval(secs => $2)
	WHERE id = $1 AND expires_at > now()`

// renewAll renews the session. A session found expired is over for good
// (another replica may have taken any of its leases): every database is
// dropped here and a new session starts.
func (c *Cluster) renewAll() {
	ctx, cancel := context.WithTimeout(c.ctx, c.ttl/3)
	defer cancel()
	sent := time.Now()
	tag, err := c.pool.Exec(ctx, renewSessionSQL, c.sessionID(), c.ttl.Seconds())
	if err != nil {
		c.renewed(err)
		c.logf("renew the session: %v", redact(err))
		return
	}
	if tag.RowsAffected() == 1 {
		c.renewed(nil)
		c.extendSession(sent.Add(c.ttl))
		return
	}
	c.renewed(errSessionExpired)
	c.mu.Lock()
	list := make([]*owned, 0, len(c.owned))
	for _, o := range c.owned {
		list = append(list, o)
	}
	c.mu.Unlock()
	c.logf("the session expired before it was renewed: giving up %d databases", len(list))
	for _, o := range list {
		if o.isReady() {
			o.lose()
		}
	}
	if err := c.newSession(ctx); err != nil {
		c.logf("%v", err)
	}
}
