package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ncruces/go-sqlite3"
	"github.com/snuggen/snuggen/frame"
)

// filledDB builds a database file of exactly pages pages of pageSize bytes,
// with the kv table or without, its pages filled by rows of a table t.
func filledDB(t *testing.T, pageSize, pages int, kv bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "filled.db")
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	must := func(q string) {
		t.Helper()
		if err := c.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	must(fmt.Sprintf("PRAGMA page_size=%d; PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF; PRAGMA max_page_count=%d", pageSize, pages))
	if kv {
		must(kvTable)
	}
	must("CREATE TABLE t(b BLOB)")
	// Rows of shrinking size until the file can take no more, then one
	// table per page left (a root page each).
	for _, size := range []int{pageSize / 2, 64, 1} {
		for c.Exec(fmt.Sprintf("INSERT INTO t VALUES (randomblob(%d))", size)) == nil {
		}
	}
	for i := 0; c.Exec(fmt.Sprintf("CREATE TABLE fill%d(x)", i)) == nil; i++ {
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != pages*pageSize {
		t.Fatalf("filled file is %d bytes, want %d pages of %d", len(data), pages, pageSize)
	}
	return data
}

// onDisk is the database file of app and its WAL, as they lie on disk.
func onDisk(t *testing.T, s *Store, app string) [2][]byte {
	t.Helper()
	path, err := s.Path(app)
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	for i, p := range []string{path, path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

// TestImportAtTheQuota imports files that fill the quota, or come within a
// page of it, with the kv table and without, at several quotas and page
// sizes. A file the host cannot finish (its kv table needs one page more
// than the quota leaves) is refused before it replaces anything: the old
// database is byte for byte as it was and goes on working, after a restart
// too. Every file that is accepted is usable at once, kv included.
func TestImportAtTheQuota(t *testing.T) {
	for _, quota := range []int64{64 << 10, 1 << 20, 5 << 20} {
		for _, pageSize := range []int{4096, 65536} {
			if int64(pageSize)*4 > quota {
				continue
			}
			quotaPages := int(quota) / pageSize
			for _, pages := range []int{quotaPages - 1, quotaPages} {
				for _, kv := range []bool{false, true} {
					name := fmt.Sprintf("quota %d page %d pages %d/%d kv %v", quota, pageSize, pages, quotaPages, kv)
					t.Run(name, func(t *testing.T) {
						importAtQuota(t, quota, filledDB(t, pageSize, pages, kv), !kv && pages == quotaPages)
					})
				}
			}
		}
	}
}

func importAtQuota(t *testing.T, quota int64, data []byte, refused bool) {
	dir := t.TempDir()
	s, err := Open(dir, Options{QuotaBytes: quota})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	seed(t, s, "a")
	before := onDisk(t, s, "a")
	_, err = s.Import(bg, "a", data)
	if refused {
		se := wantCode(t, err, frame.CodeDBQuotaExceeded)
		t.Logf("refused: %s", se.Message)
		if after := onDisk(t, s, "a"); !bytes.Equal(after[0], before[0]) || !bytes.Equal(after[1], before[1]) {
			t.Fatal("the refused import changed the old database's files")
		}
		unchanged(t, s, "a")
		mustExec(t, s, "a", "SELECT 1")
		// And after a restart.
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if s, err = Open(dir, Options{QuotaBytes: quota}); err != nil {
			t.Fatal(err)
		}
		unchanged(t, s, "a")
		return
	}
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	mustExec(t, s, "a", "SELECT 1")
	if r := mustExec(t, s, "a", "SELECT count(*) > 0 FROM t"); rowsJSON(t, r) != "[[1]]" {
		t.Fatalf("imported rows: %s", rowsJSON(t, r))
	}
	if _, found, err := s.KVGet(bg, "a", "prefs"); err != nil || found {
		t.Fatalf("kvGet after import: %v %v", found, err)
	}
}

// TestDamagedIndexIsTheAppsError damages the index of a contentless and of
// an external-content fts5 table (their docsize records, which no
// integrity check compares with anything in those modes): a search that
// reads them is DB_CORRUPT, the app's own error with the way to recover,
// not HOST_ERROR; the app recovers as the message says and the rest of its
// data is as it was.
func TestDamagedIndexIsTheAppsError(t *testing.T) {
	for _, tc := range []struct{ name, create, recover string }{
		{"external content", "CREATE VIRTUAL TABLE f USING fts5(body, content='docs')",
			"INSERT INTO f(f) VALUES('rebuild')"},
		{"contentless", "CREATE VIRTUAL TABLE f USING fts5(body, content='')",
			"DROP TABLE f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			seed(t, s, "a")
			mustExec(t, s, "a", "CREATE TABLE docs(body TEXT)")
			mustExec(t, s, "a", "INSERT INTO docs SELECT 'alpha beta ' || value FROM generate_series(1, 50)")
			mustExec(t, s, "a", tc.create)
			mustExec(t, s, "a", "INSERT INTO f(rowid, body) SELECT rowid, body FROM docs")
			path, _ := s.Path("a")
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			rawExec(t, path, "UPDATE f_docsize SET sz = x'0101' WHERE id = 7")
			if s, err = Open(dir, Options{}); err != nil {
				t.Fatal(err)
			}
			const search = "SELECT rowid FROM f WHERE f MATCH 'alpha' ORDER BY rank LIMIT 3"
			_, err = s.Exec(bg, "a", search, nil)
			se := wantCode(t, err, frame.CodeDBCorrupt)
			if !strings.Contains(se.Message, "VALUES('rebuild')") {
				t.Errorf("message %q does not say how to rebuild", se.Message)
			}
			unchanged(t, s, "a")
			mustExec(t, s, "a", tc.recover)
			if tc.recover == "DROP TABLE f" {
				mustExec(t, s, "a", tc.create)
				mustExec(t, s, "a", "INSERT INTO f(rowid, body) SELECT rowid, body FROM docs")
			}
			if r := mustExec(t, s, "a", "SELECT count(*) FROM ("+search[:len(search)-len(" LIMIT 3")]+")"); rowsJSON(t, r) != "[[50]]" {
				t.Fatalf("after recovery: %s", rowsJSON(t, r))
			}
		})
	}
}

// TestImportChecksFTS5Index imports files whose fts5 tables keep no text of
// their own, so that PRAGMA integrity_check reads only their index's
// structure. An external-content index that does not match its content
// table (damaged docsize records, or rows the index never saw) is rebuilt
// from the content table and every search works; a damaged contentless
// index is refused, the old database untouched; a sound one goes in.
func TestImportChecksFTS5Index(t *testing.T) {
	docs := []string{"CREATE TABLE docs(body TEXT)",
		"INSERT INTO docs SELECT 'alpha beta ' || value FROM generate_series(1, 40)"}
	external := append(docs, "CREATE VIRTUAL TABLE f USING fts5(body, content='docs')",
		"INSERT INTO f(rowid, body) SELECT rowid, body FROM docs")
	contentless := append(docs, "CREATE VIRTUAL TABLE f USING fts5(body, content='')",
		"INSERT INTO f(rowid, body) SELECT rowid, body FROM docs")
	const damage = "UPDATE f_docsize SET sz = x'0101' WHERE id = 7"
	const search = "SELECT count(*) FROM (SELECT rowid FROM f WHERE f MATCH 'alpha' ORDER BY rank)"
	for _, tc := range []struct {
		name string
		sql  []string
		want string // the error code, or "" with the search's count
		rows string
	}{
		{"external content, damaged docsize", append(external, damage), "", "[[40]]"},
		{"external content, rows never indexed", append(external,
			"INSERT INTO docs SELECT 'alpha gamma ' || value FROM generate_series(1, 5)"), "", "[[45]]"},
		{"external content, sound", external, "", "[[40]]"},
		{"contentless, damaged docsize", append(contentless, damage), frame.CodeDBImportInvalid, ""},
		{"contentless, sound", contentless, "", "[[40]]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newStore(t, Options{})
			seed(t, s, "a")
			before := onDisk(t, s, "a")
			_, err := s.Import(bg, "a", rawDB(t, tc.sql...))
			if tc.want != "" {
				se := wantCode(t, err, tc.want)
				t.Logf("refused: %s", se.Message)
				if after := onDisk(t, s, "a"); !bytes.Equal(after[0], before[0]) || !bytes.Equal(after[1], before[1]) {
					t.Fatal("the refused import changed the old database's files")
				}
				unchanged(t, s, "a")
				return
			}
			if err != nil {
				t.Fatalf("import: %v", err)
			}
			if r := mustExec(t, s, "a", search); rowsJSON(t, r) != tc.rows {
				t.Fatalf("search after import: %s, want %s", rowsJSON(t, r), tc.rows)
			}
			mustExec(t, s, "a", "SELECT highlight(f, 0, '[', ']'), bm25(f) FROM f WHERE f MATCH 'beta'")
		})
	}
}
