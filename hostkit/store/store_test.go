package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

var bg = context.Background()

// newStore opens a store in a new directory, closed when the test ends.
func newStore(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	dir := t.TempDir()
	return openStore(t, dir, opts), dir
}

// seededDir is a directory holding app a's seeded database, its store
// closed: a test opens it with the limits under test.
func seededDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	s0, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s0, "a")
	if err := s0.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openStore opens the store in dir, closed when the test ends (after a
// Close of the test's own, a second one does nothing).
func openStore(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func mustExec(t testing.TB, s *Store, app, sql string, params ...any) *ExecResult {
	t.Helper()
	r, err := s.Exec(bg, app, sql, params)
	if err != nil {
		t.Fatalf("Exec(%q): %v", sql, err)
	}
	return r
}

func wantCode(t testing.TB, err error, code string) *Error {
	t.Helper()
	var se *Error
	if !errors.As(err, &se) {
		t.Fatalf("error %v: want a *store.Error with code %s", err, code)
	}
	if se.Code != code {
		t.Fatalf("code %s (%s): want %s", se.Code, se.Message, code)
	}
	return se
}

func rowsJSON(t testing.TB, r *ExecResult) string {
	t.Helper()
	b, err := json.Marshal(r.Rows)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// seed makes a table whose content every failure test reads back.
func seed(t testing.TB, s *Store, app string) {
	t.Helper()
	mustExec(t, s, app, "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
	mustExec(t, s, app, "INSERT INTO notes(body) VALUES (?), (?)", "first", "second")
	if err := s.KVSet(bg, app, "prefs", json.RawMessage(`{"theme":"dark"}`)); err != nil {
		t.Fatal(err)
	}
}

// unchanged checks that what seed wrote reads back as it was.
func unchanged(t testing.TB, s *Store, app string) {
	t.Helper()
	r := mustExec(t, s, app, "SELECT id, body FROM notes ORDER BY id")
	if got, want := rowsJSON(t, r), `[[1,"first"],[2,"second"]]`; got != want {
		t.Fatalf("notes = %s, want %s", got, want)
	}
	v, found, err := s.KVGet(bg, app, "prefs")
	if err != nil || !found || string(v) != `{"theme":"dark"}` {
		t.Fatalf("kv prefs = %s %v %v", v, found, err)
	}
}

func TestExecTypesAndParams(t *testing.T) {
	s, _ := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE TABLE t(i INTEGER, r REAL, s TEXT, b BLOB, n, any_)")
	r := mustExec(t, s, "a", "INSERT INTO t VALUES (?, ?, ?, x'00ff10', ?, ?)",
		float64(3), 2.5, "héllo \"q\" <b>", nil, true)
	if r.Changes != 1 || r.LastInsertRowid != 1 {
		t.Fatalf("insert: changes %d, rowid %d", r.Changes, r.LastInsertRowid)
	}
	mustExec(t, s, "a", "INSERT INTO t(i, r, s, any_) VALUES (?, ?, ?, ?)",
		json.Number("9007199254740993"), json.Number("1.25"), "", false)

	r = mustExec(t, s, "a", "SELECT i, typeof(i), r, s, b, n, any_ FROM t ORDER BY rowid")
	if !reflect.DeepEqual(r.Columns, []string{"i", "typeof(i)", "r", "s", "b", "n", "any_"}) {
		t.Fatalf("columns %q", r.Columns)
	}
	want := [][]any{
		{int64(3), "integer", 2.5, "héllo \"q\" <b>", []byte{0, 0xff, 0x10}, nil, int64(1)},
		{int64(9007199254740993), "integer", 1.25, "", nil, nil, int64(0)},
	}
	if !reflect.DeepEqual(r.Rows, want) {
		t.Fatalf("rows %#v\nwant %#v", r.Rows, want)
	}
	if r.Changes != 0 || r.LastInsertRowid != 0 {
		t.Fatalf("select: changes %d, rowid %d, want 0 0", r.Changes, r.LastInsertRowid)
	}
	if got := rowsJSON(t, r); !strings.Contains(got, `"AP8Q"`) {
		t.Fatalf("a BLOB is base64 in JSON: %s", got)
	}

	// JSON has no infinity: 1e999 is the number JavaScript reads as Infinity.
	r = mustExec(t, s, "a", "SELECT 1e999, -1e999, 0.1")
	if got := rowsJSON(t, r); got != `[[1e999,-1e999,0.1]]` {
		t.Fatalf("infinities: %s", got)
	}

	// UPDATE counts its rows; DDL counts none.
	r = mustExec(t, s, "a", "UPDATE t SET n = 1")
	if r.Changes != 2 {
		t.Fatalf("update changes %d", r.Changes)
	}
	if r = mustExec(t, s, "a", "CREATE INDEX t_i ON t(i)"); r.Changes != 0 {
		t.Fatalf("DDL changes %d", r.Changes)
	}
	// A statement with RETURNING gives rows and changes.
	r = mustExec(t, s, "a", "DELETE FROM t WHERE i = ? RETURNING s", 3)
	if r.Changes != 1 || rowsJSON(t, r) != `[["héllo \"q\" \u003cb\u003e"]]` {
		t.Fatalf("returning: %d %s", r.Changes, rowsJSON(t, r))
	}
}

func TestExecOneStatementAndBadParams(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for _, c := range []struct {
		sql    string
		params []any
		msg    string
	}{
		{"SELECT 1; SELECT 2", nil, "more than one statement"},
		{"SELECT 1; DELETE FROM notes", nil, "more than one statement"},
		{"", nil, "no statement"},
		{"  ; -- only a comment\n", nil, "no statement"},
		{"SELECT ?", nil, "1 parameters and 0 values"},
		{"SELECT ?", []any{1, 2}, "1 parameters and 2 values"},
		{"SELECT ?", []any{map[string]any{"a": 1}}, "not a JSON scalar"},
		{"SELECT ?", []any{[]any{1}}, "not a JSON scalar"},
		{"SELEKT 1", nil, "syntax error"},
		{"SELECT * FROM nowhere", nil, "no such table: nowhere"},
		{"INSERT INTO notes(id, body) VALUES (1, 'dup')", nil, "UNIQUE constraint failed"},
	} {
		_, err := s.Exec(bg, "a", c.sql, c.params)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, c.msg) {
			t.Errorf("%q: message %q, want it to contain %q", c.sql, se.Message, c.msg)
		}
	}
	// Trailing blanks, semicolons and comments are one statement.
	r := mustExec(t, s, "a", "SELECT count(*) FROM notes; -- done\n ; /* end */")
	if rowsJSON(t, r) != "[[2]]" {
		t.Fatal(rowsJSON(t, r))
	}
	unchanged(t, s, "a")
}

func TestKV(t *testing.T) {
	s, _ := newStore(t, Options{})
	if v, found, err := s.KVGet(bg, "a", "missing"); err != nil || found || v != nil {
		t.Fatalf("missing key: %s %v %v", v, found, err)
	}
	if err := s.KVSet(bg, "a", "k", json.RawMessage(" {\"b\": [1, 2.5, \"x\"],\n \"a\": null} ")); err != nil {
		t.Fatal(err)
	}
	v, found, err := s.KVGet(bg, "a", "k")
	if err != nil || !found || string(v) != `{"b":[1,2.5,"x"],"a":null}` {
		t.Fatalf("get: %s %v %v", v, found, err)
	}
	// The string "null" is a value; the JSON null deletes.
	if err := s.KVSet(bg, "a", "s", json.RawMessage(`"null"`)); err != nil {
		t.Fatal(err)
	}
	if v, found, _ := s.KVGet(bg, "a", "s"); !found || string(v) != `"null"` {
		t.Fatalf("string null: %s %v", v, found)
	}
	for _, k := range []string{"k", "s", "never-set"} {
		if err := s.KVSet(bg, "a", k, json.RawMessage(`null`)); err != nil {
			t.Fatal(err)
		}
		if v, found, err := s.KVGet(bg, "a", k); err != nil || found || v != nil {
			t.Fatalf("after null, %s: %s %v %v", k, v, found, err)
		}
	}
	// Scalars, unicode keys, apps apart.
	if err := s.KVSet(bg, "a", "ключ🔑", json.RawMessage(`42`)); err != nil {
		t.Fatal(err)
	}
	if v, found, _ := s.KVGet(bg, "a", "ключ🔑"); !found || string(v) != "42" {
		t.Fatalf("unicode key: %s %v", v, found)
	}
	if _, found, _ := s.KVGet(bg, "b", "ключ🔑"); found {
		t.Fatal("app b sees app a's key")
	}
	// Bad input.
	wantCode(t, s.KVSet(bg, "a", "x", json.RawMessage(`{"a":`)), frame.CodeDBSQLError)
	wantCode(t, s.KVSet(bg, "a", "x", nil), frame.CodeDBSQLError)
	wantCode(t, s.KVSet(bg, "a", "", json.RawMessage(`1`)), frame.CodeDBSQLError)
	_, _, err = s.KVGet(bg, "a", strings.Repeat("k", MaxKeyBytes+1))
	wantCode(t, err, frame.CodeDBSQLError)
}

func TestKVTableIsOutOfReach(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for _, sql := range []string{
		"SELECT * FROM _snug_kv",
		"SELECT * FROM main._SNUG_KV",
		`SELECT * FROM "_snug_kv"`,
		"INSERT INTO _snug_kv VALUES ('prefs', '1')",
		"UPDATE _snug_kv SET value = '1'",
		"DELETE FROM _snug_kv",
		"DROP TABLE _snug_kv",
		"ALTER TABLE _snug_kv RENAME TO stolen",
		"CREATE TABLE _snug_other(a)",
		"CREATE INDEX kv_v ON _snug_kv(value)",
		"CREATE TRIGGER t AFTER DELETE ON _snug_kv BEGIN SELECT 1; END",
		"PRAGMA table_info(_snug_kv)",
		"SELECT * FROM pragma_table_info('_snug_kv')",
	} {
		_, err := s.Exec(bg, "a", sql, nil)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, "reserved") {
			t.Errorf("%s: message %q", sql, se.Message)
		}
	}
	// Nor can a view, trigger or foreign key the app makes, or a rename
	// into the reserved names (the authorizer sees only the old name): the
	// schema is checked before the statement commits.
	for _, sql := range []string{
		"CREATE VIEW peek AS SELECT * FROM _snug_kv",
		"CREATE TEMP VIEW peek AS SELECT * FROM main._snug_kv",
		"CREATE TRIGGER wipe AFTER INSERT ON notes BEGIN DELETE FROM _snug_kv; END",
		"CREATE TEMP TRIGGER wipe AFTER INSERT ON main.notes BEGIN DELETE FROM main._snug_kv; END",
		"CREATE TABLE pin(k TEXT REFERENCES _snug_kv(key) ON DELETE CASCADE)",
		"ALTER TABLE notes RENAME TO _snug_notes",
		"ALTER TABLE notes RENAME TO _SNUG_NOTES",
	} {
		_, err := s.Exec(bg, "a", sql, nil)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, "reserved") {
			t.Errorf("%s: message %q", sql, se.Message)
		}
	}
	r := mustExec(t, s, "a", "SELECT count(*) FROM sqlite_schema WHERE name <> '_snug_kv'")
	if rowsJSON(t, r) != "[[1]]" {
		t.Fatalf("schema objects after the refusals: %s", rowsJSON(t, r))
	}
	unchanged(t, s, "a")
}

func TestRefusedStatements(t *testing.T) {
	s, dir := newStore(t, Options{})
	seed(t, s, "a")
	outside := filepath.Join(t.TempDir(), "stolen.db")
	for _, c := range []struct{ class, sql string }{
		{"attach", "ATTACH '" + outside + "' AS x"},
		{"attach", "ATTACH ':memory:' AS m"},
		{"attach", "ATTACH '' AS t2"},
		{"detach", "DETACH main"},
		{"detach", "DETACH temp"},
		{"load_extension", "SELECT load_extension('/tmp/evil.so')"},
		{"vacuum into", "VACUUM INTO '" + outside + "'"},
		{"vacuum into", "/* c */ vacuum main INTO ?"},
		{"vacuum", "VACUUM"},
		{"pragma", "PRAGMA writable_schema = ON"},
		{"pragma", "PRAGMA writable_schema"},
		{"pragma", "PRAGMA journal_mode = DELETE"},
		{"pragma", "PRAGMA journal_mode = OFF"},
		{"pragma", "PRAGMA synchronous = OFF"},
		{"pragma", "PRAGMA locking_mode = NORMAL"},
		{"pragma", "PRAGMA max_page_count = 2147483647"},
		{"pragma", "PRAGMA trusted_schema = ON"},
		{"pragma", "PRAGMA user_version = 7"},
		{"pragma", "PRAGMA foreign_keys = OFF"},
		{"pragma", "PRAGMA cell_size_check = OFF"},
		{"pragma", "PRAGMA mmap_size = 1000000000"},
		{"pragma", "PRAGMA temp_store_directory = '/tmp'"},
		{"pragma", "PRAGMA database_list"},
		{"pragma", "SELECT * FROM pragma_database_list"},
		{"pragma", "PRAGMA main.journal_mode = MEMORY"},
		{"transaction", "BEGIN"},
		{"transaction", "COMMIT"},
		{"transaction", "ROLLBACK"},
		{"transaction", "SAVEPOINT sp"},
		{"transaction", "RELEASE sp"},
		{"virtual table", "CREATE VIRTUAL TABLE v USING generate_series"},
		{"schema write", "UPDATE sqlite_schema SET sql = 'x' WHERE name = 'notes'"},
		{"schema write", "DELETE FROM sqlite_master"},
	} {
		var params []any
		if strings.Contains(c.sql, "?") {
			params = []any{outside}
		}
		_, err := s.Exec(bg, "a", c.sql, params)
		se := wantCode(t, err, frame.CodeDBSQLError)
		t.Logf("%-14s %-50s -> %s", c.class, c.sql, se.Message)
	}
	if _, err := os.Stat(outside); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused statement created %s", outside)
	}
	// Issue 28 item 9: the migration idiom's write names the Snug way.
	_, err := s.Exec(bg, "a", "PRAGMA user_version = 2", nil)
	if se := wantCode(t, err, frame.CodeDBSQLError); !strings.Contains(se.Message, `snug.db.script("alter table …; update meta set version = 2")`) {
		t.Errorf("PRAGMA user_version = 2 is refused with %q; it should name a version table and snug.db.script", se.Message)
	}
	// The settings the refused PRAGMAs aimed at still hold.
	r := mustExec(t, s, "a", "PRAGMA journal_mode")
	if rowsJSON(t, r) != `[["wal"]]` {
		t.Fatalf("journal_mode %s", rowsJSON(t, r))
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "a.db") {
			t.Errorf("unexpected file %s in the data directory", e.Name())
		}
	}
	unchanged(t, s, "a")
}

