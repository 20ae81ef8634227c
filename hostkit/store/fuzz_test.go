package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// FuzzExecStaysInside runs arbitrary SQL as an app and checks what no
// statement may do: change the kv pairs behind the store's back, leave the
// hardened settings, or create a file anywhere but the app's own database.
// go test runs the seeds; go test -fuzz FuzzExecStaysInside explores.
func FuzzExecStaysInside(f *testing.F) {
	for _, sql := range []string{
		"SELECT 1",
		"CREATE TABLE t(a)",
		"ATTACH 'x.db' AS x",
		"VACUUM INTO 'copy.db'",
		"PRAGMA writable_schema=ON",
		"PRAGMA journal_mode=DELETE",
		"PRAGMA locking_mode=NORMAL",
		"DELETE FROM _snug_kv",
		"UPDATE sqlite_schema SET sql='CREATE TABLE _snug_kv(a)'",
		"CREATE TEMP TRIGGER t AFTER INSERT ON notes BEGIN DELETE FROM main._snug_kv; END",
		"WITH x AS (SELECT * FROM _snug_kv) SELECT * FROM x",
		"SELECT * FROM pragma_database_list",
		"CREATE VIEW v AS SELECT * FROM _snug_kv",
		"ALTER TABLE notes RENAME TO _snug_kv2",
		"INSERT INTO notes(body) SELECT value FROM _snug_kv",
		"REPLACE INTO _snug_kv VALUES ('prefs', '0')",
		"SELECT writefile('/tmp/x', 'y')",
		"SELECT load_extension('libc')",
		"PRAGMA temp.journal_mode=OFF",
		"DETACH DATABASE main",
		"CREATE TABLE pin(k REFERENCES _snug_kv(key))",
		"ALTER TABLE notes RENAME TO _snug_x",
		"CREATE TRIGGER tr AFTER INSERT ON notes BEGIN SELECT 1; END",
		"CREATE VIEW vv AS SELECT body FROM notes",
	} {
		f.Add(sql)
	}
	dir := f.TempDir()
	s, err := Open(dir, Options{StatementTimeout: 5 * time.Second, QuotaBytes: 4 << 20})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	seed(f, s, "a")
	f.Fuzz(func(t *testing.T, sql string) {
		_, err := s.Exec(bg, "a", sql, nil)
		var se *Error
		if err != nil && !errors.As(err, &se) {
			t.Fatalf("%q: host error %v", sql, err)
		}
		v, found, err := s.KVGet(bg, "a", "prefs")
		if err != nil || !found || string(v) != `{"theme":"dark"}` {
			t.Fatalf("%q: kv now %s %v %v", sql, v, found, err)
		}
		r := mustExec(t, s, "a", "PRAGMA journal_mode")
		if rowsJSON(t, r) != `[["wal"]]` {
			t.Fatalf("%q: journal_mode %s", sql, rowsJSON(t, r))
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), "a.db") && !strings.HasPrefix(e.Name(), "a.2ecopy.db") {
				t.Fatalf("%q: created %s", sql, e.Name())
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "copy.db")); err == nil {
			t.Fatalf("%q: wrote copy.db", sql)
		}
		// Whatever the app did, its export imports again.
		data, err := s.Export(bg, "a")
		if err != nil {
			t.Fatalf("%q: export: %v", sql, err)
		}
		if _, err := s.Import(bg, "a.copy", data); err != nil {
			t.Fatalf("%q: the export does not import: %v", sql, err)
		}
	})
}

// FuzzImport feeds mutated database files to Import: each one goes in
// whole or is refused with a db code, and a refused one leaves the old
// database as it was.
func FuzzImport(f *testing.F) {
	good := func() []byte {
		dir := f.TempDir()
		s, err := Open(dir, Options{})
		if err != nil {
			f.Fatal(err)
		}
		defer s.Close()
		mustExec(f, s, "x", "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT)")
		mustExec(f, s, "x", "CREATE INDEX t_b ON t(b)")
		mustExec(f, s, "x", "INSERT INTO t(b) SELECT hex(randomblob(100)) FROM generate_series(1, 100)")
		if err := s.KVSet(bg, "x", "k", json.RawMessage(`[1,2]`)); err != nil {
			f.Fatal(err)
		}
		data, err := s.Export(bg, "x")
		if err != nil {
			f.Fatal(err)
		}
		return data
	}()
	f.Add(good)
	for _, off := range []int{0, 16, 18, 28, 56, 100, 4096, 4096 + 8, 8192 + 3} {
		b := bytes.Clone(good)
		b[off] ^= 0x5a
		f.Add(b)
	}
	if b, err := os.ReadFile("testdata/schema-offset-panic.db"); err == nil {
		f.Add(b)
	}
	f.Add(good[:4096])
	f.Add(good[:len(good)-4096])

	dir := f.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	seed(f, s, "a")
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > frame.MaxArtifactBytes+1 {
			return
		}
		_, err := s.Import(bg, "a", data)
		if err == nil {
			// Accepted: put the known content back for the next input.
			if _, err := s.Exec(bg, "a", "SELECT count(*) FROM sqlite_schema", nil); err != nil {
				t.Fatalf("accepted file does not work: %v", err)
			}
			s2 := s
			for _, q := range []string{"DROP TABLE IF EXISTS notes", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)",
				"INSERT INTO notes(body) VALUES ('first'), ('second')"} {
				if _, err := s2.Exec(bg, "a", q, nil); err != nil {
					t.Skipf("accepted file cannot be reset (%v)", err)
				}
			}
			if err := s.KVSet(bg, "a", "prefs", json.RawMessage(`{"theme":"dark"}`)); err != nil {
				t.Fatal(err)
			}
			return
		}
		var se *Error
		if !errors.As(err, &se) {
			t.Fatalf("host error for a bad file: %v", err)
		}
		if se.Code != frame.CodeDBImportInvalid && se.Code != frame.CodeDBQuotaExceeded {
			t.Fatalf("code %s: %s", se.Code, se.Message)
		}
		unchanged(t, s, "a")
	})
}
