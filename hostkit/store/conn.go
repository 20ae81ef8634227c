package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/bytesize"
)

// kvTable is the kv table exactly as sqlite_schema stores it; Import accepts
// a _snug_kv table only when its definition is this one.
const kvTable = `CREATE TABLE _snug_kv(key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL CHECK (json_valid(value))) WITHOUT ROWID`

const vacuumRefused = "ATTACH, DETACH and VACUUM are refused by the host"

// reservedPrefix starts every name the app's SQL may not use.
const reservedPrefix = "_snug_"

// maxLikePattern bounds a LIKE or GLOB pattern, in bytes.
const maxLikePattern = 1024

// maxFunctionArgs bounds the arguments of one SQL function call.
const maxFunctionArgs = 127

// replicatorPrefix starts the tables a replicator keeps in the database
// beside the store (Litestream's _litestream_seq and _litestream_lock, in
// hostkit/cluster): reserved like reservedPrefix, and left out of exports.
const replicatorPrefix = "_litestream_"

// journalSizeLimit bounds the WAL file kept after a checkpoint.
const journalSizeLimit = 4 << 20

// appDB is one app's database: one connection, used by one call at a time.
type appDB struct {
	s    *Store
	app  string // the host's key, for messages
	path string
	lock chan struct{} // one slot: held for the length of a call

	lastUsed atomic.Uint64 // Store.clock at the last acquire
	// quick says the lock's holder is a call that does not wait (KVGetNow: a
	// bounded primary-key read on a transport's read loop), which lets go
	// within microseconds; tryAcquire looks again behind such a holder.
	quick atomic.Bool

	// Below: owned by the lock holder.
	open    atomic.Bool   // conn != nil, readable without the lock
	conn    *sqlite3.Conn // nil until first use and after an import swap
	kvGetSt *sqlite3.Stmt
	kvPutSt *sqlite3.Stmt
	kvDelSt *sqlite3.Stmt
	once    onceStmts              // ExecOnce's record (once.go)
	stmts   map[string]*cachedStmt // app statements by SQL text
	tick    uint64                 // use counter for the cache's LRU
	opCtx   context.Context        // the running call's context (with its timeout)
	trusted bool                   // the store's own statements: the authorizer allows all
	denied  string                 // why the authorizer last refused, for the message
	newFTS  [][2]string            // schema and name of each fts5 table the running statement creates
	inserts []string               // the tables the running statement inserts into, as the authorizer saw them (fullError)
	// kvCache holds values kvGet read (kvCacheBytes of keys and values in
	// all), while the connection is open and only under exclusive locking,
	// where no other connection can write the file: every write of
	// _snug_kv is the store's own kvSet on this connection (the app's SQL
	// cannot name it), which drops its key; opening and closing the
	// connection (an import's swap, a release) drops them all.
	kvCache      map[string]kvEntry
	kvCacheBytes int
}

// do runs fn on app's database under the call's lock and, when timed, the
// statement time limit, and turns what fails into an *Error or a wrapped
// host error. With open, the connection is opened first (Import does
// without: it replaces a file that may not even open). The kv calls are not timed: each is one primary-key lookup
// or write, and they skip the cost of a timer; the caller's ctx still
// interrupts them.
func (s *Store) do(ctx context.Context, app, op string, timed, open bool, fn func(*appDB) error) error {
	d, err := s.acquire(ctx, app)
	if err != nil {
		return fmt.Errorf("store: %s %q: %w", op, app, err)
	}
	return s.held(ctx, d, app, op, timed, open, fn)
}

// release lets go of d's lock, which the caller holds.
func (s *Store) release(d *appDB) {
	d.quick.Store(false)
	<-d.lock
	if s.openConns.Load() > int64(s.opts.MaxOpen) {
		s.closeIdle()
	}
}

