package store

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ncruces/go-sqlite3"
)

const benchKeys = 1000

func benchStore(b *testing.B) *Store {
	b.Helper()
	s, _ := newStore(b, Options{})
	for i := range benchKeys {
		if err := s.KVSet(bg, "app", "key"+strconv.Itoa(i), json.RawMessage(`{"n":`+strconv.Itoa(i)+`,"label":"some value"}`)); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// benchRaw is the baseline: the same table, on a connection with the same
// engine settings (harden: exclusive WAL, limits, db_config), read through
// the driver alone with a prepared statement, without the store's work
// (app lookup, lock, interrupt context, authorizer, JSON check, copy).
func benchRaw(b *testing.B) (*sqlite3.Conn, *sqlite3.Stmt) {
	b.Helper()
	c, err := sqlite3.Open(filepath.Join(b.TempDir(), "raw.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if err := harden(c, Options{QuotaBytes: DefaultQuotaBytes}); err != nil {
		b.Fatal(err)
	}
	if err := c.Exec(kvTable); err != nil {
		b.Fatal(err)
	}
	ins, _, err := c.Prepare("INSERT INTO _snug_kv VALUES (?, ?)")
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchKeys {
		ins.BindText(1, "key"+strconv.Itoa(i))
		ins.BindText(2, `{"n":`+strconv.Itoa(i)+`,"label":"some value"}`)
		if err := ins.Exec(); err != nil {
			b.Fatal(err)
		}
	}
	ins.Close()
	st, _, err := c.Prepare("SELECT value FROM _snug_kv WHERE key = ?")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return c, st
}

// BenchmarkKVGet is the direct store call the broker's benchmark compares
// its WebSocket round trip with; "raw" is the driver alone.
func BenchmarkKVGet(b *testing.B) {
	b.Run("raw", func(b *testing.B) {
		_, st := benchRaw(b)
		var out []byte
		for i := 0; b.Loop(); i++ {
			st.BindText(1, "key"+strconv.Itoa(i%benchKeys))
			if !st.Step() {
				b.Fatal("no row", st.Err())
			}
			out = append(out[:0], st.ColumnRawText(0)...)
			st.Reset()
		}
	})
	b.Run("store", func(b *testing.B) {
		s := benchStore(b)
		for i := 0; b.Loop(); i++ {
			if _, found, err := s.KVGet(bg, "app", "key"+strconv.Itoa(i%benchKeys)); err != nil || !found {
				b.Fatal(found, err)
			}
		}
	})
	// 16 goroutines on one app's database (2 cores: SetParallelism(8)).
	b.Run("store-16", func(b *testing.B) {
		s := benchStore(b)
		b.SetParallelism(8)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				if _, found, err := s.KVGet(bg, "app", "key"+strconv.Itoa(i%benchKeys)); err != nil || !found {
					b.Error(found, err)
					return
				}
			}
		})
	})
	// 16 goroutines over 16 apps: one connection each.
	b.Run("store-16-apps", func(b *testing.B) {
		s := benchStore(b)
		for a := range 16 {
			if err := s.KVSet(bg, "app"+strconv.Itoa(a), "key", json.RawMessage(`1`)); err != nil {
				b.Fatal(err)
			}
		}
		b.SetParallelism(8)
		b.ResetTimer()
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			app := "app" + strconv.Itoa(int(n.Add(1)%16))
			for pb.Next() {
				if _, found, err := s.KVGet(bg, app, "key"); err != nil || !found {
					b.Error(found, err)
					return
				}
			}
		})
	})
}