func TestSafePragmasAllowed(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for sql, want := range map[string]string{
		"PRAGMA user_version":                           `[[0]]`,
		"PRAGMA journal_mode":                           `[["wal"]]`,
		"PRAGMA foreign_keys":                           `[[1]]`,
		"PRAGMA integrity_check":                        `[["ok"]]`,
		"PRAGMA quick_check":                            `[["ok"]]`,
		"PRAGMA foreign_key_check":                      `[]`,
		"PRAGMA index_list(notes)":                      `[]`,
		"SELECT name FROM pragma_table_info('notes')":   `[["id"],["body"]]`,
		"PRAGMA table_info(notes)":                      `[[0,"id","INTEGER",0,null,1],[1,"body","TEXT",0,null,0]]`,
		"SELECT count(*) > 0 FROM pragma_function_list": `[[1]]`,
		"SELECT name FROM sqlite_schema WHERE type='table' AND name NOT LIKE '\\_snug\\_%' ESCAPE '\\'": `[["notes"]]`,
	} {
		r := mustExec(t, s, "a", sql)
		if got := rowsJSON(t, r); got != want {
			t.Errorf("%s = %s, want %s", sql, got, want)
		}
	}
}

// TestHardeningKnobs reads back, on the live connection, each setting the
// package doc promises, and shows defensive mode holding on its own.
func TestHardeningKnobs(t *testing.T) {
	s, _ := newStore(t, Options{QuotaBytes: 1 << 20})
	seed(t, s, "a")
	d := s.dbs["a"]
	d.lock <- struct{}{}
	defer func() { <-d.lock }()
	c := d.conn
	for op, want := range map[sqlite3.DBConfig]bool{
		sqlite3.DBCONFIG_DEFENSIVE:             true,
		sqlite3.DBCONFIG_TRUSTED_SCHEMA:        false,
		sqlite3.DBCONFIG_WRITABLE_SCHEMA:       false,
		sqlite3.DBCONFIG_DQS_DML:               false,
		sqlite3.DBCONFIG_DQS_DDL:               false,
		sqlite3.DBCONFIG_ENABLE_FTS3_TOKENIZER: false,
		sqlite3.DBCONFIG_ENABLE_LOAD_EXTENSION: false,
	} {
		got, err := c.Config(op)
		if err != nil || got != want {
			t.Errorf("db_config %d = %v (%v), want %v", op, got, err, want)
		}
	}
	if n := c.Limit(sqlite3.LIMIT_ATTACHED, -1); n != 0 {
		t.Errorf("LIMIT_ATTACHED = %d", n)
	}
	if n := c.Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, -1); n != maxLikePattern {
		t.Errorf("LIMIT_LIKE_PATTERN_LENGTH = %d", n)
	}
	d.trusted = true // the authorizer out of the way: the engine alone
	defer func() { d.trusted = false }()
	for pragma, want := range map[string]int64{"max_page_count": (1 << 20) / 4096, "synchronous": 2, "temp_store": 2} {
		if got, err := pragmaInt(c, pragma); err != nil || got != want {
			t.Errorf("PRAGMA %s = %d (%v), want %d", pragma, got, err, want)
		}
	}
	if mode, _ := pragmaText(c, "locking_mode"); mode != "exclusive" {
		t.Errorf("locking_mode %s", mode)
	}
	if err := c.Exec("ATTACH ':memory:' AS m"); err == nil {
		t.Error("ATTACH passed the attach limit")
	}
	// Defensive mode: writable_schema cannot be turned on, so the schema
	// cannot be written, even with the authorizer bypassed.
	_ = c.Exec("PRAGMA writable_schema = ON")
	if err := c.Exec("UPDATE sqlite_schema SET sql = 'CREATE TABLE notes(x)' WHERE name = 'notes'"); err == nil {
		t.Error("defensive mode let sqlite_schema be written")
	}
	if err := c.Exec("PRAGMA journal_mode = OFF"); err != nil {
		t.Log(err)
	}
	if mode, _ := pragmaText(c, "journal_mode"); mode != "wal" {
		t.Errorf("defensive mode let journal_mode become %s", mode)
	}
	// trusted_schema off: a view may not use a virtual table that is not
	// marked innocuous, such as a PRAGMA's.
	d.trusted = false
	if err := c.Exec("CREATE VIEW cols AS SELECT name FROM pragma_table_info('notes')"); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec("SELECT * FROM cols"); err == nil || !strings.Contains(err.Error(), "unsafe use") {
		t.Errorf("trusted_schema off: view over a PRAGMA table gave %v", err)
	}
	d.trusted = true
	// Double-quoted strings are identifiers only.
	if err := c.Exec(`SELECT "no such column"`); err == nil {
		t.Error(`"text" was read as a string literal`)
	}
}

