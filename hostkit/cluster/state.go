package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/snuggen/snuggen/hostkit/netgate"
)

// Install records the installed apps (key to built document) in
// snug_apps, with the document's SHA-256: every replica should serve the
// same documents, and a mismatch is reported (the last replica to start
// wins the row). Forwarded requests are answered for installed apps only.
func (c *Cluster) Install(ctx context.Context, apps map[string][]byte) error {
	c.mu.Lock()
	for k := range apps {
		c.apps[k] = true
	}
	c.mu.Unlock()
	for k, doc := range apps {
		sum := sha256.Sum256(doc)
		digest := hex.EncodeToString(sum[:])
		var before string
		err := c.pool.QueryRow(ctx, `SELECT digest FROM snug_apps WHERE app = $1`, k).Scan(&before)
		if err != nil && !isNoRows(err) {
			return fmt.Errorf("cluster: record the installed apps: %v", redact(err))
		}
		if before != "" && before != digest {
			c.logf("app %q differs from the one another replica installed; this replica's replaces it", k)
		}
		if _, err := c.pool.Exec(ctx, `INSERT INTO snug_apps(app, digest, replica, installed_at) VALUES ($1, $2, $3, now())
			ON CONFLICT (app) DO UPDATE SET digest = EXCLUDED.digest, replica = EXCLUDED.replica, installed_at = EXCLUDED.installed_at`,
			k, digest, c.id); err != nil {
			return fmt.Errorf("cluster: record the installed apps: %v", redact(err))
		}
	}
	return nil
}

func (c *Cluster) isInstalled(app string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.apps) == 0 || c.apps[app]
}

// Audit keeps one net audit entry in snug_audit, under its user and app.
func (c *Cluster) Audit(e netgate.Entry) {
	b, err := json.Marshal(e)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	if _, err := c.pool.Exec(ctx, `INSERT INTO snug_audit(usr, app, at, entry) VALUES ($1, $2, $3, $4)`,
		e.User, e.App, e.Time, b); err != nil {
		c.logf("keep an audit entry: %v", redact(err))
	}
}

// AuditEntries returns user's audit entries for app, oldest first (at most
// limit).
func (c *Cluster) AuditEntries(ctx context.Context, user, app string, limit int) ([]netgate.Entry, error) {
	rows, err := c.pool.Query(ctx, `SELECT entry FROM snug_audit WHERE usr = $1 AND app = $2 ORDER BY id LIMIT $3`, user, app, limit)
	if err != nil {
		return nil, fmt.Errorf("cluster: read the audit: %v", redact(err))
	}
	defer rows.Close()
	var out []netgate.Entry
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		var e netgate.Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// grantStore is netgate.GrantStore over snug_grants and snug_reviews.
type grantStore struct{ c *Cluster }

func (s grantStore) HasGrant(ctx context.Context, user, app, origin string) (bool, error) {
	var one int
	err := s.c.pool.QueryRow(ctx, `SELECT 1 FROM snug_grants WHERE usr = $1 AND app = $2 AND origin = $3`, user, app, origin).Scan(&one)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read grants: %v", redact(err))
	}
	return true, nil
}

func (s grantStore) ListGrants(ctx context.Context, user, app string) ([]netgate.Grant, error) {
	rows, err := s.c.pool.Query(ctx, `SELECT origin, since FROM snug_grants WHERE usr = $1 AND app = $2 ORDER BY since, origin`, user, app)
	if err != nil {
		return nil, fmt.Errorf("read grants: %v", redact(err))
	}
	defer rows.Close()
	var out []netgate.Grant
	for rows.Next() {
		g := netgate.Grant{User: user, App: app}
		if err := rows.Scan(&g.Origin, &g.Since); err != nil {
			return nil, err
		}
		g.Since = g.Since.UTC()
		out = append(out, g)
	}
	return out, rows.Err()
}

func (s grantStore) AddGrant(ctx context.Context, g netgate.Grant) (bool, error) {
	tag, err := s.c.pool.Exec(ctx, `INSERT INTO snug_grants(usr, app, origin, since) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		g.User, g.App, g.Origin, g.Since)
	if err != nil {
		return false, fmt.Errorf("save a grant: %v", redact(err))
	}
	return tag.RowsAffected() == 1, nil
}

func (s grantStore) RemoveGrant(ctx context.Context, user, app, origin string) (bool, error) {
	tag, err := s.c.pool.Exec(ctx, `DELETE FROM snug_grants WHERE usr = $1 AND app = $2 AND origin = $3`, user, app, origin)
	if err != nil {
		return false, fmt.Errorf("remove a grant: %v", redact(err))
	}
	return tag.RowsAffected() > 0, nil
}

func (s grantStore) Reviewed(ctx context.Context, user, app string) (bool, error) {
	var one int
	err := s.c.pool.QueryRow(ctx, `SELECT 1 FROM snug_reviews WHERE usr = $1 AND app = $2`, user, app).Scan(&one)
	if isNoRows(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read reviews: %v", redact(err))
	}
	return true, nil
}

func (s grantStore) MarkReviewed(ctx context.Context, user, app string) error {
	if _, err := s.c.pool.Exec(ctx, `INSERT INTO snug_reviews(usr, app) VALUES ($1, $2) ON CONFLICT DO NOTHING`, user, app); err != nil {
		return fmt.Errorf("save a review: %v", redact(err))
	}
	return nil
}

func (s grantStore) ForgetApp(ctx context.Context, user, app string) ([]netgate.Grant, error) {
	gone, err := s.ListGrants(ctx, user, app)
	if err != nil {
		return nil, err
	}
	if _, err := s.c.pool.Exec(ctx, `DELETE FROM snug_grants WHERE usr = $1 AND app = $2`, user, app); err != nil {
		return nil, fmt.Errorf("forget grants: %v", redact(err))
	}
	if _, err := s.c.pool.Exec(ctx, `DELETE FROM snug_reviews WHERE usr = $1 AND app = $2`, user, app); err != nil {
		return nil, fmt.Errorf("forget a review: %v", redact(err))
	}
	return gone, nil
}

// budgetStore is agent.Budget over snug_budgets.
type budgetStore struct{ c *Cluster }

func (b budgetStore) Failures(ctx context.Context, user, app string) (int, error) {
	var n int
	err := b.c.pool.QueryRow(ctx, `SELECT failures FROM snug_budgets WHERE usr = $1 AND app = $2`, user, app).Scan(&n)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the budget: %v", redact(err))
	}
	return n, nil
}

func (b budgetStore) Fail(ctx context.Context, user, app string) (int, error) {
	var n int
	err := b.c.pool.QueryRow(ctx, `INSERT INTO snug_budgets AS b (usr, app, failures) VALUES ($1, $2, 1)
		ON CONFLICT (usr, app) DO UPDATE SET failures = b.failures + 1 RETURNING failures`, user, app).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("record a parse failure: %v", redact(err))
	}
	return n, nil
}

func (b budgetStore) Clear(ctx context.Context, user, app string) error {
	if _, err := b.c.pool.Exec(ctx, `DELETE FROM snug_budgets WHERE usr = $1 AND app = $2`, user, app); err != nil {
		return fmt.Errorf("clear the budget: %v", redact(err))
	}
	return nil
}
