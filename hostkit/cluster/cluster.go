// Package cluster is hostkit's replicated mode (docs/scale.md): many
// stateless replicas serve many users, each (user, installed app) SQLite
// database is owned by one replica at a time through a lease row in
// PostgreSQL, and the owner replicates it with embedded Litestream to
// S3-compatible object storage under a prefix of its own epoch. A replica
// that does not own a database forwards the request to the owner, or takes
// the lease when it is free or expired (restoring from the prefix the last
// owner published). The host's own state — grants, reviews, the
// parse-failure budget, the net audit, the installed apps — lives in
// PostgreSQL too, so any replica can serve any page.
//
// A write is acknowledged only after it is committed, Litestream has
// uploaded it (SyncAndWait) and the lease is still held at the epoch that
// uploaded it; concurrent writes share one sync (group commit). A replica
// killed at any point loses nothing it acknowledged.
//
// Open validates both services before anything is served and returns an
// error naming the service and the fix; nothing here exits the process.
// hostkit.WithCluster(c) switches a host to it.
//
// Its limit: one writer per database (the owner), and every acknowledged
// write pays an object-store round trip; a failover costs the lease's TTL
// plus a restore. Forwarded requests are signed with the cluster secret
// every replica is given (Config.Secrets; PostgreSQL keeps only a hash of
// it), but not encrypted: the internal listener must be reachable by
// replicas only.
package cluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/metrics"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/store"
)

// Defaults for Config fields left zero.
const (
	// DefaultLeaseTTL is how long a replica's session (which its leases
	// live by) lasts without renewal: the longest a database is
	// unavailable after its owner dies.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultAddr is where the internal listener for forwarded requests
	// listens: loopback, a free port.
	DefaultAddr = "127.0.0.1:0"
	// DefaultIdleRelease is how long a database goes without a request
	// before its owner gives it up (Config.IdleRelease).
	DefaultIdleRelease = 2 * time.Minute
)

// Config configures Open.
type Config struct {
	// Postgres is the PostgreSQL URL (postgres://user:pass@host:port/db);
	// the tables are made on first use (prefix snug_).
	Postgres string
	// ObjectStore is where the databases are replicated:
	// s3://bucket/prefix, with ?endpoint=http://host:port for an
	// S3-compatible server and ?region=…; credentials come from
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or the usual AWS
	// configuration).
	ObjectStore string
	// DataDir holds this replica's copies of the databases it owns, in a
	// directory replica-<ReplicaID> made at Open and removed at Close
	// (required; the copies are restored from object storage when this
	// replica takes a lease, so replicas may share DataDir).
	DataDir string
	// StagingDir is where Litestream stages each upload (the LTX file it
	// writes, fsyncs and renames before sending it): a directory, in which
	// a directory replica-<ReplicaID> is made at Open and removed at
	// Close; StageBeside, beside each database; or, when empty, a private
	// directory on /dev/shm when that is a memory file system with
	// MinMemoryStaging free (removed at Close, or by the next replica
	// started once its process is gone), else beside each database
	// (staging.go). A memory file system takes the local disk out of
	// every acknowledgement: nothing staged is needed once it is uploaded,
	// and a replica that restarts starts empty either way. It holds the
	// uploads of the last minute or two (Litestream keeps them until they
	// are compacted and L0Retention passed: one minute when staged apart),
	// some 3 KB per round.
	StagingDir string
	// Addr is the internal listener's address (DefaultAddr when empty);
	// Advertise is the URL other replicas reach it at (http://Addr when
	// empty). Only replicas should reach it.
	Addr      string
	Advertise string
	// ReplicaID names this replica in the lease rows (random when empty;
	// it must differ between running replicas).
	ReplicaID string
	// Secrets sign and check forwarded requests: the same list on every
	// replica, each at least MinSecretBytes of randomness. The first
	// signs; every one is accepted, so a rotation lists the new secret
	// after the old one on every replica, then before it, then alone.
	// Required.
	Secrets []string
	// LeaseTTL is a session's life without renewal, and so its leases'
	// (DefaultLeaseTTL when zero); the session is renewed every third of it.
	LeaseTTL time.Duration
	// IdleRelease is how long an owned database goes without a request
	// before this replica gives it up (DefaultIdleRelease when zero; below
	// zero never): a last upload, the lease freed, the files closed, so an
	// idle database costs no object-store request or descriptor. The local copy stays; the next request takes the lease again
	// and reuses the copy when nobody published anything newer since.
	IdleRelease time.Duration
	// Store is the policy of the app databases (quota, limits); its
	// LockingMode is always NORMAL here (Litestream reads beside it), and
	// so is its Synchronous: a write is acknowledged once it is in the
	// object store, and a replica's local copies do not outlive it, so a
	// commit need not wait for the local disk.
	Store store.Options
	// Logf receives what goes wrong in the background (a failed renewal, a
	// lost lease, a failed upload); nil drops it.
	Logf func(format string, args ...any)
	// Metrics, when set, counts leases, forwards, acknowledgements,
	// restores and object-store calls (hostkit/metrics); the host is given
	// the same one (hostkit.WithMetrics) so /metrics has both.
	Metrics *metrics.Metrics

	// gatherWindow and minMemoryStaging replace the constants of the same
	// names when set (tests that must not depend on the machine).
	gatherWindow     time.Duration
	minMemoryStaging uint64
}