// held is do's call on d, whose lock the caller took; it lets go of the
// lock when it returns.
func (s *Store) held(ctx context.Context, d *appDB, app, op string, timed, open bool, fn func(*appDB) error) (err error) {
	defer s.release(d)

	opCtx := ctx
	if timed {
		var cancel context.CancelFunc
		opCtx, cancel = context.WithTimeout(ctx, s.opts.StatementTimeout)
		defer cancel()
		stop := context.AfterFunc(s.ctx, cancel)
		defer stop()
	}
	d.opCtx = opCtx
	d.denied = ""

	if open && d.conn == nil {
		if err := noPanic(d.openConn); err != nil {
			return errors.Join(fmt.Errorf("store: %s %q: %w", op, app, err), d.closeConn())
		}
	}
	if d.conn != nil {
		// SQLite looks at it between VM steps, and the functions of
		// funcs.go inside their calls.
		d.conn.SetInterrupt(opCtx)
	}
	err = noPanic(func() error { return fn(d) })
	if d.conn != nil {
		d.conn.SetInterrupt(context.Background())
	}
	if err == nil {
		return nil
	}
	var dp *driverPanic
	if errors.Is(err, sqlite3.NOMEM) || errors.As(err, &dp) {
		// The engine's memory reached its cap, or the driver failed: start
		// afresh (and, after out of memory, small).
		if cerr := d.dropConn(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	err = s.classify(ctx, op, app, d, err)
	var se *Error
	if errors.As(err, &se) {
		se.Message = clip(se.Message, maxMessageBytes)
	}
	return err
}

// maxMessageBytes bounds an app-facing message, well inside the error
// object's message length.
const maxMessageBytes = 480

// clip cuts s to at most n bytes on a UTF-8 boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// oomMessage is the text of the panic the driver raises, instead of
// returning SQLITE_NOMEM, when the engine runs out of its capped memory.
const oomMessage = "sqlite3: out of memory"

func isOOM(v any) bool {
	err, ok := v.(error)
	return ok && err.Error() == oomMessage
}

// dropConn closes a connection that ran out of memory or saw the driver
// panic, rolling back what it had open; the next call opens a fresh one.
func (d *appDB) dropConn() error {
	if d.conn != nil && !d.conn.GetAutocommit() {
		d.conn.SetInterrupt(context.Background())
		_ = noPanic(func() error { return d.trustedExec("ROLLBACK") })
	}
	return d.closeConn()
}

// noPanic calls fn, turning the driver's out-of-memory panic into NOMEM
// and any other panic into a *driverPanic: a hostile database file can make
// the driver panic (found by FuzzImport: a corrupt schema whose error
// offset lies past the statement's text), and that must not take the host
// down.
func noPanic(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if isOOM(v) {
				err = sqlite3.NOMEM
				return
			}
			err = &driverPanic{v}
		}
	}()
	return fn()
}

// driverPanic is a panic recovered from a call into the driver.
type driverPanic struct{ v any }

func (p *driverPanic) Error() string { return fmt.Sprintf("sqlite driver panic: %v", p.v) }

// closeIdle closes the open database used longest ago whose lock is free.
func (s *Store) closeIdle() {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return
	}
	var oldest *appDB
	for _, d := range s.dbs {
		if d.open.Load() && (oldest == nil || d.lastUsed.Load() < oldest.lastUsed.Load()) {
			select {
			case d.lock <- struct{}{}: // idle: hold it while we look on
				if oldest != nil {
					<-oldest.lock
				}
				oldest = d
			default:
			}
		}
	}
	s.mu.Unlock()
	if oldest != nil {
		_ = oldest.closeConn() // a failed close is seen again on reopen
		<-oldest.lock
	}
}

// tryAcquire takes the lock of app's database when it is open and free,
// and returns nil at once otherwise (the database not made or not open
// yet, another call holding it, the store closing).
func (s *Store) tryAcquire(app string) *appDB {
	s.mu.RLock()
	d := s.dbs[app]
	s.mu.RUnlock()
	if d == nil || !d.open.Load() || s.closed.Load() {
		return nil
	}
	if !d.take() {
		return nil
	}
	if s.closed.Load() || d.conn == nil {
		<-d.lock
		return nil
	}
	d.lastUsed.Store(s.clock.Add(1))
	return d
}

