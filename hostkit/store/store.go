// Package store keeps the db pair's data: one SQLite database per installed
// app, under one data directory, reached through Exec, KVGet/KVSet, Export
// and Import.
//
// The namespace is the host's own key for an installed app (the app argument
// of every method), never the appId an app announces. The key is escaped into
// a file name that cannot leave the directory (see FileName).
//
// # Limits and hardening
//
// Every app statement runs on a connection that
//   - refuses ATTACH, DETACH, VACUUM (with or without INTO), explicit
//     transactions (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE), virtual
//     tables, every PRAGMA outside a read-only safe list, and any use of the
//     reserved names starting with "_snug_" (the kv table);
//   - runs in SQLite's defensive mode with trusted_schema off, double-quoted
//     string literals off, and no extension loading (the engine is built
//     without it);
//   - stops a statement after Options.StatementTimeout (DB_TIMEOUT);
//   - stops the database at Options.QuotaBytes (DB_QUOTA_EXCEEDED) and the
//     engine's memory at Options.MaxMemoryBytes;
//   - stops reading rows once the answer could not fit the db frame
//     (DB_RESULT_TOO_LARGE).
//
// Each Exec is one statement in its own transaction: an acknowledged write
// is durable (WAL, synchronous=FULL) and survives a kill -9 of the host.
//
// # Driver
//
// The driver is github.com/ncruces/go-sqlite3: SQLite translated from Wasm
// to Go, so no cgo and plain cross-builds. It was chosen over
// github.com/mattn/go-sqlite3 (cgo) and modernc.org/sqlite because it exposes
// the whole hardening surface directly (authorizer, sqlite3_db_config,
// sqlite3_limit, interrupts through a context), is compiled without
// load_extension at all, and runs each connection in its own sandboxed
// memory with a hard cap, so a hostile statement can exhaust neither the
// host's memory nor escape into it.
//
// The store owns no goroutine outside a call; Close ends every connection.
package store

import (
	"context"
	"encoding/json"
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
}

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

// Store is the set of app databases under one directory. Its methods are
// safe for concurrent use; calls for one app run one at a time.
type Store struct {
	dir  string
	opts Options
}

// Open prepares a store over dir (created if missing, mode 0700) and removes
// leftovers of imports or exports a crash interrupted. Databases open lazily.
func Open(dir string, opts Options) (*Store, error) { panic("store: body follows") }

// Close waits for running calls (interrupting their statements) and closes
// every database. Later calls fail.
func (s *Store) Close() error { panic("store: body follows") }

// Exec runs exactly one SQL statement for app with params bound by position
// (?, ?NNN). A param is a JSON scalar: string, float64, json.Number, bool or
// nil (int and int64 are accepted from Go callers). Text with no statement,
// or more than one statement, is DB_SQL_ERROR.
func (s *Store) Exec(ctx context.Context, app, sql string, params []any) (*ExecResult, error) {
	panic("store: body follows")
}

// KVGet reads the JSON value stored under key. A key never set (or set to
// null, which deletes) gives found == false and a nil value.
func (s *Store) KVGet(ctx context.Context, app, key string) (value json.RawMessage, found bool, err error) {
	panic("store: body follows")
}

// KVSet stores value (any JSON, kept compacted) under key; the JSON null
// deletes the key. The kv data lives in the app's database, in the reserved
// table _snug_kv that the app's SQL cannot touch, and travels with Export.
func (s *Store) KVSet(ctx context.Context, app, key string, value json.RawMessage) error {
	panic("store: body follows")
}

// Export returns a consistent, compacted snapshot of app's database as an
// SQLite file (rollback-journal format, openable by any SQLite). A snapshot
// larger than frame.MaxArtifactBytes is DB_RESULT_TOO_LARGE.
func (s *Store) Export(ctx context.Context, app string) ([]byte, error) {
	panic("store: body follows")
}

// Import replaces app's database with data, an SQLite file of at most
// frame.MaxArtifactBytes. The file is checked (header, size, PRAGMA
// integrity_check, schema policy: no virtual tables, no object touching the
// reserved _snug_ names unless it is the kv table exactly; triggers and
// views are allowed since apps can create them too and they run under the
// same authorizer with trusted_schema off), written to a temporary file,
// synced and renamed over the old one. On any failure the old database is
// untouched and keeps working; a bad file is DB_IMPORT_INVALID.
func (s *Store) Import(ctx context.Context, app string, data []byte) (bytes int, err error) {
	panic("store: body follows")
}