// Cluster is one replica's part of replicated mode. It implements
// hostkit.Cluster.
type Cluster struct {
	cfg      Config
	id       string
	ttl      time.Duration
	pool     *pgxpool.Pool
	obj      objectStore
	dbDir    string // this replica's local copies
	stageDir string // where Litestream stages uploads; "" beside each copy
	local    *store.Store
	localDB  broker.DBHandler // the local store, answering as broker.Store does
	ls       *litestream.Store
	signer   *signer
	renew    renewState // Ready's view of the lease renewals

	ln     net.Listener
	srv    *http.Server
	client *http.Client

	ctx    context.Context // ends on Close: background work stops
	cancel context.CancelFunc
	wg     sync.WaitGroup // background goroutines

	leaseReads atomic.Int64 // lease rows read (readLease)

	sessMu    sync.Mutex
	session   string       // this replica's session (snug_sessions), under sessMu
	sessUntil atomic.Int64 // monotonic deadline of this replica's view of its session

	mu     sync.Mutex
	owned  map[dbKey]*owned
	idle   map[dbKey]idleCopy    // databases given up when idle, their local copies kept
	routes map[dbKey]cachedRoute // other replicas' leases, for forwards
	chains map[dbKey]*chain      // requests answered after their lane moved on (order.go)
	closed bool
	apps   map[string]bool // installed app keys (Install)
}

// dbKey names one app database: a user's copy of an installed app's.
type dbKey struct{ user, app string }

func (k dbKey) storeKey() string { return store.UserKey(k.user, k.app) }