// quickLooks bounds how many times take looks again for a lock held by a
// quick call (at 16 pages reading one app's kv, a quarter of the kvGets
// found it so and went to a worker).
const quickLooks = 4

// take takes d's lock if it is free, or once a quick holder (see quick)
// has let go: it yields to the other goroutines between looks, a bounded
// number of times, and gives up at once when the holder is any other call
// (it never waits behind a query, whatever its length).
func (d *appDB) take() bool {
	for i := 0; ; i++ {
		select {
		case d.lock <- struct{}{}:
			return true
		default:
		}
		if i == quickLooks || !d.quick.Load() {
			return false
		}
		yieldToHolder()
	}
}

// yieldToHolder is take's yield (a test's hook).
var yieldToHolder = runtime.Gosched

// acquire finds or makes the appDB for app and takes its lock. Finding
// one takes the store's lock for reading only: calls of every app pass
// here (issue 16's 16-page kvGet benchmark found the exclusive lock, taken
// twice per call, among its most contended).
func (s *Store) acquire(ctx context.Context, app string) (*appDB, error) {
	s.mu.RLock()
	d := s.dbs[app]
	s.mu.RUnlock()
	if d == nil {
		var err error
		if d, err = s.add(app); err != nil {
			return nil, err
		}
	}
	if s.closed.Load() {
		return nil, ErrClosed
	}
	d.lastUsed.Store(s.clock.Add(1))
	select {
	case d.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.ctx.Done():
		return nil, ErrClosed
	}
	if s.closed.Load() {
		<-d.lock
		return nil, ErrClosed
	}
	return d, nil
}

// add makes the appDB for app, unless another call made it first.
func (s *Store) add(app string) (*appDB, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return nil, ErrClosed
	}
	if d := s.dbs[app]; d != nil {
		return d, nil
	}
	name, err := relPath(app)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(s.dir, filepath.FromSlash(name))
	if dir := filepath.Dir(path); dir != s.dir {
		// A user's own directory: made on first use, and cleared of
		// what a crash left there, as Open does for the top one.
		if err := prepareDir(dir); err != nil {
			return nil, err
		}
	}
	d := &appDB{s: s, app: app, path: path, lock: make(chan struct{}, 1)}
	s.dbs[app] = d
	return d, nil
}

// classify maps a failed call's error to the app-facing *Error, or keeps it
// as the host's own failure.
func (s *Store) classify(ctx context.Context, op, app string, d *appDB, err error) error {
	var se *Error
	if errors.As(err, &se) {
		return se
	}
	if errors.Is(err, sqlite3.INTERRUPT) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		switch {
		case ctx.Err() != nil:
			return fmt.Errorf("store: %s %q: %w", op, app, ctx.Err())
		case s.ctx.Err() != nil:
			return fmt.Errorf("store: %s %q: %w", op, app, ErrClosed)
		case op == "import":
			// Retrying the same file would take as long again: the file
			// is refused, the old database untouched.
			return importErr("checking the file ran past the host's time limit of %s "+
				"(its CHECK constraints, indexes or schema cost too much to verify); the old database is untouched",
				s.opts.StatementTimeout)
		default:
			return &Error{Code: frame.CodeDBTimeout, Message: fmt.Sprintf(
				"the statement ran past the host's time limit of %s", s.opts.StatementTimeout)}
		}
	}
	var code sqlite3.ErrorCode
	if !errors.As(err, &code) {
		return fmt.Errorf("store: %s %q: %w", op, app, err)
	}
	var xcode sqlite3.ExtendedErrorCode
	if errors.As(err, &xcode) && xcode == sqlite3.CORRUPT_VTAB {
		// A virtual table's own storage (an fts5 index, an R*Tree) is
		// damaged: the app's data, which the app can rebuild; the file
		// itself is sound.
		return &Error{Code: frame.CodeDBCorrupt, Message: damagedIndex}
	}
	switch code {
	case sqlite3.FULL:
		return s.fullError(op, d)
	case sqlite3.NOMEM:
		return &Error{Code: frame.CodeDBQuotaExceeded, Message: fmt.Sprintf(
			"the statement needed more than the %s of memory the host allows", bytesize.Text(s.opts.MaxMemoryBytes))}
	case sqlite3.AUTH:
		msg := d.denied
		if msg == "" {
			msg = "not authorized"
		}
		return &Error{Code: frame.CodeDBSQLError, Message: msg}
	case sqlite3.IOERR, sqlite3.CORRUPT, sqlite3.NOTADB, sqlite3.CANTOPEN, sqlite3.BUSY,
		sqlite3.LOCKED, sqlite3.READONLY, sqlite3.PERM, sqlite3.MISUSE, sqlite3.INTERNAL,
		sqlite3.PROTOCOL, sqlite3.NOLFS, sqlite3.FORMAT:
		return fmt.Errorf("store: %s %q: %w", op, app, err)
	}
	msg := strings.TrimPrefix(err.Error(), "sqlite3: ")
	if d.denied != "" {
		// A module's own statement the authorizer refused (a shadow table
		// named into the reserved names): its error reads "not authorized".
		msg = d.denied
	}
	return &Error{Code: frame.CodeDBSQLError, Message: explain(msg)}
}