// BenchmarkKVSet writes a new value each time: one durable commit (an
// fdatasync of the WAL) per call.
func BenchmarkKVSet(b *testing.B) {
	s := benchStore(b)
	for i := 0; b.Loop(); i++ {
		if err := s.KVSet(bg, "app", "key"+strconv.Itoa(i%benchKeys), json.RawMessage(strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExec(b *testing.B) {
	s := benchStore(b)
	mustExec(b, s, "app", "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
	for i := range 1000 {
		mustExec(b, s, "app", "INSERT INTO t VALUES (?, ?)", i, "row "+strconv.Itoa(i))
	}
	b.Run("select-by-id", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Exec(bg, "app", "SELECT id, body FROM t WHERE id = ?", []any{float64(i % 1000)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("select-100-rows", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Exec(bg, "app", "SELECT id, body FROM t LIMIT 100", nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("insert", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := s.Exec(bg, "app", "INSERT INTO t(body) VALUES (?)", []any{"x"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkKVGetVsRaw interleaves batches of store.KVGet and of the raw
// driver read (the baseline), so that both see the same machine load, and
// reports each one's time per read and their ratio.
func BenchmarkKVGetVsRaw(b *testing.B) {
	_, raw := benchRaw(b)
	s := benchStore(b)
	const batch = 100
	var rawTime, storeTime time.Duration
	var out []byte
	b.ResetTimer()
	for n := 0; n < b.N; n += batch {
		start := time.Now()
		for i := range batch {
			raw.BindText(1, "key"+strconv.Itoa((n+i)%benchKeys))
			if !raw.Step() {
				b.Fatal("no row", raw.Err())
			}
			out = append(out[:0], raw.ColumnRawText(0)...)
			raw.Reset()
		}
		mid := time.Now()
		for i := range batch {
			if _, found, err := s.KVGet(bg, "app", "key"+strconv.Itoa((n+i)%benchKeys)); err != nil || !found {
				b.Fatal(found, err)
			}
		}
		rawTime += mid.Sub(start)
		storeTime += time.Since(mid)
	}
	ops := float64((b.N + batch - 1) / batch * batch)
	b.ReportMetric(float64(rawTime.Nanoseconds())/ops, "raw-ns/read")
	b.ReportMetric(float64(storeTime.Nanoseconds())/ops, "store-ns/read")
	b.ReportMetric(float64(storeTime)/float64(rawTime), "store/raw")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkOpen measures opening a database with the hardening every
// connection gets, with and without the virtual-table modules: what
// registering fts5 and rtree adds to every open (databases reopen past
// Options.MaxOpen).
func BenchmarkOpen(b *testing.B) {
	path := filepath.Join(b.TempDir(), "open.db")
	opts := Options{QuotaBytes: DefaultQuotaBytes, MaxMemoryBytes: DefaultMaxMemoryBytes}
	b.Run("without-modules", func(b *testing.B) {
		for b.Loop() {
			c, err := sqlite3.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			if err := harden(c, opts); err != nil {
				b.Fatal(err)
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("with-modules", func(b *testing.B) {
		for b.Loop() {
			c, err := openHardened(path, opts)
			if err != nil {
				b.Fatal(err)
			}
			if err := c.Close(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSearch compares a full-text search of 2,000 notes (MATCH,
// ranked, with snippet) with the LIKE scan an app writes without fts5.
func BenchmarkSearch(b *testing.B) {
	s, _ := newStore(b, Options{})
	mustExec(b, s, "app", "CREATE TABLE notes(id INTEGER PRIMARY KEY, body TEXT)")
	mustExec(b, s, "app", "CREATE VIRTUAL TABLE notes_fts USING fts5(body, content='notes', content_rowid='id')")
	mustExec(b, s, "app", `INSERT INTO notes(body) SELECT 'note ' || value || ' about ' || (value % 50) || ' things and river ' || (value % 7) || ' ' || hex(randomblob(100))
		FROM generate_series(1, 2000)`)
	mustExec(b, s, "app", "INSERT INTO notes_fts(notes_fts) VALUES ('rebuild')")
	b.Run("fts5-match", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Exec(bg, "app", "SELECT rowid, snippet(notes_fts, 0, '[', ']', '…', 8) FROM notes_fts WHERE notes_fts MATCH ? ORDER BY rank LIMIT 20", []any{"about 42"})
			if err != nil || len(r.Rows) != 20 {
				b.Fatal(err)
			}
		}
	})
	b.Run("like-scan", func(b *testing.B) {
		for b.Loop() {
			r, err := s.Exec(bg, "app", "SELECT id, body FROM notes WHERE body LIKE ? LIMIT 20", []any{"%about 42 %"})
			if err != nil || len(r.Rows) != 20 {
				b.Fatal(err)
			}
		}
	})
}
