package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// An AUTOINCREMENT table whose counter has reached the largest rowid makes
// SQLite answer SQLITE_FULL, in a database of a few KiB: the app is told
// which table has run out of ids (DB_SQL_ERROR), not that a quota it is
// nowhere near was reached (issue 31 item 4). A real quota is still
// DB_QUOTA_EXCEEDED, with the size the database holds, even beside an
// exhausted counter the statement does not touch.
func TestExhaustedAutoincrementIsNotTheQuota(t *testing.T) {
	s, dir := newStore(t, Options{QuotaBytes: 256 << 10})
	seed(t, s, "a")
	mustExec(t, s, "a", "CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)")
	mustExec(t, s, "a", "INSERT INTO items VALUES (9223372036854775807, 'last')")
	mustExec(t, s, "a", "CREATE TABLE log(x)")
	mustExec(t, s, "a", "CREATE TRIGGER copy AFTER INSERT ON log BEGIN INSERT INTO items(name) VALUES (new.x); END")

	for _, sql := range []string{
		"INSERT INTO items(name) VALUES ('one more')",
		"INSERT INTO items(name) VALUES ('one more')", // again: the cached statement
		"INSERT INTO log VALUES ('through a trigger')",
	} {
		_, err := s.Exec(bg, "a", sql, nil)
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, `"items"`) || !strings.Contains(se.Message, "AUTOINCREMENT") || strings.Contains(se.Message, "quota") {
			t.Errorf("%s: message %q, want the items table's exhausted AUTOINCREMENT counter", sql, se.Message)
		}
		t.Logf("%s -> %s", sql, se.Message)
	}
	if info, err := os.Stat(filepath.Join(dir, "a.db")); err != nil || info.Size() > 64<<10 {
		t.Fatalf("the database is %v bytes (%v): the test wants a small one", info.Size(), err)
	}
	unchanged(t, s, "a")

	// The quota, beside the exhausted counter.
	_, err := s.Exec(bg, "a", "INSERT INTO notes(body) SELECT hex(randomblob(1000)) FROM generate_series(1, 500)", nil)
	se := wantCode(t, err, frame.CodeDBQuotaExceeded)
	if !strings.Contains(se.Message, "quota of 256 KiB") || !strings.Contains(se.Message, "it holds") {
		t.Errorf("quota message %q, want the quota and the size held", se.Message)
	}
	unchanged(t, s, "a")
}

// An imported file (a real SQLite file, made by the driver) with an
// exhausted counter gets the same answer when the app inserts.
func TestImportedExhaustedCounter(t *testing.T) {
	s, _ := newStore(t, Options{})
	data := rawDB(t, "CREATE TABLE items(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)",
		"INSERT INTO items VALUES (9223372036854775807, 'last')")
	if _, err := s.Import(bg, "a", data); err != nil {
		t.Fatal(err)
	}
	_, err := s.Exec(bg, "a", "INSERT INTO items(name) VALUES (?)", []any{"next"})
	se := wantCode(t, err, frame.CodeDBSQLError)
	if !strings.Contains(se.Message, "AUTOINCREMENT") {
		t.Errorf("message %q", se.Message)
	}
}

// kvValueCases are kv values the app cannot store, and why; each is
// refused from kvSet (DB_SQL_ERROR) and from an imported file's kv table
// (DB_IMPORT_INVALID) alike (issue 31 item 4: an import passed 1e999, read
// back as Infinity, and a lone \ud800).
var kvValueCases = []struct{ name, value, why string }{
	{"infinite number", `1e999`, "Infinity"},
	{"negative infinite number", `-1e999`, "Infinity"},
	{"infinite number inside", `{"a":[1,2,1e400]}`, "Infinity"},
	{"lone high surrogate", `"\ud800"`, "unpaired surrogate"},
	{"lone low surrogate inside", `["ok","x\udc00y"]`, "unpaired surrogate"},
	{"reversed pair", `"\ude00\ud83d"`, "unpaired surrogate"},
	{"lone surrogate in a key", `{"\ud800":1}`, "unpaired surrogate"},
	{"key twice", `{"a":1,"a":2}`, "twice"},
}

// Values that are fine: a surrogate pair, the largest double, a long
// integer (read as its nearest double), deep nesting within the limit.
var kvValueFine = []string{`"\ud83d\ude00"`, `1.7976931348623157e308`, `-1e-400`, `123456789012345678901234567890`,
	strings.Repeat("[", 500) + strings.Repeat("]", 500), `{"a":{"a":1}}`}

func TestKVValuesWrittenAndImportedAlike(t *testing.T) {
	s, _ := newStore(t, Options{})
	seed(t, s, "a")
	for _, c := range kvValueCases {
		err := s.KVSet(bg, "a", "k", json.RawMessage(c.value))
		se := wantCode(t, err, frame.CodeDBSQLError)
		if !strings.Contains(se.Message, c.why) {
			t.Errorf("kvSet %s: message %q, want %q", c.name, se.Message, c.why)
		}
		file := rawDB(t, kvTable, "INSERT INTO _snug_kv VALUES ('k', '"+strings.ReplaceAll(c.value, "'", "''")+"')")
		_, err = s.Import(bg, "a", file)
		se = wantCode(t, err, frame.CodeDBImportInvalid)
		if !strings.Contains(se.Message, c.why) || !strings.Contains(se.Message, `"k"`) {
			t.Errorf("import %s: message %q, want %q and the key", c.name, se.Message, c.why)
		}
		t.Logf("%s: %s", c.name, se.Message)
		unchanged(t, s, "a")
	}
	for _, key := range []string{"", strings.Repeat("é", frame.DBRequestKeyMaxLength+1)} {
		_, err := s.Import(bg, "a", rawDB(t, kvTable, "INSERT INTO _snug_kv VALUES ('"+key+"', '1')"))
		wantCode(t, err, frame.CodeDBImportInvalid)
		unchanged(t, s, "a")
	}
	for _, v := range kvValueFine {
		if err := s.KVSet(bg, "a", "fine", json.RawMessage(v)); err != nil {
			t.Errorf("kvSet %.40s: %v", v, err)
		}
		if _, err := s.Import(bg, "b", rawDB(t, kvTable, "INSERT INTO _snug_kv VALUES ('fine', '"+v+"')")); err != nil {
			t.Errorf("import %.40s: %v", v, err)
		}
		got, found, err := s.KVGet(bg, "b", "fine")
		if err != nil || !found || string(got) != v {
			t.Errorf("kvGet after import of %.40s: %.40s %v %v", v, got, found, err)
		}
	}
}