// fullError says what SQLITE_FULL meant. SQLite answers it for a file
// past max_page_count (the quota) and also for an AUTOINCREMENT table whose
// counter has reached the largest rowid, whatever the file's size: the
// second is the app's SQL error, named with its table, not a quota.
func (s *Store) fullError(op string, d *appDB) *Error {
	if op == "exec" && d.conn != nil && len(d.inserts) > 0 {
		if table := d.exhaustedCounter(); table != "" {
			return sqlErr("table %q has used every AUTOINCREMENT id (its counter in sqlite_sequence is at the largest rowid, %d): "+
				"no row can be added to it with a new id; the database is not full", table, int64(math.MaxInt64))
		}
	}
	msg := fmt.Sprintf("the statement would grow the database past its quota of %s", bytesize.Text(s.opts.QuotaBytes))
	if n := d.fileBytes(); n > 0 {
		msg += fmt.Sprintf(" (it holds %s)", bytesize.Text(n))
	}
	return &Error{Code: frame.CodeDBQuotaExceeded, Message: msg}
}

// exhaustedCounter names a table the failed statement inserts into
// (d.inserts) whose AUTOINCREMENT counter is at the largest rowid, "" when
// there is none (or no sqlite_sequence).
func (d *appDB) exhaustedCounter() string {
	d.trusted = true
	defer func() { d.trusted = false }()
	st, _, err := d.conn.Prepare("SELECT name FROM sqlite_sequence WHERE seq >= 9223372036854775807")
	if err != nil {
		return ""
	}
	defer func() { _ = st.Close() }()
	for st.Step() {
		name := st.ColumnText(0)
		for _, t := range d.inserts {
			if strings.EqualFold(t, name) {
				return name
			}
		}
	}
	return ""
}

// fileBytes is the size of d's database (its pages), 0 when unknown.
func (d *appDB) fileBytes() int64 {
	if d.conn == nil {
		return 0
	}
	d.trusted = true
	defer func() { d.trusted = false }()
	st, _, err := d.conn.Prepare("SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()")
	if err != nil {
		return 0
	}
	defer func() { _ = st.Close() }()
	if !st.Step() {
		return 0
	}
	return st.ColumnInt64(0)
}

// damagedIndex is the message of DB_CORRUPT.
const damagedIndex = "a full-text (fts5) or R*Tree index in the app's database is damaged: " +
	"rebuild a full-text index with INSERT INTO t(t) VALUES('rebuild') (a contentless one keeps no text: " +
	"drop it, create it again and insert its rows); an R*Tree: drop it and create it again from its data"

