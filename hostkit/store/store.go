// Package store keeps the db pair's data: one SQLite database per installed
// app, under one data directory, reached through Exec, KVGet/KVSet, Export
// and Import. Its limit: it is the storage engine only; frame parsing,
// base64 and answering are the broker's.
//
// The namespace is the host's own key for an installed app (the app argument
// of every method), never the appId an app announces. The key is escaped into
// a file name that cannot leave the directory (see FileName). A data
// directory belongs to one Store: each database is held under an exclusive
// lock, so a second Store or process gets a host error, not a shared file.
//
// # Hardening
//
// Every app statement runs on a connection that
//   - refuses, through the authorizer, ATTACH, DETACH, VACUUM (with or
//     without INTO: both attach a database), explicit transactions (BEGIN,
//     COMMIT, ROLLBACK, SAVEPOINT, RELEASE), virtual tables of any module
//     but fts5, fts5vocab, rtree and rtree_i32 (frame.SQLVirtualTableModules;
//     see vtab.go), every PRAGMA outside a read-only safe list (safePragmas;
//     database_list is out since it shows a host path), and every name
//     starting with "_snug_" (and a CREATE or ALTER that would leave the
//     schema naming or referring to one, or an index on a virtual table's
//     shadow table, is rolled back: the policy Import applies to files);
//   - has no slot to attach a database into (SQLITE_LIMIT_ATTACHED 0);
//   - runs in defensive mode (so a virtual table's shadow tables are
//     written by its module only) with trusted_schema, writable_schema, the
//     fts3_tokenizer and double-quoted string literals off; the engine is
//     built without load_extension, so that function does not exist;
//   - stops a statement after Options.StatementTimeout (DB_TIMEOUT), also
//     inside one call of a function: the builtins whose one call could do
//     more than linear work (instr, replace, trim, LIKE, GLOB, unhex over
//     megabyte strings), where SQLite's own interrupt is never checked, are
//     replaced by the linear or interruptible functions of funcs.go;
//   - bounds LIKE and GLOB patterns to maxLikePattern bytes;
//   - stops the database at Options.QuotaBytes through max_page_count
//     (DB_QUOTA_EXCEEDED) and the engine's memory, temp tables and sorts
//     included (temp_store=MEMORY), at Options.MaxMemoryBytes
//     (DB_QUOTA_EXCEEDED too);
//   - stops reading rows once their JSON could not fit the db frame
//     (DB_RESULT_TOO_LARGE), counting each value as encoding/json writes it.
//
// # Semantics an app sees
//
// Exec runs one statement. A statement that writes runs in its own
// transaction, committed before Exec returns: an acknowledged write is
// durable (WAL, synchronous=FULL; it survives a kill -9 of the host) and a
// failed one (timeout, quota, result too large) leaves nothing behind.
// Several calls cannot share a transaction, since instances of one app share
// its database and a transaction left open by one would swallow the
// others' writes; related changes go in one statement (multi-row VALUES,
// UPSERT, INSERT ... SELECT, RETURNING). Foreign keys are enforced.
// Values come back as int64 (precise in JavaScript up to 2^53), float64,
// string, []byte for a BLOB (base64 in JSON), nil, and 1e999/-1e999 for an
// infinite REAL.
//
// The kv pairs live in the app's own database, in the table _snug_kv that
// the app's SQL cannot read, write or name; they travel with Export.
//
// Full-text search and R*Tree indexes are there: an app may create fts5
// (with bm25, highlight and snippet), fts5vocab, rtree and rtree_i32
// virtual tables. Their shadow tables live in the app's file, count against
// its quota and travel with Export. Each fts5 table gets fts5's
// secure-delete option, so that a database at its quota can still delete.
//
// Import checks the header against the file, the size, the schema policy
// (virtual tables of the allowed modules only, read with SQLite's own
// parser; no index or trigger on a shadow table; nothing named after or
// referring to the _snug_ names except the kv table exactly as the store
// makes it), and PRAGMA integrity_check (which also checks NOT NULL and CHECK
// constraints and runs each fts5 and rtree table's own consistency check).
// Triggers and views are allowed: an app can create them with Exec too, and
// they run under the same authorizer with trusted_schema off.
//
// # Driver
//
// The driver is github.com/ncruces/go-sqlite3: SQLite compiled to Wasm and
// translated to Go, so no cgo and plain cross-builds. It was chosen over
// github.com/mattn/go-sqlite3 (cgo) and modernc.org/sqlite (also pure Go,
// but built around database/sql, with less of the C API at hand and all
// connections in one process heap) because it exposes the whole hardening
// surface directly
// (authorizer, sqlite3_db_config, sqlite3_limit, interrupts through a
// context checked by the progress handler), is built without load_extension,
// and runs each connection in its own memory with a hard cap, so a hostile
// statement can neither exhaust the host's memory nor reach outside it. The
// driver panics when that cap is reached; the store recovers, reports
// DB_QUOTA_EXCEEDED and reopens the connection.
//
// Databases open on first use and stay open up to Options.MaxOpen; past it
// the idle one used longest ago is closed (checkpointed) and reopens on its
// next call.
//
// The store starts no goroutine of its own; Close interrupts running
// statements, waits for their calls (which the interrupt ends, inside a
// function's call too) and closes every connection.
//
// Import checks a file under the same limit: a file whose integrity check
// (CHECK constraints, expression indexes, schema) runs past
// Options.StatementTimeout is DB_IMPORT_INVALID, the old database untouched.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults for Options fields left zero.
const (
	// DefaultQuotaBytes is the size a database may grow to (the spec's default).
	DefaultQuotaBytes = 64 << 20
	// DefaultStatementTimeout is how long one statement may run.
	DefaultStatementTimeout = 5 * time.Second
	// DefaultMaxMemoryBytes caps the memory of one app's SQLite engine.
	DefaultMaxMemoryBytes = 128 << 20
	// DefaultMaxOpen is how many app databases stay open at once.
	DefaultMaxOpen = 64
)

