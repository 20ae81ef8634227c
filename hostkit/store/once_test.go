package store

import (
	crand "crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"

	"github.com/snuggen/snuggen/frame"
)

// count is the number of rows of t in app's database.
func count(t testing.TB, s *Store, app, table string) int64 {
	t.Helper()
	r := mustExec(t, s, app, "SELECT count(*) FROM "+table)
	return r.Rows[0][0].(int64)
}

// A write sent again under the same identity runs once and answers what the
// first run answered, also from a copy of the file opened by another store
// (a replicated host's next owner restores the file and gets the resend).
func TestExecOnceRunsAWriteOnce(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE TABLE t(v TEXT)") // no unique key: a second run shows
	first, err := s.ExecOnce(bg, "a", "w1", "INSERT INTO t(v) VALUES (?) RETURNING rowid, v, x'00ff'", []any{"x"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.ExecOnce(bg, "a", "w1", "INSERT INTO t(v) VALUES (?) RETURNING rowid, v, x'00ff'", []any{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "a", "t"); n != 1 {
		t.Fatalf("%d rows after a resend, want 1", n)
	}
	a, _ := json.Marshal(first)
	b, _ := json.Marshal(again)
	if string(a) != string(b) {
		t.Errorf("the resend answered %s, the first run %s", b, a)
	}
	if _, err := s.ExecOnce(bg, "a", "w2", "INSERT INTO t(v) VALUES ('y')", nil); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "a", "t"); n != 2 {
		t.Fatalf("%d rows after a second identity, want 2", n)
	}
	// A read runs every time and records nothing.
	for range 2 {
		r, err := s.ExecOnce(bg, "a", "r1", "SELECT count(*) FROM t", nil)
		if err != nil || r.Rows[0][0] != int64(2) {
			t.Fatalf("read: %v %v", r, err)
		}
	}

	// Another store on the same files: the record travelled with the write.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	third, err := s2.ExecOnce(bg, "a", "w1", "INSERT INTO t(v) VALUES (?) RETURNING rowid, v, x'00ff'", []any{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if n := count(t, s2, "a", "t"); n != 2 {
		t.Fatalf("%d rows after a resend to the reopened file, want 2", n)
	}
	if c, _ := json.Marshal(third); string(c) != string(a) {
		t.Errorf("the resend to the reopened file answered %s, the first run %s", c, a)
	}
}

// kvSet with an identity is applied once: a resend after a later write does
// not put the old value back.
func TestKVSetOnce(t *testing.T) {
	s, _ := newStore(t, Options{})
	if err := s.KVSetOnce(bg, "a", "k1", "k", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	if err := s.KVSet(bg, "a", "k", json.RawMessage(`2`)); err != nil {
		t.Fatal(err)
	}
	if err := s.KVSetOnce(bg, "a", "k1", "k", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	v, _, err := s.KVGet(bg, "a", "k")
	if err != nil || string(v) != "2" {
		t.Fatalf("k = %s (%v) after the resend, want 2", v, err)
	}
}

// A write that failed recorded nothing (its transaction rolled back), so
// the same identity runs again; a result too large to keep is not replayed
// but said to be applied; the app can neither read nor name the record, it
// stays out of exports, and the app's own CREATE still passes the schema
// check beside it.
func TestExecOnceRecordIsTheHosts(t *testing.T) {
	s, _ := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE TABLE t(v TEXT CHECK (v <> 'bad'))")
	if _, err := s.ExecOnce(bg, "a", "f", "INSERT INTO t VALUES ('bad')", nil); err == nil {
		t.Fatal("a failing write succeeded")
	}
	if _, err := s.ExecOnce(bg, "a", "f", "INSERT INTO t VALUES ('good')", nil); err != nil {
		t.Fatalf("the identity of a failed write: %v", err)
	}
	big := strings.Repeat("z", MaxOnceResultBytes)
	if _, err := s.ExecOnce(bg, "a", "big", "INSERT INTO t VALUES (?) RETURNING v", []any{big}); err != nil {
		t.Fatal(err)
	}
	_, err := s.ExecOnce(bg, "a", "big", "INSERT INTO t VALUES (?) RETURNING v", []any{big})
	var se *Error
	if !errors.As(err, &se) || se.Code != frame.CodeHostError || !strings.Contains(se.Message, "applied once") {
		t.Fatalf("resend of a write whose result was not kept: %v", err)
	}
	if n := count(t, s, "a", "t"); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
	for _, sql := range []string{"SELECT * FROM _snug_once", "DELETE FROM _snug_once", "CREATE VIEW peek AS SELECT * FROM _snug_once",
		"DROP INDEX _snug_once_at", "CREATE INDEX _snug_once_v ON t(v)", "SELECT * FROM t INDEXED BY _snug_once_at"} {
		if _, err := s.Exec(bg, "a", sql, nil); !errors.As(err, &se) || se.Code != frame.CodeDBSQLError {
			t.Errorf("%s: %v, want DB_SQL_ERROR", sql, err)
		}
	}
	mustExec(t, s, "a", "CREATE TABLE u(x)")
	data, err := s.Export(bg, "a")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "_snug_once") {
		t.Error("the export holds the record of writes")
	}
	if _, err := s.Import(bg, "b", data); err != nil {
		t.Fatalf("the export does not import: %v", err)
	}
}

// A record made before its index by age (a database written by an older
// host) gets the index at its next write with an identity, and the
// schema check still passes beside it.
func TestExecOnceIndexesAnOldRecord(t *testing.T) {
	s, dir := newStore(t, Options{})
	mustExec(t, s, "a", "CREATE TABLE t(v TEXT)")
	if _, err := s.ExecOnce(bg, "a", "w1", "INSERT INTO t VALUES ('x')", nil); err != nil {
		t.Fatal(err)
	}
	path, err := s.Path("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	indexes := func() int64 {
		t.Helper()
		c, err := sqlite3.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		st, _, err := c.Prepare("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = '_snug_once_at'")
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if !st.Step() {
			t.Fatal(st.Err())
		}
		return st.ColumnInt64(0)
	}
	if n := indexes(); n != 1 {
		t.Fatalf("%d indexes by age after a write with an identity, want 1", n)
	}
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(c.Exec("DROP INDEX _snug_once_at"), c.Close()); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, s2, "a", "CREATE TABLE u(x)") // the schema check with the old record
	if _, err := s2.ExecOnce(bg, "a", "w2", "INSERT INTO t VALUES ('y')", nil); err != nil {
		t.Fatal(err)
	}
	mustExec(t, s2, "a", "CREATE TABLE w(x)") // and beside the index
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if n := indexes(); n != 1 {
		t.Fatalf("%d indexes by age on the old record after a write, want 1", n)
	}
}

// The record is bounded: past its most records the oldest go.
func TestExecOncePrunes(t *testing.T) {
	s, _ := newStore(t, Options{})
	const onceMax = 100 // the bound lowered, so the test writes hundreds, not thousands
	s.onceMax = onceMax
	mustExec(t, s, "a", "CREATE TABLE t(v)")
	for i := range onceMax + 2*oncePrune {
		if _, err := s.ExecOnce(bg, "a", "w"+strconv.Itoa(i), "INSERT INTO t VALUES (1)", nil); err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	err := s.do(bg, "a", "count", false, true, func(d *appDB) error {
		d.trusted = true
		defer func() { d.trusted = false }()
		st, _, err := d.conn.Prepare("SELECT count(*) FROM _snug_once")
		if err != nil {
			return err
		}
		defer st.Close()
		st.Step()
		n = st.ColumnInt64(0)
		return st.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if n > onceMax+oncePrune {
		t.Fatalf("%d records kept, want at most %d", n, onceMax+oncePrune)
	}
	// The newest are kept: a resend of the last write runs nothing.
	last := fmt.Sprintf("w%d", onceMax+2*oncePrune-1)
	if _, err := s.ExecOnce(bg, "a", last, "INSERT INTO t VALUES (1)", nil); err != nil {
		t.Fatal(err)
	}
	if c := count(t, s, "a", "t"); c != onceMax+2*oncePrune {
		t.Fatalf("%d rows, want %d", c, onceMax+2*oncePrune)
	}
}

// BenchmarkExecOnce: a write with an identity against one without, with
// the record at its bound (onceMax identities kept, the pruning at work),
// committed with and without waiting for the disk (a replica commits
// with synchronous=NORMAL). Identities are made as a replica makes them
// (the time, then random bits: hostkit/cluster's newWriteID), or all
// random (RandomIDs).
func BenchmarkExecOnce(b *testing.B) {
	for _, sync := range []string{SyncFull, SyncNormal} {
		for _, name := range []string{"Exec", "ExecOnce", "ExecOnceRandomIDs"} {
			b.Run(name+"/"+sync, func(b *testing.B) {
				s, _ := newStore(b, Options{Synchronous: sync})
				mustExec(b, s, "a", "CREATE TABLE t(v TEXT)")
				write := func() {
					var err error
					if name == "Exec" {
						_, err = s.Exec(bg, "a", "INSERT INTO t(v) VALUES (?)", []any{"some value"})
					} else {
						_, err = s.ExecOnce(bg, "a", benchID(name == "ExecOnce"), "INSERT INTO t(v) VALUES (?)", []any{"some value"})
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if name != "Exec" {
					for range onceMax + oncePrune {
						write()
					}
				}
				b.ResetTimer()
				for range b.N {
					write()
				}
			})
		}
	}
}

// benchID is a new write identity: 128 random bits, the first 48 of them
// the time in milliseconds when timed.
func benchID(timed bool) string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	if timed {
		binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16|uint64(binary.BigEndian.Uint16(b[6:8])))
	}
	return hex.EncodeToString(b[:])
}