// Open connects to both services, checks them (PostgreSQL answers and takes
// the tables; the object store takes, returns and deletes a probe object),
// starts the internal listener and the lease renewal. Every failure names
// the service and what to fix.
func Open(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Postgres == "" {
		return nil, errors.New("cluster: no PostgreSQL URL: give --postgres postgres://user@host:port/db")
	}
	if cfg.ObjectStore == "" {
		return nil, errors.New("cluster: no object store URL: give --object-store s3://bucket/prefix?endpoint=http://host:port")
	}
	if cfg.DataDir == "" {
		return nil, errors.New("cluster: no data directory for the local copies of the databases")
	}
	if len(cfg.Secrets) == 0 {
		return nil, errors.New("cluster: no cluster secret: give every replica the same --cluster-secret-file (openssl rand -hex 32 > FILE)")
	}
	for i, s := range cfg.Secrets {
		if len(s) < MinSecretBytes {
			return nil, fmt.Errorf("cluster: cluster secret %d is %d bytes; use at least %d (openssl rand -hex 32)", i+1, len(s), MinSecretBytes)
		}
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if cfg.LeaseTTL < 500*time.Millisecond {
		return nil, fmt.Errorf("cluster: LeaseTTL %s is below 500ms: renewals could not keep up", cfg.LeaseTTL)
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.IdleRelease == 0 {
		cfg.IdleRelease = DefaultIdleRelease
	}
	cfg.gatherWindow = cmp.Or(cfg.gatherWindow, gatherWindow)
	cfg.minMemoryStaging = cmp.Or(cfg.minMemoryStaging, MinMemoryStaging)
	if cfg.ReplicaID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, fmt.Errorf("cluster: replica id: %w", err)
		}
		cfg.ReplicaID = hex.EncodeToString(b[:])
	}
	obj, err := parseObjectStore(cfg.ObjectStore)
	if err != nil {
		return nil, err
	}
	obj.metrics = cfg.Metrics
	c := &Cluster{cfg: cfg, id: cfg.ReplicaID, ttl: cfg.LeaseTTL, obj: obj,
		signer: newSigner(cfg.Secrets, cfg.ReplicaID),
		owned:  map[dbKey]*owned{}, idle: map[dbKey]idleCopy{}, routes: map[dbKey]cachedRoute{}, chains: map[dbKey]*chain{}, apps: map[string]bool{}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	cfg.Metrics.LeasesHeldFunc(c.heldLeases)
	if err := c.open(ctx); err != nil {
		c.cancel()
		return nil, errors.Join(err, c.closeParts())
	}
	return c, nil
}

// open connects c's parts in order: PostgreSQL (schema, secrets, the
// replica's session), the object store, the replica's own data directory
// and store, Litestream, then the internal listener.
func (c *Cluster) open(ctx context.Context) error {
	pcfg, err := pgxpool.ParseConfig(c.cfg.Postgres)
	if err != nil {
		return fmt.Errorf("cluster: PostgreSQL URL: %v; give postgres://user@host:port/db", redact(err))
	}
	pcfg.MaxConns = max(pcfg.MaxConns, 8)
	c.pool, err = pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return fmt.Errorf("cluster: PostgreSQL: %v", redact(err))
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.pool.Ping(pctx); err != nil {
		return fmt.Errorf("cluster: PostgreSQL at %s does not answer: %v; is it running, and does the URL name a database this user may use?", pgTarget(pcfg), redact(err))
	}
	if err := migrate(pctx, c.pool); err != nil {
		return fmt.Errorf("cluster: PostgreSQL at %s: %w", pgTarget(pcfg), err)
	}
	if err := checkSecrets(pctx, c.pool, c.cfg.Secrets); err != nil {
		return fmt.Errorf("cluster: PostgreSQL at %s: %w", pgTarget(pcfg), err)
	}
	if err := c.newSession(pctx); err != nil {
		return fmt.Errorf("cluster: PostgreSQL at %s: %w", pgTarget(pcfg), err)
	}
	if err := c.obj.probe(pctx, c.id); err != nil {
		return err
	}
	if err := os.MkdirAll(c.cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("cluster: data directory: %w", err)
	}
	// A directory of this replica's own (replicas may share DataDir); it
	// goes at Close. What this replica owns is restored from object storage
	// when it takes the lease, so nothing in it outlives the process.
	c.dbDir = filepath.Join(c.cfg.DataDir, "replica-"+c.id)
	dbDir := c.dbDir
	if err := os.RemoveAll(dbDir); err != nil {
		return fmt.Errorf("cluster: clear %s: %w", dbDir, err)
	}
	if c.stageDir, err = c.stagingDir(); err != nil {
		return err
	}
	so := c.cfg.Store
	so.LockingMode = store.LockingNormal
	so.Synchronous = store.SyncNormal
	if c.local, err = store.Open(dbDir, so); err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	c.localDB = broker.Store(c.local)
	c.ls = litestream.NewStore(nil, compactionLevels())
	if c.stageDir != "" {
		// Staged uploads may be in memory: keep them no longer than needed
		// (they go once compacted into level 1, every few seconds, and this
		// old).
		c.ls.L0Retention = time.Minute
	}
	c.ls.Logger = c.logger()
	c.ls.ShutdownSyncTimeout = 2 * time.Second
	c.ls.ShutdownSyncInterval = 100 * time.Millisecond
	if err := c.ls.Open(ctx); err != nil {
		return fmt.Errorf("cluster: litestream: %w", err)
	}
	return c.listen()
}

// listen opens the internal listener other replicas forward requests to,
// checks the URL it is advertised at, and starts serving it and renewing
// the leases, both owned by c.wg.
func (c *Cluster) listen() error {
	var err error
	c.ln, err = net.Listen("tcp", c.cfg.Addr)
	if err != nil {
		return fmt.Errorf("cluster: internal listener on %s: %w", c.cfg.Addr, err)
	}
	if c.cfg.Advertise == "" {
		c.cfg.Advertise = "http://" + c.ln.Addr().String()
	}
	if u, err := url.Parse(c.cfg.Advertise); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("cluster: Advertise %q is not a URL like http://10.0.0.5:7879", c.cfg.Advertise)
	}
	c.client = &http.Client{Transport: &http.Transport{
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     time.Minute,
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
	}}
	c.srv = &http.Server{Handler: http.HandlerFunc(c.serveInternal), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return c.ctx }}
	c.wg.Add(2)
	go func() {
		defer c.wg.Done()
		_ = c.srv.Serve(c.ln)
	}()
	go func() {
		defer c.wg.Done()
		c.renewLoop()
	}()
	return nil
}