// Options is host policy. The zero value gives the defaults above.
type Options struct {
	// QuotaBytes is the most a database file may hold (DB_QUOTA_EXCEEDED past it).
	QuotaBytes int64
	// StatementTimeout is the longest one statement may run (DB_TIMEOUT past it).
	StatementTimeout time.Duration
	// MaxMemoryBytes caps the memory of each app's SQLite engine (rounded up
	// to 64 KiB); a statement that needs more fails with DB_QUOTA_EXCEEDED.
	MaxMemoryBytes int64
	// MaxOpen is how many app databases stay open at once; past it the one
	// used longest ago (and idle) is closed, to reopen on its next call.
	MaxOpen int
	// LockingMode is SQLite's locking mode for every database:
	// LockingExclusive (the default) keeps any other process out of a
	// database while the store has it; LockingNormal lets a replicator such
	// as Litestream read it beside the store (both use SQLite's lock bytes
	// and the shared-memory file), and then something else, such as a
	// lease, must keep a second writer away.
	LockingMode string
	// Synchronous is when a commit waits for the disk: SyncFull (the
	// default) fsyncs the WAL on every commit, so a write survives the
	// machine losing power; SyncNormal only at checkpoints, so a commit
	// survives the process being killed but not the machine failing. Only
	// a host whose durability lies elsewhere (replicated mode acknowledges
	// a write once it is in the object store, and a restarted replica
	// never trusts its local copies) should set SyncNormal.
	Synchronous string
}

// Synchronous settings (Options.Synchronous).
const (
	SyncFull   = "FULL"
	SyncNormal = "NORMAL"
)

// Locking modes (Options.LockingMode).
const (
	LockingExclusive = "EXCLUSIVE"
	LockingNormal    = "NORMAL"
)

