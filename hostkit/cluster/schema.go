package cluster

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schema is the host's state in PostgreSQL. Every row a user's data reaches
// is keyed by (usr, app): the signed-in user and the installed app's key.
const schema = `
CREATE TABLE IF NOT EXISTS snug_cluster (
	name  text PRIMARY KEY,
	value text NOT NULL
);
-- The forwarding secret was once kept here in plain text; now only its
-- verifiers are (snug_cluster_keys), and the secret comes from each
-- replica's own configuration.
DELETE FROM snug_cluster WHERE name = 'forward-secret';
-- A verifier (a hash) of each cluster secret replicas sign with or accept.
CREATE TABLE IF NOT EXISTS snug_cluster_keys (
	verifier text PRIMARY KEY,
	seen_at  timestamptz NOT NULL
);
-- One row per app database: who owns it, until when (PostgreSQL's clock),
-- at which epoch (incremented on every acquisition and import) and the
-- object-store prefix its last owner published (empty: never written).
CREATE TABLE IF NOT EXISTS snug_leases (
	usr        text NOT NULL,
	app        text NOT NULL,
	owner      text NOT NULL DEFAULT '',
	owner_url  text NOT NULL DEFAULT '',
	epoch      bigint NOT NULL DEFAULT 0,
	expires_at timestamptz NOT NULL DEFAULT '-infinity',
	prefix     text NOT NULL DEFAULT '',
	PRIMARY KEY (usr, app)
);
CREATE INDEX IF NOT EXISTS snug_leases_owner ON snug_leases (owner);
-- One row per running replica's session: a lease names the session that
-- holds it (session; '' for a lease freed, or held by expires_at alone by a
-- replica from before sessions) and lives while the session does, so a
-- replica renews one row however many databases it holds.
CREATE TABLE IF NOT EXISTS snug_sessions (
	id         text PRIMARY KEY,
	replica    text NOT NULL,
	expires_at timestamptz NOT NULL
);
ALTER TABLE snug_leases ADD COLUMN IF NOT EXISTS session text NOT NULL DEFAULT '';
DELETE FROM snug_sessions WHERE expires_at < now() - interval '1 day';
CREATE TABLE IF NOT EXISTS snug_grants (
	usr    text NOT NULL,
	app    text NOT NULL,
	origin text NOT NULL,
	since  timestamptz NOT NULL,
	PRIMARY KEY (usr, app, origin)
);
CREATE TABLE IF NOT EXISTS snug_reviews (
	usr text NOT NULL,
	app text NOT NULL,
	PRIMARY KEY (usr, app)
);
CREATE TABLE IF NOT EXISTS snug_budgets (
	usr      text NOT NULL,
	app      text NOT NULL,
	failures integer NOT NULL,
	PRIMARY KEY (usr, app)
);
CREATE TABLE IF NOT EXISTS snug_audit (
	id    bigserial PRIMARY KEY,
	usr   text NOT NULL,
	app   text NOT NULL,
	at    timestamptz NOT NULL,
	entry jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS snug_audit_user ON snug_audit (usr, app, at);
CREATE TABLE IF NOT EXISTS snug_apps (
	app          text PRIMARY KEY,
	digest       text NOT NULL,
	replica      text NOT NULL,
	installed_at timestamptz NOT NULL
);
`

// migrateLock is the advisory lock key replicas take to make the tables one
// at a time (CREATE ... IF NOT EXISTS races otherwise).
const migrateLock = 0x736e7567 // "snug"

func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("make the tables: %v", redact(err))
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(migrateLock)); err != nil {
		return fmt.Errorf("make the tables: %v", redact(err))
	}
	if _, err := tx.Exec(ctx, schema); err != nil {
		return fmt.Errorf("make the tables: %v; the user needs CREATE on the database's schema", redact(err))
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("make the tables: %v", redact(err))
	}
	return nil
}

// pgTarget names the server and database of a pool config, without the
// user's password.
func pgTarget(c *pgxpool.Config) string {
	cc := c.ConnConfig
	return cc.Host + ":" + strconv.Itoa(int(cc.Port)) + "/" + cc.Database
}

// passwordPattern is compiled on first use: nothing here runs at start-up.
var passwordPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(password=|://[^:/@\s]*:)[^@\s]*`)
})

// redact removes anything shaped like a password from an error's text.
func redact(err error) string {
	if err == nil {
		return ""
	}
	return passwordPattern().ReplaceAllString(err.Error(), "${1}***")
}

// isNoRows reports a query that found nothing.
func isNoRows(err error) bool { return errors.Is(err, pgx.ErrNoRows) }
