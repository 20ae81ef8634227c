package cluster

import (
	"context"
	"fmt"
	"time"
)

// The lease protocol (docs/scale.md). PostgreSQL's clock alone decides
// expiry; a replica bounds its own view of a lease by its monotonic clock
// from the moment it sent the query that set expires_at (which is later than
// that, on PostgreSQL's clock), so its view never outlives the row.

// leaseRow is what a replica reads of a lease.
type leaseRow struct {
	owner, ownerURL string
	epoch           int64
	live            bool          // expires_at > now()
	left            time.Duration // expires_at - now(), on PostgreSQL's clock, when read
	prefix          string
}

func (c *Cluster) readLease(ctx context.Context, k dbKey) (leaseRow, bool, error) {
	c.leaseReads.Add(1)
	var r leaseRow
	var left float64
	err := c.pool.QueryRow(ctx, `SELECT owner, owner_url, epoch, expires_at > now(),
			extract(epoch FROM expires_at - now())::float8, prefix
		FROM snug_leases WHERE usr = $1 AND app = $2`, k.user, k.app).
		Scan(&r.owner, &r.ownerURL, &r.epoch, &r.live, &left, &r.prefix)
	r.left = time.Duration(left * float64(time.Second))
	if isNoRows(err) {
		return leaseRow{}, false, nil
	}
	if err != nil {
		return leaseRow{}, false, fmt.Errorf("read the lease: %v", redact(err))
	}
	return r, true, nil
}

// acquire takes k's lease when it is free, expired or already this
// replica's, with the epoch incremented; ok is false when another replica
// holds it. It returns the new epoch and the prefix the last owner
// published, and the time the query was sent (the lease lasts ttl from
// then, at least).
func (c *Cluster) acquire(ctx context.Context, k dbKey) (epoch int64, prefix string, sent time.Time, ok bool, err error) {
	sent = time.Now()
	err = c.pool.QueryRow(ctx, `INSERT INTO snug_leases AS l (usr, app, owner, owner_url, epoch, expires_at)
		VALUES ($1, $2, $3, $4, 1, now() + make_interval(secs => $5))
		ON CONFLICT (usr, app) DO UPDATE
			SET owner = EXCLUDED.owner, owner_url = EXCLUDED.owner_url,
			    epoch = l.epoch + 1, expires_at = EXCLUDED.expires_at
			WHERE l.expires_at <= now() OR l.owner = EXCLUDED.owner
		RETURNING epoch, prefix`,
		k.user, k.app, c.id, c.cfg.Advertise, c.ttl.Seconds()).Scan(&epoch, &prefix)
	if isNoRows(err) {
		return 0, "", sent, false, nil
	}
	if err != nil {
		return 0, "", sent, false, fmt.Errorf("take the lease: %v", redact(err))
	}
	return epoch, prefix, sent, true, nil
}

// fence renews k's lease only if this replica still holds it at epoch: the
// check every acknowledgement waits for. held is false when another replica
// took it (or an import of ours moved the epoch on).
func (c *Cluster) fence(ctx context.Context, k dbKey, epoch int64) (held bool, sent time.Time, err error) {
	sent = time.Now()
	tag, err := c.pool.Exec(ctx, `UPDATE snug_leases SET expires_at = now() + make_interval(secs => $5)
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4`,
		k.user, k.app, c.id, epoch, c.ttl.Seconds())
	if err != nil {
		return false, sent, fmt.Errorf("check the lease: %v", redact(err))
	}
	return tag.RowsAffected() == 1, sent, nil
}

// publish records prefix as where k's database is, once its first snapshot
// is there, conditioned on holding the lease at epoch.
func (c *Cluster) publish(ctx context.Context, k dbKey, epoch int64, prefix string) (held bool, sent time.Time, err error) {
	sent = time.Now()
	tag, err := c.pool.Exec(ctx, `UPDATE snug_leases SET prefix = $5, expires_at = now() + make_interval(secs => $6)
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4`,
		k.user, k.app, c.id, epoch, prefix, c.ttl.Seconds())
	if err != nil {
		return false, sent, fmt.Errorf("publish the replica: %v", redact(err))
	}
	return tag.RowsAffected() == 1, sent, nil
}

// bump starts a new epoch of a lease this replica holds at epoch (an
// import swaps the whole file); the published prefix stays the old one
// until the new epoch's snapshot is uploaded.
func (c *Cluster) bump(ctx context.Context, k dbKey, epoch int64) (next int64, held bool, err error) {
	err = c.pool.QueryRow(ctx, `UPDATE snug_leases SET epoch = epoch + 1, expires_at = now() + make_interval(secs => $5)
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4 RETURNING epoch`,
		k.user, k.app, c.id, epoch, c.ttl.Seconds()).Scan(&next)
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
	_, err := c.pool.Exec(ctx, `UPDATE snug_leases SET expires_at = now(), owner = '', owner_url = ''
		WHERE usr = $1 AND app = $2 AND owner = $3 AND epoch = $4`, k.user, k.app, c.id, epoch)
	if err != nil {
		return fmt.Errorf("free the lease: %v", redact(err))
	}
	return nil
}

// renewLoop renews every lease this replica holds, every third of the TTL,
// in one statement; a database whose row no longer names this replica is
// dropped here (another replica took it while this one could not renew).
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

func (c *Cluster) renewAll() {
	c.mu.Lock()
	n := len(c.owned)
	c.mu.Unlock()
	if n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.ttl/3)
	defer cancel()
	sent := time.Now()
	rows, err := c.pool.Query(ctx, `UPDATE snug_leases SET expires_at = now() + make_interval(secs => $2)
		WHERE owner = $1 RETURNING usr, app`, c.id, c.ttl.Seconds())
	if err != nil {
		c.renewed(err)
		c.logf("renew leases: %v", redact(err))
		return
	}
	held := map[dbKey]bool{}
	for rows.Next() {
		var k dbKey
		if err := rows.Scan(&k.user, &k.app); err != nil {
			rows.Close()
			c.renewed(err)
			c.logf("renew leases: %v", redact(err))
			return
		}
		held[k] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		c.renewed(err)
		c.logf("renew leases: %v", redact(err))
		return
	}
	c.renewed(nil)
	c.mu.Lock()
	list := make([]*owned, 0, len(c.owned))
	for _, o := range c.owned {
		list = append(list, o)
	}
	c.mu.Unlock()
	for _, o := range list {
		if held[o.key] {
			o.extend(sent)
		} else if o.isReady() {
			c.logf("lost the lease of %s's %q: another replica took it", o.key.user, o.key.app)
			o.lose()
		}
	}
}