func TestQuota(t *testing.T) {
	s, dir := newStore(t, Options{QuotaBytes: 256 << 10})
	seed(t, s, "a")
	_, err := s.Exec(bg, "a", "INSERT INTO notes(body) SELECT hex(randomblob(1000)) FROM generate_series(1, 500)", nil)
	wantCode(t, err, frame.CodeDBQuotaExceeded)
	unchanged(t, s, "a")
	err = s.KVSet(bg, "a", "big", json.RawMessage(`"`+strings.Repeat("x", 300<<10)+`"`))
	wantCode(t, err, frame.CodeDBQuotaExceeded)
	unchanged(t, s, "a")
	// Small writes still go in, up to the quota.
	mustExec(t, s, "a", "INSERT INTO notes(body) VALUES ('third')")
	mustExec(t, s, "a", "DELETE FROM notes WHERE body = 'third'")
	info, err := os.Stat(filepath.Join(dir, "a.db"))
	if err != nil || info.Size() > 256<<10 {
		t.Fatalf("file %v %v", info.Size(), err)
	}
}

func TestMemoryCap(t *testing.T) {
	s, _ := newStore(t, Options{MaxMemoryBytes: 16 << 20, StatementTimeout: 20 * time.Second})
	seed(t, s, "a")
	// Temp storage lives in the capped memory: a large sort runs out of it,
	// and so does a write that builds a large temp table. Each time the
	// connection is dropped and reopened (its file lock released).
	for _, sql := range []string{
		"SELECT count(*) FROM (SELECT hex(randomblob(2000)) AS b FROM generate_series(1, 20000) ORDER BY b)",
		"CREATE TEMP TABLE big AS SELECT hex(randomblob(2000)) AS b FROM generate_series(1, 20000)",
		"SELECT count(*) FROM (SELECT hex(randomblob(2000)) AS b FROM generate_series(1, 20000) ORDER BY b)",
	} {
		_, err := s.Exec(bg, "a", sql, nil)
		wantCode(t, err, frame.CodeDBQuotaExceeded)
		unchanged(t, s, "a")
	}
	mustExec(t, s, "a", "INSERT INTO notes(body) VALUES ('after')")
}