// Error is a failure the app is told about: Code is one of the db codes of
// the error registry (frame.CodeDBSQLError, frame.CodeDBQuotaExceeded,
// frame.CodeDBImportInvalid, frame.CodeDBResultTooLarge, frame.CodeDBTimeout)
// and Message is safe to send to the app (no host path, no secret).
// Any other error a method returns is the host's own failure (HOST_ERROR).
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return "store: " + e.Code + ": " + e.Message }

// ExecResult is the result of one statement, shaped like the exec result of
// a db-response. Row values are int64, float64, string, []byte (a BLOB,
// base64 in JSON), nil, or json.Number("1e999")/("-1e999") for an infinite
// REAL (JSON has no infinity; JavaScript parses 1e999 as Infinity).
type ExecResult struct {
	Columns         []string `json:"columns"`
	Rows            [][]any  `json:"rows"`
	Changes         int64    `json:"changes"`
	LastInsertRowid int64    `json:"lastInsertRowid"`
}

// Ready reports whether the Store serves calls: ErrClosed once Close
// began (the host's readiness, /readyz).
func (s *Store) Ready() error {
	if s.closed.Load() {
		return ErrClosed
	}
	return nil
}

// ErrClosed is returned by calls on a closed Store.
var ErrClosed = errors.New("store: closed")

// Store is the set of app databases under one directory. Its methods are
// safe for concurrent use; calls for one app run one at a time.
type Store struct {
	dir  string
	opts Options

	ctx    context.Context // cancelled by Close: interrupts running statements
	cancel context.CancelFunc

	openConns atomic.Int64 // connections open now

	// mu guards dbs; every call reads it (RLock), only a first call of an
	// app, Release and Close change it. closed is set under mu.Lock.
	mu     sync.RWMutex
	closed atomic.Bool
	clock  atomic.Uint64     // counts acquires, for lastUsed
	dbs    map[string]*appDB // by app key (FileName is one-to-one)

	onceMax int // records of writes applied once kept per database (onceMax; tests lower it)
}

// Open prepares a store over dir (created if missing, mode 0700) and removes
// leftovers of imports or exports a crash interrupted. Databases open lazily.
func Open(dir string, opts Options) (*Store, error) {
	if opts.QuotaBytes <= 0 {
		opts.QuotaBytes = DefaultQuotaBytes
	}
	if opts.StatementTimeout <= 0 {
		opts.StatementTimeout = DefaultStatementTimeout
	}
	if opts.MaxMemoryBytes <= 0 {
		opts.MaxMemoryBytes = DefaultMaxMemoryBytes
	}
	if opts.MaxMemoryBytes > 4<<30 {
		return nil, fmt.Errorf("store: open %s: MaxMemoryBytes %d is past the engine's 4 GiB", dir, opts.MaxMemoryBytes)
	}
	if opts.MaxOpen <= 0 {
		opts.MaxOpen = DefaultMaxOpen
	}
	switch opts.LockingMode {
	case "":
		opts.LockingMode = LockingExclusive
	case LockingExclusive, LockingNormal:
	default:
		return nil, fmt.Errorf("store: open %s: LockingMode %q is neither %q nor %q", dir, opts.LockingMode, LockingExclusive, LockingNormal)
	}
	switch opts.Synchronous {
	case "":
		opts.Synchronous = SyncFull
	case SyncFull, SyncNormal:
	default:
		return nil, fmt.Errorf("store: open %s: Synchronous %q is neither %q nor %q", dir, opts.Synchronous, SyncFull, SyncNormal)
	}
	if err := prepareDir(dir); err != nil {
		return nil, fmt.Errorf("store: open %s: %w", dir, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Store{dir: dir, opts: opts, ctx: ctx, cancel: cancel, dbs: map[string]*appDB{}, onceMax: onceMax}, nil
}

// prepareDir makes dir (mode 0700) and removes the leftovers of imports or
// exports a crash interrupted.
func prepareDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if n := e.Name(); strings.Contains(n, importSuffix) || strings.Contains(n, exportSuffix) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return fmt.Errorf("remove leftover: %w", err)
			}
		}
	}
	return nil
}