// openHardened opens path with the hardening every connection gets:
// defensive mode, trusted_schema off, no ATTACH, WAL with synchronous=FULL
// (or Options.Synchronous) under an exclusive lock, temp storage in the
// capped memory, the quota, and the functions of funcs.go in place of the
// builtins whose one call could outrun the statement limit.
func openHardened(path string, opts Options) (*sqlite3.Conn, error) {
	ctx := sqlite3.WithMaxMemory(context.Background(), opts.MaxMemoryBytes)
	c, err := sqlite3.OpenContext(ctx, path)
	if err != nil {
		return nil, err
	}
	if err := harden(c, opts); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := registerModules(c); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	if err := registerOverrides(c); err != nil {
		return nil, errors.Join(err, c.Close())
	}
	return c, nil
}

func harden(c *sqlite3.Conn, opts Options) error {
	for _, cfg := range []struct {
		op sqlite3.DBConfig
		on bool
	}{
		{sqlite3.DBCONFIG_DEFENSIVE, true},
		{sqlite3.DBCONFIG_TRUSTED_SCHEMA, false},
		{sqlite3.DBCONFIG_WRITABLE_SCHEMA, false},
		{sqlite3.DBCONFIG_DQS_DML, false},
		{sqlite3.DBCONFIG_DQS_DDL, false},
		{sqlite3.DBCONFIG_ENABLE_FTS3_TOKENIZER, false},
	} {
		got, err := c.Config(cfg.op, cfg.on)
		if err != nil {
			return fmt.Errorf("db_config %d: %w", cfg.op, err)
		}
		if got != cfg.on {
			return fmt.Errorf("db_config %d: stayed %v", cfg.op, got)
		}
	}
	// ATTACH and VACUUM need a slot: none. (The driver's Config stops at
	// DBCONFIG_REVERSE_SCANORDER, so ATTACH_CREATE/WRITE are not set; with
	// no slot and the authorizer there is nothing to attach anyway.)
	c.Limit(sqlite3.LIMIT_ATTACHED, 0)
	// A value may be as long as the db frame can carry, no longer.
	c.Limit(sqlite3.LIMIT_LENGTH, frame.MaxDBFrameBytes)
	// LIKE and GLOB cost up to pattern × text per call, inside one VM step;
	// SQLite allows 50,000-byte patterns. A pattern an app builds from a
	// search box is far shorter.
	c.Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, maxLikePattern)
	// The json functions walk their document once per path argument,
	// inside one VM step: SQLite allows 1,000 arguments since 3.48; its
	// earlier limit, 127, bounds one such call to about a second over an
	// array at the length limit (TestJSONPathsStayNearTheLimit).
	c.Limit(sqlite3.LIMIT_FUNCTION_ARG, maxFunctionArgs)

	// Exclusive locking (the default) before WAL: no shared-memory file,
	// and no second process can open the database while this host has it.
	locking := opts.LockingMode
	if locking == "" {
		locking = LockingExclusive
	}
	if locking == LockingNormal {
		// A replicator beside the store takes the write lock for a moment
		// on each sync: wait for it (interrupts still end the wait) rather
		// than failing the app's write with SQLITE_BUSY.
		if err := c.BusyTimeout(max(opts.StatementTimeout, time.Second)); err != nil {
			return err
		}
	}
	syncMode := opts.Synchronous
	if syncMode == "" {
		syncMode = SyncFull
	}
	err := c.Exec(fmt.Sprintf(`PRAGMA locking_mode=%s;
		PRAGMA journal_mode=WAL;
		PRAGMA synchronous=%s;
		PRAGMA temp_store=MEMORY;
		PRAGMA foreign_keys=ON;
		PRAGMA journal_size_limit=%d;`, locking, syncMode, journalSizeLimit))
	if err != nil {
		return err
	}
	mode, err := pragmaText(c, "journal_mode")
	if err != nil {
		return err
	}
	if mode != "wal" {
		return fmt.Errorf("journal_mode is %q, want wal", mode)
	}
	pageSize, err := pragmaInt(c, "page_size")
	if err != nil {
		return err
	}
	maxPages := max(opts.QuotaBytes/pageSize, 1)
	return c.Exec(fmt.Sprintf("PRAGMA max_page_count=%d", maxPages))
}