// ID is this replica's id in the lease rows.
func (c *Cluster) ID() string { return c.id }

// InternalURL is where other replicas forward requests to this one.
func (c *Cluster) InternalURL() string { return c.cfg.Advertise }

// Close hands every database this replica owns over (a last upload, then
// the lease is freed so the next replica takes it at once), stops the
// listener and the renewals and closes the connections. It is safe to call
// more than once.
func (c *Cluster) Close(ctx context.Context) error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	list := make([]*owned, 0, len(c.owned))
	for _, o := range c.owned {
		list = append(list, o)
	}
	c.mu.Unlock()
	var errs []error
	if c.srv != nil {
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		errs = append(errs, c.srv.Shutdown(sctx))
		cancel()
	}
	for _, o := range list {
		errs = append(errs, o.release(ctx))
	}
	// Every lease is freed: the session goes too.
	if _, err := c.pool.Exec(ctx, `DELETE FROM snug_sessions WHERE id = $1`, c.sessionID()); err != nil {
		errs = append(errs, fmt.Errorf("cluster: end the session: %v", redact(err)))
	}
	c.cancel()
	c.wg.Wait()
	errs = append(errs, c.closeParts())
	return errors.Join(errs...)
}

func (c *Cluster) closeParts() error {
	var errs []error
	if c.ls != nil {
		errs = append(errs, c.ls.Close(context.Background()))
	}
	if c.local != nil {
		errs = append(errs, c.local.Close())
	}
	if c.ln != nil && c.srv == nil {
		errs = append(errs, c.ln.Close())
	}
	if c.pool != nil {
		c.pool.Close()
	}
	if c.dbDir != "" {
		errs = append(errs, os.RemoveAll(c.dbDir))
	}
	if c.stageDir != "" {
		errs = append(errs, os.RemoveAll(c.stageDir))
	}
	return errors.Join(errs...)
}

func (c *Cluster) logf(format string, args ...any) {
	if c.cfg.Logf != nil {
		c.cfg.Logf("cluster: "+format, args...)
	}
}

// logger is Litestream's: warnings and errors go to Logf.
func (c *Cluster) logger() *slog.Logger {
	if c.cfg.Logf == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return slog.New(slog.NewTextHandler(logWriter{c}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type logWriter struct{ c *Cluster }

func (w logWriter) Write(p []byte) (int, error) {
	w.c.logf("litestream: %s", strings.TrimSpace(string(p)))
	return len(p), nil
}

// DB implements hostkit.Cluster.
func (c *Cluster) DB() broker.DBHandler { return broker.DBFunc(c.DBRequest) }

// Grants implements hostkit.Cluster.
func (c *Cluster) Grants() netgate.GrantStore { return grantStore{c} }

// Budget implements hostkit.Cluster.
func (c *Cluster) Budget() agent.Budget { return budgetStore{c} }

// compactionLevels are Litestream's default levels but for level 1, which
// merges the level-0 files (one per group-commit round) every 5 s instead
// of every 30 s. A takeover restores the snapshot, the higher levels and
// every level-0 file since the last level-1 file: under load a round
// uploads hundreds of them a second, and with 30 s between merges a
// failover under 10 s of load took 3.4–6.9 s at a 2 s lease where it
// takes 2.1–2.8 s now (TestReplicasFailover, SNUG_REPLICAS_LOAD=10s). The
// merge reads the level-0 files staged locally and writes one object; an
// idle database has little to merge (13–17 object-store requests a
// minute kept, 14 before).
func compactionLevels() litestream.CompactionLevels {
	levels := make(litestream.CompactionLevels, len(litestream.DefaultCompactionLevels))
	for i, l := range litestream.DefaultCompactionLevels {
		c := *l
		levels[i] = &c
	}
	levels[1].Interval = 5 * time.Second
	return levels
}