// Path is the file of key's database (an app key or a UserKey), for a host
// that replicates it: the store itself never shows it to an app.
func (s *Store) Path(key string) (string, error) {
	name, err := relPath(key)
	if err != nil {
		return "", fmt.Errorf("store: path %q: %w", key, err)
	}
	return filepath.Join(s.dir, filepath.FromSlash(name)), nil
}

// Ensure opens key's database now, creating it (with its kv table) when it
// does not exist: a replicating host calls it before it starts copying the
// file, so the copy starts from a database in WAL mode.
func (s *Store) Ensure(ctx context.Context, key string) error {
	return s.do(ctx, key, "open", false, true, func(*appDB) error { return nil })
}

// Release waits for the call running on key's database, if any, closes its
// connection (which checkpoints the WAL when it is the last one) and
// forgets it; the next call opens it again. A replicating host releases a
// database before it swaps or removes the file under it, and when another
// replica owns it now.
func (s *Store) Release(ctx context.Context, key string) error {
	s.mu.RLock()
	d := s.dbs[key]
	s.mu.RUnlock()
	if d == nil {
		return nil
	}
	d, err := s.acquire(ctx, key)
	if err != nil {
		return fmt.Errorf("store: release %q: %w", key, err)
	}
	err = d.closeConn()
	s.mu.Lock()
	if s.dbs[key] == d {
		delete(s.dbs, key)
	}
	s.mu.Unlock()
	<-d.lock
	if err != nil {
		return fmt.Errorf("store: release %q: %w", key, err)
	}
	return nil
}

// closeWait bounds how long Close waits for running calls: the interrupt
// ends them within milliseconds, so this is reached only when one is stuck
// where no interrupt is looked at.
const closeWait = time.Second

// Close interrupts running statements, waits for their calls to end (at most
// about a second: a call still running then is left to finish on its own
// and its database is not closed) and closes every database. Later calls
// return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed.Load() {
		s.mu.Unlock()
		return nil
	}
	s.closed.Store(true)
	s.cancel()
	dbs := make([]*appDB, 0, len(s.dbs))
	for _, d := range s.dbs {
		dbs = append(dbs, d)
	}
	s.mu.Unlock()
	var errs []error
	deadline := time.NewTimer(closeWait)
	defer deadline.Stop()
	for _, d := range dbs {
		select {
		case d.lock <- struct{}{}: // held for good: the store is closed
			errs = append(errs, d.closeConn())
		case <-deadline.C:
			errs = append(errs, fmt.Errorf("store: close: a call of %q was still running after %s: its database is left open", d.app, closeWait))
			deadline.Reset(0)
		}
	}
	return errors.Join(errs...)
}

// Exec runs exactly one SQL statement for app with params bound by position
// (?, ?NNN). A param is a JSON scalar: string, float64, json.Number, bool
// (bound as 1 or 0) or nil; int and int64 are accepted from Go callers.
// Text with no statement, or more than one statement, is DB_SQL_ERROR.
// A statement that changes the database runs in its own transaction: it is
// committed (and durable) when Exec returns nil, rolled back otherwise.
func (s *Store) Exec(ctx context.Context, app, sql string, params []any) (*ExecResult, error) {
	var res *ExecResult
	err := s.do(ctx, app, "exec", true, true, func(d *appDB) (err error) {
		res, err = d.exec(sql, params)
		return err
	})
	return res, err
}

// Script runs the statements of sql (separated by semicolons) in order in
// one transaction of app's database: all take effect or none. Each is
// checked as Exec checks one; none takes parameters and no rows come back.
// The result has the changes of all of them and the last statement's
// lastInsertRowid.
func (s *Store) Script(ctx context.Context, app, sql string) (*ExecResult, error) {
	var res *ExecResult
	err := s.do(ctx, app, "exec", true, true, func(d *appDB) (err error) {
		res, err = d.script(sql)
		return err
	})
	return res, err
}