func TestTimeout(t *testing.T) {
	// Seeded with the default limit: on a loaded machine a CREATE TABLE
	// and its fsync can take longer than the short limit under test.
	dir := seededDir(t)
	s := openStore(t, dir, Options{StatementTimeout: 250 * time.Millisecond})
	start := time.Now()
	_, err := s.Exec(bg, "a", "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r", nil)
	wantCode(t, err, frame.CodeDBTimeout)
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the timeout took %s", el)
	}
	// A write that runs forever is rolled back.
	_, err = s.Exec(bg, "a", "INSERT INTO notes(body) SELECT 'x' FROM (WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r)", nil)
	wantCode(t, err, frame.CodeDBTimeout)
	unchanged(t, s, "a")

	// The caller's own cancellation is not DB_TIMEOUT.
	ctx, cancel := context.WithTimeout(bg, 30*time.Millisecond)
	defer cancel()
	_, err = s.Exec(ctx, "a", "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r", nil)
	var se *Error
	if errors.As(err, &se) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled call: %v", err)
	}
	unchanged(t, s, "a")
}

func TestResultTooLarge(t *testing.T) {
	s, _ := newStore(t, Options{StatementTimeout: time.Minute})
	seed(t, s, "a")
	start := time.Now()
	// Endless rows: the store stops reading once the frame is full.
	_, err := s.Exec(bg, "a", "SELECT printf('%.*c', 100000, 'x') FROM generate_series(1, 1000000000)", nil)
	wantCode(t, err, frame.CodeDBResultTooLarge)
	if el := time.Since(start); el > 20*time.Second {
		t.Fatalf("took %s: the rows were not cut early", el)
	}
	// The size is the JSON size: '<' takes 6 bytes as \u003c.
	n := frame.MaxDBFrameBytes / 3
	r := mustExec(t, s, "a", "SELECT printf('%.*c', ?, 'a')", n)
	if b, _ := json.Marshal(r); len(b) > frame.MaxDBFrameBytes {
		t.Fatalf("an accepted result encodes to %d bytes", len(b))
	}
	_, err = s.Exec(bg, "a", "SELECT printf('%.*c', ?, '<')", []any{n})
	wantCode(t, err, frame.CodeDBResultTooLarge)
	// A write whose RETURNING rows are too large is rolled back.
	_, err = s.Exec(bg, "a", "INSERT INTO notes(body) SELECT printf('%.*c', 100000, 'y') FROM generate_series(1, 200) RETURNING body", nil)
	wantCode(t, err, frame.CodeDBResultTooLarge)
	unchanged(t, s, "a")
}

