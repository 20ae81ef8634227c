package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