// KVValue is a kv value as the store hands it out. Raw may be shared: the
// store's kv cache and every reader of the key since it was cached hold
// the same bytes, so nobody may change them (a later KVSet makes new
// bytes and leaves them as they were).
type KVValue struct {
	Raw   json.RawMessage // nil when not found
	Found bool
}

// KVGet reads the JSON value stored under key. A key never set (or set to
// null, which deletes) gives found == false and a nil value. The value
// may be shared with the store's cache and other callers: it must not be
// changed (see KVValue).
func (s *Store) KVGet(ctx context.Context, app, key string) (value json.RawMessage, found bool, err error) {
	err = s.do(ctx, app, "kvGet", false, true, func(d *appDB) error {
		v, err := d.kvGet(key)
		value, found = v.Raw, v.Found
		return err
	})
	return value, found, err
}

// KVGetNow is KVGet for a caller that must not wait, such as a
// transport's read loop: it reads only when app's database is open and no
// other call is using it, and otherwise returns ok false having done
// nothing (the caller then uses KVGet, which waits its turn). The read is
// one primary-key lookup, bounded by the value's size limit. The value is
// shared, not to be changed (see KVValue).
func (s *Store) KVGetNow(app, key string) (v KVValue, ok bool, err error) {
	d := s.tryAcquire(app)
	if d == nil {
		return KVValue{}, false, nil
	}
	d.quick.Store(true)
	if e, hit := d.kvCache[key]; hit {
		// A value in the cache (whose keys are all valid) needs nothing of
		// a call but the lock: no engine, no interrupt, no recovery.
		s.release(d)
		return e.value(), true, nil
	}
	err = s.held(context.Background(), d, app, "kvGet", false, true, func(d *appDB) (err error) {
		v, err = d.kvGet(key)
		return err
	})
	return v, true, err
}

// KVSet stores value (any JSON, kept compacted) under key; the JSON null
// deletes the key. A value that would not read back as stored (a number
// beyond a double's range, an unpaired surrogate escape, a key twice) is
// DB_SQL_ERROR. The kv data lives in the app's database, in the reserved
// table _snug_kv that the app's SQL cannot touch, and travels with Export.
func (s *Store) KVSet(ctx context.Context, app, key string, value json.RawMessage) error {
	return s.do(ctx, app, "kvSet", false, true, func(d *appDB) error {
		return d.kvSet(key, value)
	})
}

// Export returns a consistent, compacted snapshot of app's database as an
// SQLite file (rollback-journal format, openable by any SQLite). A snapshot
// larger than frame.MaxArtifactBytes is DB_RESULT_TOO_LARGE.
func (s *Store) Export(ctx context.Context, app string) ([]byte, error) {
	var data []byte
	err := s.do(ctx, app, "export", true, true, func(d *appDB) (err error) {
		data, err = d.export()
		return err
	})
	return data, err
}

// Import replaces app's database with data, an SQLite file of at most
// frame.MaxArtifactBytes. The file is checked (header, size, PRAGMA
// integrity_check with the virtual tables' own checks, and the schema
// policy: virtual tables of the allowed modules only, no index or trigger on
// their shadow tables, nothing named or referring to the reserved _snug_
// names except the kv table exactly as the store makes it, kv keys and
// values that KVSet would take (valueProblem); triggers and views are
// allowed, since apps can create them too and they run under the same
// authorizer with trusted_schema off), written to a temporary file, synced
// and renamed over the old one. On any failure the old database is
// untouched and keeps working; a bad file is DB_IMPORT_INVALID, a file
// larger than Options.QuotaBytes DB_QUOTA_EXCEEDED. The kv table is made in
// the checked file before the rename, so a file that fills the quota and
// leaves no page for it is DB_QUOTA_EXCEEDED too, not a database that no
// longer opens.
func (s *Store) Import(ctx context.Context, app string, data []byte) (bytes int, err error) {
	err = s.do(ctx, app, "import", true, false, func(d *appDB) error {
		return d.importFile(data)
	})
	if err != nil {
		return 0, err
	}
	return len(data), nil
}