// TestResultSizeEstimate checks the running estimate against the encoding
// it stands for: never below it.
func TestResultSizeEstimate(t *testing.T) {
	for _, s := range []string{"", "plain", "q\"b\\", "<&>", "\x01\n\t", "\u2028é🔑", "bad\xff\xfeutf8"} {
		b, _ := json.Marshal(s)
		if got := jsonStringLen(s); got != len(b) {
			t.Errorf("jsonStringLen(%q) = %d, encoding/json writes %d", s, got, len(b))
		}
	}
}

func TestExportImportRoundTrip(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	// A trigger and a view travel too (policy: allowed).
	mustExec(t, s, "a", "CREATE TABLE log(msg TEXT)")
	mustExec(t, s, "a", "CREATE TRIGGER notes_log AFTER INSERT ON notes BEGIN INSERT INTO log VALUES (new.body); END")
	mustExec(t, s, "a", "CREATE VIEW bodies AS SELECT body FROM notes")
	// Dead space is compacted away.
	mustExec(t, s, "a", "CREATE TABLE junk(b)")
	mustExec(t, s, "a", "INSERT INTO junk SELECT randomblob(1000) FROM generate_series(1, 200)")
	mustExec(t, s, "a", "DROP TABLE junk")

	data, err := s.Export(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	if string(data[:16]) != sqliteMagic || data[18] != 1 || data[19] != 1 {
		t.Fatalf("export header % x", data[:20])
	}
	if len(data) > 64<<10 {
		t.Fatalf("export is %d bytes: not compacted", len(data))
	}
	n, err := s.Import(bg, "b", data)
	if err != nil || n != len(data) {
		t.Fatalf("import: %d %v", n, err)
	}
	unchanged(t, s, "b")
	mustExec(t, s, "b", "INSERT INTO notes(body) VALUES ('third')")
	if r := mustExec(t, s, "b", "SELECT msg FROM log"); rowsJSON(t, r) != `[["third"]]` {
		t.Fatalf("trigger after import: %s", rowsJSON(t, r))
	}
	if r := mustExec(t, s, "b", "SELECT count(*) FROM bodies"); rowsJSON(t, r) != `[[3]]` {
		t.Fatalf("view after import: %s", rowsJSON(t, r))
	}
	// Import over an existing database replaces it whole.
	mustExec(t, s, "c", "CREATE TABLE other(x)")
	if err := s.KVSet(bg, "c", "only-in-c", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(bg, "c", data); err != nil {
		t.Fatal(err)
	}
	unchanged(t, s, "c")
	if _, found, _ := s.KVGet(bg, "c", "only-in-c"); found {
		t.Fatal("old kv survived the import")
	}
	_, err = s.Exec(bg, "c", "SELECT * FROM other", nil)
	wantCode(t, err, frame.CodeDBSQLError)
	// The imported database keeps the hardening.
	_, err = s.Exec(bg, "c", "PRAGMA writable_schema = ON", nil)
	wantCode(t, err, frame.CodeDBSQLError)
	if r := mustExec(t, s, "c", "PRAGMA journal_mode"); rowsJSON(t, r) != `[["wal"]]` {
		t.Fatal(rowsJSON(t, r))
	}
}

func TestExportTooLarge(t *testing.T) {
	s, _ := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE TABLE b(x)")
	for range 6 {
		mustExec(t, s, "a", "INSERT INTO b SELECT randomblob(100000) FROM generate_series(1, 10)")
	}
	_, err := s.Export(bg, "a")
	wantCode(t, err, frame.CodeDBResultTooLarge)
	if r := mustExec(t, s, "a", "SELECT count(*) FROM b"); rowsJSON(t, r) != "[[60]]" {
		t.Fatal(rowsJSON(t, r))
	}
}

// rawDB builds a database file with the driver alone (no hardening), for
// the malicious imports.
func rawDB(t *testing.T, sql ...string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "raw.db")
	rawExec(t, path, sql...)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rawExec runs sql on the database file at path with the driver alone:
// no defensive mode, so it may write shadow tables and the schema.
func rawExec(t *testing.T, path string, sql ...string) {
	t.Helper()
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := registerModules(c); err != nil {
		t.Fatal(err)
	}
	for _, q := range sql {
		if err := c.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestImportMalicious(t *testing.T) {
	s, dir := newStore(t, Options{})
	seed(t, s, "a")
	good := rawDB(t, "CREATE TABLE t(a)", "INSERT INTO t SELECT randomblob(3000) FROM generate_series(1, 50)")

	corrupt := bytes.Clone(good)
	// Page 2 is t's root: scribble over its b-tree page header.
	for i := 4096; i < 4096+64; i++ {
		corrupt[i] = 0xA5
	}
	badCounter := bytes.Clone(good)
	badCounter[31]++ // header page count off by one

	// A random mutation of an export (kept in testdata) whose schema makes
	// the driver panic while preparing the integrity check.
	offsetPanic, err := os.ReadFile("testdata/schema-offset-panic.db")
	if err != nil {
		t.Fatal(err)
	}

	cases := []struct {
		name, code, msg string
		data            []byte
	}{
		{"empty", frame.CodeDBImportInvalid, "not an SQLite", nil},
		{"text", frame.CodeDBImportInvalid, "not an SQLite", []byte(strings.Repeat("hello, world\n", 400))},
		{"zip", frame.CodeDBImportInvalid, "not an SQLite", append([]byte("PK\x03\x04"), make([]byte, 8192)...)},
		{"header only", frame.CodeDBImportInvalid, "not an SQLite", []byte(sqliteMagic)},
		{"truncated mid-page", frame.CodeDBImportInvalid, "whole number", good[:len(good)-100]},
		{"truncated pages", frame.CodeDBImportInvalid, "truncated", good[:len(good)-4096*3]},
		{"page count", frame.CodeDBImportInvalid, "truncated", badCounter},
		{"corrupt page", frame.CodeDBImportInvalid, "", corrupt},
		{"over 5 MiB", frame.CodeDBImportInvalid, "at most 5 MiB", append(bytes.Clone(good), make([]byte, frame.MaxArtifactBytes)...)},
		{"reserved table", frame.CodeDBImportInvalid, "reserved", rawDB(t, "CREATE TABLE _snug_evil(a)")},
		{"kv table redefined", frame.CodeDBImportInvalid, "reserved", rawDB(t, "CREATE TABLE _snug_kv(key, value)")},
		{"trigger on kv", frame.CodeDBImportInvalid, "reserved", rawDB(t, kvTable,
			"CREATE TABLE log(x)", "CREATE TRIGGER spy AFTER INSERT ON _snug_kv BEGIN INSERT INTO log VALUES (new.value); END")},
		{"trigger into kv", frame.CodeDBImportInvalid, "reserved", rawDB(t, kvTable,
			"CREATE TABLE t(x)", "CREATE TRIGGER plant AFTER INSERT ON t BEGIN INSERT INTO _snug_kv VALUES ('k', '1'); END")},
		{"view of kv", frame.CodeDBImportInvalid, "reserved", rawDB(t, kvTable, "CREATE VIEW peek AS SELECT * FROM _snug_kv")},
		{"foreign key to kv", frame.CodeDBImportInvalid, "reserved", rawDB(t, kvTable,
			"CREATE TABLE t(k TEXT REFERENCES _snug_kv(key) ON DELETE RESTRICT)")},
		// A schema whose SQL does not parse.
		{"malformed schema", frame.CodeDBImportInvalid, "damaged", rawDB(t, "CREATE TABLE t(a)", "PRAGMA writable_schema = ON",
			"UPDATE sqlite_schema SET sql = 'CREATE TABLE t(a"+strings.Repeat(" ", 100)+", ,)' WHERE name = 't'")},
		{"driver panic", frame.CodeDBImportInvalid, "schema cannot be read", offsetPanic},
		{"kv not JSON", frame.CodeDBImportInvalid, "CHECK constraint failed in _snug_kv", rawDB(t, kvTable,
			"PRAGMA ignore_check_constraints = ON", "INSERT INTO _snug_kv VALUES ('k', '{broken')")},
		{"virtual table", frame.CodeDBImportInvalid, "virtual table \"v\" of module \"geopoly\"", rawDB(t, "PRAGMA writable_schema = ON",
			"INSERT INTO sqlite_schema VALUES ('table', 'v', 'v', 0, 'CREATE VIRTUAL TABLE v USING geopoly(a)')")},
	}
	for _, c := range cases {
		_, err := s.Import(bg, "a", c.data)
		se := wantCode(t, err, c.code)
		if !strings.Contains(se.Message, c.msg) {
			t.Errorf("%s: message %q, want %q", c.name, se.Message, c.msg)
		}
		t.Logf("%-18s -> %s", c.name, se.Message)
		unchanged(t, s, "a")
	}
	// Larger than the quota: refused before anything is written.
	small, _ := newStore(t, Options{QuotaBytes: 64 << 10})
	seed(t, small, "a")
	_, err = small.Import(bg, "a", good)
	wantCode(t, err, frame.CodeDBQuotaExceeded)
	unchanged(t, small, "a")

	// Nothing of the attempts is left in the directory.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), importSuffix) || strings.Contains(e.Name(), exportSuffix) {
			t.Errorf("leftover %s", e.Name())
		}
	}
	// And a good file still goes in afterwards.
	if _, err := s.Import(bg, "a", good); err != nil {
		t.Fatal(err)
	}
	if r := mustExec(t, s, "a", "SELECT count(*) FROM t"); rowsJSON(t, r) != "[[50]]" {
		t.Fatal(rowsJSON(t, r))
	}
}

func TestFileNameAndTraversal(t *testing.T) {
	for app, want := range map[string]string{
		"todo":        "todo.db",
		"my_app-2":    "my_app-2.db",
		"Todo":        ".54odo.db",
		"..":          ".2e.2e.db",
		"../x":        ".2e.2e.2fx.db",
		"a/b":         "a.2fb.db",
		"/etc/passwd": ".2fetc.2fpasswd.db",
		"a\\b":        "a.5cb.db",
		"nul\x00":     "nul.00.db",
		"é":           ".c3.a9.db",
		"x.db-wal":    "x.2edb-wal.db",
	} {
		got, err := FileName(app)
		if err != nil || got != want {
			t.Errorf("FileName(%q) = %q, %v; want %q", app, got, err, want)
		}
	}
	for _, bad := range []string{"", strings.Repeat("a", MaxAppKeyBytes+1)} {
		if _, err := FileName(bad); err == nil {
			t.Errorf("FileName(%q) passed", bad)
		}
	}

	parent := t.TempDir()
	dir := filepath.Join(parent, "data")
	s := openStore(t, dir, Options{})
	apps := []string{"../escape", "../../escape2", "/abs", "sub/dir", "..", ".", "A", "a"}
	for i, app := range apps {
		mustExec(t, s, app, "CREATE TABLE t(x)")
		mustExec(t, s, app, "INSERT INTO t VALUES (?)", i)
	}
	for i, app := range apps {
		r := mustExec(t, s, app, "SELECT x FROM t")
		if got := rowsJSON(t, r); got != "["+"["+string(rune('0'+i))+"]]" {
			t.Errorf("%q reads %s: namespaces mixed", app, got)
		}
	}
	outside, _ := os.ReadDir(parent)
	if len(outside) != 1 || outside[0].Name() != "data" {
		t.Fatalf("files outside the data directory: %v", outside)
	}
	inside, _ := os.ReadDir(dir)
	for _, e := range inside {
		if e.IsDir() {
			t.Errorf("a key made a directory: %s", e.Name())
		}
	}
	if _, err := s.Exec(bg, "", "SELECT 1", nil); err == nil {
		t.Fatal("empty app key passed")
	}
}

func TestOpenRemovesLeftovers(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.db" + importSuffix + "1234", "a.db" + exportSuffix + "99-wal"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	openStore(t, dir, Options{})
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("left: %v", entries)
	}
}

func TestCloseInterruptsAndRefuses(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{StatementTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, s, "a")
	if _, _, ok, err := kvGetNow(s, "a", "k"); !ok || err != nil {
		t.Fatalf("KVGetNow on the idle database: ok %v, %v", ok, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Exec(bg, "a", "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r", nil)
		done <- err
	}()
	// Close once the query holds the database (KVGetNow would wait for it):
	// a call that has not reached it yet is refused, not interrupted.
	untilHeld(t, s, "a")
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("Close took %s", el)
	}
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Fatalf("running call: %v", err)
	}
	if _, err := s.Exec(bg, "a", "SELECT 1", nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	// Closed cleanly: no WAL left, and the data is there on reopen.
	if _, err := os.Stat(filepath.Join(dir, "a.db-wal")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("WAL after close: %v", err)
	}
	s2 := openStore(t, dir, Options{})
	unchanged(t, s2, "a")
}

func TestConcurrentApps(t *testing.T) {
	s, _ := newStore(t, Options{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			app := []string{"a", "b"}[g%2]
			key := string(rune('k' + g))
			for i := range 50 {
				if err := s.KVSet(bg, app, key, json.RawMessage(strings.Repeat("1", 1+i%5))); err != nil {
					t.Error(err)
					return
				}
				if _, found, err := s.KVGet(bg, app, key); err != nil || !found {
					t.Error(found, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func TestStatementCache(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	q := "SELECT body FROM notes WHERE id = ?"
	for i, want := range []string{`[["first"]]`, `[["second"]]`, `[]`, `[["first"]]`} {
		if got := rowsJSON(t, mustExec(t, s, "a", q, []any{1, 2, 3, 1}[i])); got != want {
			t.Fatalf("run %d: %s, want %s", i, got, want)
		}
	}
	// A schema change re-prepares a cached statement.
	mustExec(t, s, "a", "CREATE TABLE t(a)")
	mustExec(t, s, "a", "INSERT INTO t VALUES (1)")
	if got := rowsJSON(t, mustExec(t, s, "a", "SELECT * FROM t")); got != `[[1]]` {
		t.Fatal(got)
	}
	mustExec(t, s, "a", "ALTER TABLE t ADD COLUMN b DEFAULT 'x'")
	if r := mustExec(t, s, "a", "SELECT * FROM t"); rowsJSON(t, r) != `[[1,"x"]]` || len(r.Columns) != 2 {
		t.Fatalf("after ALTER: %q %s", r.Columns, rowsJSON(t, r))
	}
	mustExec(t, s, "a", "DROP TABLE t")
	_, err := s.Exec(bg, "a", "SELECT * FROM t", nil)
	wantCode(t, err, frame.CodeDBSQLError)

	// More distinct statements than the cache holds.
	for i := range 3 * stmtCacheSize {
		r := mustExec(t, s, "a", "SELECT "+strings.Repeat("1+", i)+"1")
		if got := rowsJSON(t, r); got != "[["+strconv.Itoa(i+1)+"]]" {
			t.Fatalf("statement %d: %s", i, got)
		}
	}
	if n := len(s.dbs["a"].stmts); n > stmtCacheSize {
		t.Fatalf("cache holds %d statements", n)
	}
	unchanged(t, s, "a")
}

func TestDamagedFileOnDisk(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a.db", "a.db-wal"} {
		if err := os.WriteFile(filepath.Join(dir, n), bytes.Repeat([]byte("not a database "), 400), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := openStore(t, dir, Options{})
	for range 2 {
		_, err := s.Exec(bg, "a", "SELECT 1", nil)
		var se *Error
		if err == nil || errors.As(err, &se) {
			t.Fatalf("damaged file: %v, want a host error", err)
		}
	}
	// Other apps are not affected, and an import repairs it.
	seed(t, s, "b")
	data, err := s.Export(bg, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Import(bg, "a", data); err != nil {
		t.Fatal(err)
	}
	unchanged(t, s, "a")
}

func TestMaxOpen(t *testing.T) {
	s, _ := newStore(t, Options{MaxOpen: 2})
	apps := []string{"a", "b", "c", "d", "e"}
	for _, app := range apps {
		seed(t, s, app)
		if n := s.openConns.Load(); n > 2 {
			t.Fatalf("%d databases open, MaxOpen 2", n)
		}
	}
	for range 2 {
		for _, app := range apps {
			unchanged(t, s, app) // reopened as needed
			if n := s.openConns.Load(); n > 2 {
				t.Fatalf("%d databases open, MaxOpen 2", n)
			}
		}
	}
	// The most recently used stay open.
	if !s.dbs["e"].open.Load() || s.dbs["a"].open.Load() {
		t.Fatalf("open: a %v, e %v", s.dbs["a"].open.Load(), s.dbs["e"].open.Load())
	}
}

// TestEngineLimits sends statements built to exhaust the parser or the
// engine: each is a clear DB_SQL_ERROR and the database goes on working.
func TestEngineLimits(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for _, q := range []string{
		"SELECT " + strings.Repeat("(", 40000) + "1" + strings.Repeat(")", 40000),
		"SELECT json('" + strings.Repeat("[", 40000) + strings.Repeat("]", 40000) + "')",
		"SELECT " + strings.Repeat("1+", 40000) + "1",
		"SELECT 1 " + strings.Repeat("UNION ALL SELECT 1 ", 5000),
		"SELECT printf('%.*c', 2000000000, 'x')",
		"SELECT zeroblob(100000000)",
		"SELECT replace(hex(zeroblob(4000000)), '0', '00')",
	} {
		_, err := s.Exec(bg, "a", q, nil)
		wantCode(t, err, frame.CodeDBSQLError)
	}
	unchanged(t, s, "a")
}

// Issue 28 item 9: a script runs its statements in one transaction. A
// migration step (a table, its index, a row, the version's update) takes
// effect whole; a step with a failing or refused statement leaves nothing
// of the ones before it, whatever it tried (a transaction of its own, the
// kv table, ATTACH, VACUUM).
func TestScriptIsAtomic(t *testing.T) {
	s, _ := newStore(t, Options{})
	res, err := s.Script(bg, "a", `
		create table meta (version integer not null);
		insert into meta values (0);
		create table tasks (id integer primary key, title text);
		create index tasks_title on tasks(title);
		insert into tasks (title) values ('one'), ('two');
		update meta set version = 1;`)
	if err != nil {
		t.Fatal(err)
	}
	if res.Changes != 4 || res.LastInsertRowid != 0 {
		t.Errorf("the script's result: %d changes, lastInsertRowid %d; want 4 and the last statement's 0", res.Changes, res.LastInsertRowid)
	}
	if got := rowsJSON(t, mustExec(t, s, "a", "select version, (select count(*) from tasks) from meta")); got != `[[1,2]]` {
		t.Fatalf("after the script: %s", got)
	}
	for _, c := range []struct{ name, sql, want string }{
		{"a failing statement", "alter table tasks add column due text; insert into nowhere values (1); update meta set version = 2", "no such table"},
		{"its own transaction", "alter table tasks add column due text; commit; update meta set version = 2", "BEGIN, COMMIT"},
		{"the kv table", "alter table tasks add column due text; delete from _snug_kv; update meta set version = 2", "reserved"},
		{"ATTACH", "alter table tasks add column due text; attach ':memory:' as m; update meta set version = 2", "ATTACH"},
		{"VACUUM", "alter table tasks add column due text; vacuum; update meta set version = 2", "VACUUM"},
	} {
		_, err := s.Script(bg, "a", c.sql)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, c.want) {
			t.Errorf("%s: %q, want it to name %q", c.name, se.Message, c.want)
		}
		if got := rowsJSON(t, mustExec(t, s, "a", "select version, (select count(*) from pragma_table_info('tasks') where name = 'due') from meta")); got != `[[1,0]]` {
			t.Fatalf("%s: the statements before it took effect: %s", c.name, got)
		}
	}
	_, err = s.Script(bg, "a", " ; -- nothing\n")
	wantCode(t, err, frame.CodeDBSQLError)
}
