package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

// Two users of one app, and a user named like a path or like another
// user's key, each get a database of their own under a directory named by a
// hash: no user name reaches the file system and no data crosses.
func TestUserKeysKeepUsersApart(t *testing.T) {
	s, dir := newStore(t, Options{})
	users := []string{"alice", "bob", "../../etc", "alice\x00todo", "ALICE", ""}
	for i, u := range users {
		k := UserKey(u, "todo")
		mustExec(t, s, k, "CREATE TABLE IF NOT EXISTS who(name TEXT)")
		mustExec(t, s, k, "INSERT INTO who VALUES (?)", u)
		if err := s.KVSet(bg, k, "n", []byte{'0' + byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i, u := range users {
		k := UserKey(u, "todo")
		r := mustExec(t, s, k, "SELECT name FROM who")
		if len(r.Rows) != 1 || r.Rows[0][0] != u {
			t.Errorf("user %q sees %v, want only its own row", u, r.Rows)
		}
		v, _, err := s.KVGet(bg, k, "n")
		if err != nil || string(v) != string([]byte{'0' + byte(i)}) {
			t.Errorf("user %q kv = %s, %v", u, v, err)
		}
	}
	if UserKey("", "todo") != "todo" {
		t.Errorf("the empty user's key is %q, want the app key itself", UserKey("", "todo"))
	}
	// Every file stays inside dir, and no name holds a user's name.
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		for _, u := range []string{"alice", "bob", "etc", "ALICE"} {
			if strings.Contains(rel, u) {
				t.Errorf("file %s names user %q", rel, u)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Path(UserKey("alice", "todo"))
	if err != nil || !strings.HasPrefix(p, dir+string(filepath.Separator)+"u-") {
		t.Errorf("Path = %q, %v; want a u-<hash> directory under %s", p, err, dir)
	}
	if _, err := s.Path(UserKey("bob", strings.Repeat("x", MaxAppKeyBytes+1))); err == nil {
		t.Error("Path took an app key past MaxAppKeyBytes")
	}
}

// Release closes one database and forgets it; the next call opens it again
// with the data intact, and the file can be swapped while it is released.
func TestEnsureAndRelease(t *testing.T) {
	s, _ := newStore(t, Options{})
	k := UserKey("carol", "notes")
	if err := s.Ensure(bg, k); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Path(k)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Ensure made no file: %v", err)
	}
	mustExec(t, s, k, "CREATE TABLE t(x)")
	mustExec(t, s, k, "INSERT INTO t VALUES (1)")
	if err := s.Release(bg, k); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after Release the WAL is still there (%v): the last connection checkpoints it", err)
	}
	if n := s.openConns.Load(); n != 0 {
		t.Errorf("%d connections open after Release", n)
	}
	if r := mustExec(t, s, k, "SELECT x FROM t"); len(r.Rows) != 1 {
		t.Errorf("after Release: rows %v", r.Rows)
	}
	if err := s.Release(bg, "never-opened"); err != nil {
		t.Errorf("Release of a database never opened: %v", err)
	}
	// Release waits for a running call: a call holding the lock ends first.
	ctx, cancel := context.WithCancel(bg)
	cancel()
	if err := s.Release(ctx, k); err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("Release with an ended context: %v", err)
	}
}

// In LockingNormal a second connection (a replicator's) can read the
// database beside the store's; in the default exclusive mode it cannot.
func TestLockingModes(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		readable bool
	}{{"", false}, {LockingNormal, true}} {
		s, _ := newStore(t, Options{LockingMode: tc.mode})
		mustExec(t, s, "app", "CREATE TABLE t(x)")
		mustExec(t, s, "app", "INSERT INTO t VALUES (42)")
		p, _ := s.Path("app")
		c, err := sqlite3.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Exec("SELECT * FROM t")
		c.Close()
		if tc.readable && err != nil {
			t.Errorf("mode %q: a second connection cannot read: %v", tc.mode, err)
		}
		if !tc.readable && err == nil {
			t.Errorf("mode %q: a second connection read the database", tc.mode)
		}
		mustExec(t, s, "app", "INSERT INTO t VALUES (43)")
	}
	if _, err := Open(t.TempDir(), Options{LockingMode: "SHARED"}); err == nil || !strings.Contains(err.Error(), "LockingMode") {
		t.Errorf("Open with LockingMode SHARED: %v, want an error naming it", err)
	}
}

// Synchronous sets when a commit waits for the disk: FULL by default (a
// commit survives the machine failing), NORMAL when the host's durability
// lies elsewhere (replicated mode); anything else is refused by name.
func TestSynchronousSetting(t *testing.T) {
	for _, tc := range []struct {
		opt  string
		want int64
	}{{"", 2}, {SyncFull, 2}, {SyncNormal, 1}} {
		s, _ := newStore(t, Options{Synchronous: tc.opt})
		mustExec(t, s, "app", "CREATE TABLE t(x)")
		d := s.dbs["app"]
		d.lock <- struct{}{}
		d.trusted = true
		got, err := pragmaInt(d.conn, "synchronous")
		d.trusted = false
		<-d.lock
		if err != nil || got != tc.want {
			t.Errorf("Synchronous %q: PRAGMA synchronous = %d (%v), want %d", tc.opt, got, err, tc.want)
		}
	}
	if _, err := Open(t.TempDir(), Options{Synchronous: "OFF"}); err == nil || !strings.Contains(err.Error(), "Synchronous") {
		t.Errorf("Open with Synchronous OFF: %v, want an error naming it", err)
	}
}

// A replicator's tables (Litestream's, beside the store in replicated
// mode) are the host's: the app's SQL can neither read, drop nor name
// them, an export leaves them out, and an import holding one is refused.
func TestReplicatorTablesAreReserved(t *testing.T) {
	s, _ := newStore(t, Options{LockingMode: LockingNormal})
	mustExec(t, s, "app", "CREATE TABLE notes(text)")
	mustExec(t, s, "app", "INSERT INTO notes VALUES ('kept')")
	p, _ := s.Path("app")
	c, err := sqlite3.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`CREATE TABLE _litestream_seq (id INTEGER PRIMARY KEY, seq INTEGER); CREATE TABLE _litestream_lock (id INTEGER);`); err != nil {
		t.Fatal(err)
	}
	c.Close()
	for _, sql := range []string{
		"SELECT * FROM _litestream_seq",
		"DROP TABLE _litestream_lock",
		"INSERT INTO _litestream_seq VALUES (1, 1)",
		"CREATE TABLE _Litestream_mine(x)",
		"CREATE VIEW v AS SELECT * FROM _litestream_seq",
	} {
		_, err := s.Exec(bg, "app", sql, nil)
		if e := wantCode(t, err, frame.CodeDBSQLError); !strings.Contains(e.Message, "_litestream_") {
			t.Errorf("%s: %q does not name the reserved prefix", sql, e.Message)
		}
	}
	data, err := s.Export(bg, "app")
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out.db")
	if err := os.WriteFile(out, data, 0o600); err != nil {
		t.Fatal(err)
	}
	ec, err := sqlite3.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	st, _, err := ec.Prepare("SELECT group_concat(name) FROM sqlite_schema WHERE type = 'table'")
	if err != nil {
		t.Fatal(err)
	}
	st.Step()
	tables := st.ColumnText(0)
	st.Close()
	ec.Close()
	if strings.Contains(tables, "_litestream_") || !strings.Contains(tables, "notes") {
		t.Errorf("the export holds tables %s", tables)
	}
	if _, err := s.Import(bg, "other", data); err != nil {
		t.Errorf("an export taken beside a replicator does not import: %v", err)
	}
	_, err = s.Import(bg, "other", rawDB(t, "CREATE TABLE _litestream_seq(id INTEGER PRIMARY KEY, seq INTEGER)"))
	wantCode(t, err, frame.CodeDBImportInvalid)
}