func pragmaText(c *sqlite3.Conn, name string) (string, error) {
	st, _, err := c.Prepare("PRAGMA " + name)
	if err != nil {
		return "", err
	}
	defer st.Close()
	if !st.Step() {
		return "", fmt.Errorf("PRAGMA %s: no row: %w", name, st.Err())
	}
	return st.ColumnText(0), nil
}

func pragmaInt(c *sqlite3.Conn, name string) (int64, error) {
	st, _, err := c.Prepare("PRAGMA " + name)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	if !st.Step() {
		return 0, fmt.Errorf("PRAGMA %s: no row: %w", name, st.Err())
	}
	return st.ColumnInt64(0), nil
}

// openConn opens the app's database, creating it and its kv table on first
// use, and installs the authorizer.
func (d *appDB) openConn() error {
	_, statErr := os.Stat(d.path)
	c, err := openHardened(d.path, d.s.opts)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	if errors.Is(statErr, fs.ErrNotExist) {
		// A new file: make its directory entry durable too.
		if err := syncDir(filepath.Dir(d.path)); err != nil {
			return errors.Join(fmt.Errorf("open database: %w", err), noPanic(c.Close))
		}
	}
	d.conn = c
	d.dropKVCache()
	d.open.Store(true)
	d.s.openConns.Add(1)
	d.trusted = true
	defer func() { d.trusted = false }()
	if err := c.SetAuthorizer(d.authorize); err != nil {
		return errors.Join(fmt.Errorf("authorizer: %w", err), d.closeConn())
	}
	if err := createKVTable(c); err != nil {
		return errors.Join(fmt.Errorf("kv table: %w", err), d.closeConn())
	}
	for _, p := range []struct {
		st  **sqlite3.Stmt
		sql string
	}{
		{&d.kvGetSt, `SELECT value FROM _snug_kv WHERE key = ?`},
		{&d.kvPutSt, `INSERT INTO _snug_kv(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`},
		{&d.kvDelSt, `DELETE FROM _snug_kv WHERE key = ?`},
	} {
		st, _, err := c.PrepareFlags(p.sql, sqlite3.PREPARE_PERSISTENT)
		if err != nil {
			return errors.Join(fmt.Errorf("kv statement: %w", err), d.closeConn())
		}
		*p.st = st
	}
	return nil
}

// createKVTable makes the kv table in c's database unless it is there:
// on first use, and in an import's candidate file before it replaces
// anything.
func createKVTable(c *sqlite3.Conn) error {
	return c.Exec(strings.Replace(kvTable, "CREATE TABLE", "CREATE TABLE IF NOT EXISTS", 1))
}

// closeConn finalizes the kv statements and closes the connection, which
// checkpoints the WAL into the database file and removes it.
func (d *appDB) closeConn() error {
	if d.conn == nil {
		return nil
	}
	// Closing a statement reports the error of its last step; after an
	// out-of-memory step the driver panics there, though the statement is
	// finalized: so each close is shielded and the connection still closes
	// (and releases its lock on the file).
	var errs []error
	for sql, cs := range d.stmts {
		_ = noPanic(cs.st.Close)
		delete(d.stmts, sql)
	}
	for _, st := range []**sqlite3.Stmt{&d.kvGetSt, &d.kvPutSt, &d.kvDelSt} {
		if *st != nil {
			_ = noPanic((*st).Close) // reports the last step's error, not the close's
			*st = nil
		}
	}
	d.closeOnce()
	d.conn.SetInterrupt(context.Background())
	errs = append(errs, noPanic(d.conn.Close))
	d.conn = nil
	d.dropKVCache()
	d.open.Store(false)
	d.s.openConns.Add(-1)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close %s: %w", filepath.Base(d.path), err)
	}
	return nil
}

// safePragmas are the PRAGMAs an app may run, all read-only. A value of
// false allows only the bare form (PRAGMA x); true also allows one argument
// that names an object (PRAGMA table_info(t)). database_list is left out: it
// shows the host's file path.
var safePragmas = map[string]bool{
	"application_id": false, "user_version": false, "schema_version": false,
	"data_version": false, "page_size": false, "page_count": false,
	"freelist_count": false, "max_page_count": false, "encoding": false,
	"foreign_keys": false, "journal_mode": false, "synchronous": false,
	"auto_vacuum": false, "collation_list": false, "function_list": false,
	"module_list": false, "pragma_list": false,
	"table_info": true, "table_xinfo": true, "table_list": true,
	"index_list": true, "index_info": true, "index_xinfo": true,
	"foreign_key_list": true, "foreign_key_check": true,
	"integrity_check": true, "quick_check": true,
}

// authorize is the SQLite authorizer for app statements; the store's own
// statements run trusted.
func (d *appDB) authorize(action sqlite3.AuthorizerActionCode, name3, name4, schema, inner string) sqlite3.AuthorizerReturnCode {
	if d.trusted {
		return sqlite3.AUTH_OK
	}
	switch action {
	case sqlite3.AUTH_ATTACH, sqlite3.AUTH_DETACH:
		// VACUUM and VACUUM INTO attach a database too and stop here.
		return d.deny(vacuumRefused)
	case sqlite3.AUTH_TRANSACTION, sqlite3.AUTH_SAVEPOINT:
		return d.deny("BEGIN, COMMIT, ROLLBACK, SAVEPOINT and RELEASE are refused: " +
			"each exec, and each snug.db.script as a whole, runs in its own transaction; " +
			"run statements that belong together with snug.db.script(\"…; …\")")
	case sqlite3.AUTH_CREATE_VTABLE, sqlite3.AUTH_DROP_VTABLE:
		// name4 is the module. What a module does inside (its shadow
		// tables) comes back through here as ordinary statements.
		if !allowedModule(name4) {
			return d.deny(moduleRefused(name4))
		}
		if action == sqlite3.AUTH_CREATE_VTABLE && strings.EqualFold(name4, "fts5") {
			d.newFTS = append(d.newFTS, [2]string{schema, name3})
		}
	case sqlite3.AUTH_INSERT:
		d.inserts = append(d.inserts, name3)
	case sqlite3.AUTH_FUNCTION:
		if strings.EqualFold(name4, "load_extension") {
			return d.deny("load_extension is refused by the host")
		}
	case sqlite3.AUTH_PRAGMA:
		withArg, ok := safePragmas[strings.ToLower(name3)]
		if strings.EqualFold(name3, "user_version") && name4 != "" {
			return d.deny(userVersionRefused(name4))
		}
		if !ok || (name4 != "" && !withArg) {
			form := name3
			if name4 != "" {
				form += "=" + name4
			}
			return d.deny("PRAGMA " + form + " is refused: only read-only PRAGMAs are allowed " +
				"(e.g. user_version, table_info(t), index_list(t), foreign_key_check)")
		}
	}
	if isReserved(name3) || isReserved(name4) {
		return d.deny("names starting with " + reservedPrefix + " are reserved by the host (kv storage)")
	}
	if isReplicator(name3) || isReplicator(name4) {
		return d.deny("names starting with " + replicatorPrefix + " are reserved by the host (replication)")
	}
	return sqlite3.AUTH_OK
}

// userVersionRefused is the refusal of PRAGMA user_version = v, with the
// Snug way to keep a schema version (issue 28 item 9).
func userVersionRefused(v string) string {
	return "PRAGMA user_version=" + v + " is refused: the database header is the host's. " +
		"Keep the version in a table of your own and run each step with its update in one transaction: " +
		"snug.db.script(\"alter table …; update meta set version = " + v + "\")"
}

func (d *appDB) deny(why string) sqlite3.AuthorizerReturnCode {
	if d.denied == "" {
		d.denied = why
	}
	return sqlite3.AUTH_DENY
}

func isReserved(name string) bool {
	return len(name) >= len(reservedPrefix) && strings.EqualFold(name[:len(reservedPrefix)], reservedPrefix)
}

func isReplicator(name string) bool {
	return len(name) >= len(replicatorPrefix) && strings.EqualFold(name[:len(replicatorPrefix)], replicatorPrefix)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}
