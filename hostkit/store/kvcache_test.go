package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/ncruces/go-sqlite3"
)

// kvIs reads key through both reads (KVGet and KVGetNow) and fails unless
// both give want ("" for not found).
func kvIs(t *testing.T, s *Store, app, key, want string) {
	t.Helper()
	v, found, err := s.KVGet(context.Background(), app, key)
	if err != nil || found != (want != "") || string(v) != want && want != "" {
		t.Fatalf("KVGet %s = %s %v %v, want %q", key, v, found, err, want)
	}
	v, found, ok, err := kvGetNow(s, app, key)
	if !ok || err != nil || found != (want != "") || string(v) != want && want != "" {
		t.Fatalf("KVGetNow %s = %s %v %v %v, want %q", key, v, found, ok, err, want)
	}
}

// kvGetNow is KVGetNow with KVGet's results.
func kvGetNow(s *Store, app, key string) (json.RawMessage, bool, bool, error) {
	v, ok, err := s.KVGetNow(app, key)
	return v.Raw, v.Found, ok, err
}

// The kv cache of an open database never answers with a value the
// database no longer holds: a write or a delete of the key, and an import
// that replaces the database, are seen by the next read; a value handed
// out is shared with the cache and stays as it was after a write.
func TestKVCacheFollowsEveryWrite(t *testing.T) {
	s, _ := newStore(t, Options{})
	ctx := context.Background()
	set := func(app, key, v string) {
		t.Helper()
		if err := s.KVSet(ctx, app, key, []byte(v)); err != nil {
			t.Fatal(err)
		}
	}
	set("a", "k", `1`)
	kvIs(t, s, "a", "k", `1`)
	kvIs(t, s, "a", "k", `1`) // from the cache
	s.mu.RLock()
	d := s.dbs["a"]
	s.mu.RUnlock()
	if _, ok := d.kvCache["k"]; !ok {
		t.Fatal("a value read is not cached")
	}
	v, _, _ := s.KVGet(ctx, "a", "k")
	w, _, _, _ := kvGetNow(s, "a", "k")
	if unsafe.SliceData(v) != unsafe.SliceData(w) {
		t.Fatal("two reads of a cached value made two copies")
	}

	set("a", "k", `{"x": 2}`)
	kvIs(t, s, "a", "k", `{"x":2}`)
	if string(v) != `1` || string(w) != `1` {
		t.Fatalf("a value handed out changed with a write: %s %s", v, w)
	}
	set("a", "k", `null`) // deletes
	kvIs(t, s, "a", "k", "")
	set("a", "k", `3`)
	kvIs(t, s, "a", "k", `3`)

	// An import replaces the whole database.
	data, err := s.Export(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	set("a", "k", `4`)
	kvIs(t, s, "a", "k", `4`)
	if _, err := s.Import(ctx, "a", data); err != nil {
		t.Fatal(err)
	}
	kvIs(t, s, "a", "k", `3`)

	// A value refused before the database is touched changes nothing.
	kvIs(t, s, "a", "k", `3`)
	if err := s.KVSet(ctx, "a", "k", []byte(`{`)); err == nil {
		t.Fatal("a value that is no JSON was stored")
	}
	kvIs(t, s, "a", "k", `3`)

	// Bounds: a large value is read but not kept; the cache never holds
	// more than kvCacheMax bytes.
	big := `"` + strings.Repeat("x", kvCacheValueMax) + `"`
	set("a", "big", big)
	kvIs(t, s, "a", "big", big)
	if _, ok := d.kvCache["big"]; ok {
		t.Fatal("a value past kvCacheValueMax is cached")
	}
	mid := `"` + strings.Repeat("y", kvCacheValueMax/2) + `"`
	for i := range 40 {
		key := "m" + strings.Repeat("i", i+1)
		set("a", key, mid)
		kvIs(t, s, "a", key, mid)
		if d.kvCacheBytes > kvCacheMax {
			t.Fatalf("the cache holds %d bytes", d.kvCacheBytes)
		}
	}
}

// Under normal locking another connection (a replicator, another
// process) may write the file: nothing is cached, and its write is read.
func TestKVCacheOffUnderNormalLocking(t *testing.T) {
	s, _ := newStore(t, Options{LockingMode: LockingNormal})
	ctx := context.Background()
	if err := s.KVSet(ctx, "a", "k", []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	kvIs(t, s, "a", "k", `1`)
	path, err := s.Path("a")
	if err != nil {
		t.Fatal(err)
	}
	c, err := sqlite3.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BusyTimeout(10e9); err != nil {
		t.Fatal(err)
	}
	if err := c.Exec(`UPDATE _snug_kv SET value = '2' WHERE key = 'k'`); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	kvIs(t, s, "a", "k", `2`)
}

// Values handed out are shared, never written: readers on several
// goroutines (KVGet and KVGetNow) hold the cached bytes while a writer
// replaces the key again and again, and every value a reader got is, to
// its end, exactly one of the values written (run with -race: a store that
// wrote into bytes it handed out would be reported).
func TestKVValuesHandedOutNeverChange(t *testing.T) {
	s, _ := newStore(t, Options{})
	ctx := context.Background()
	values := []string{`{"n":0}`, `[1,2,3]`, `"three"`, `{"n":"<&>"}`}
	isWritten := func(v []byte) bool {
		for _, w := range values {
			if string(v) == w {
				return true
			}
		}
		return false
	}
	if err := s.KVSet(ctx, "a", "k", []byte(values[0])); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			var held []json.RawMessage
			defer func() {
				for _, v := range held {
					if !isWritten(v) {
						errs <- fmt.Errorf("a value changed after it was handed out: %s", v)
						return
					}
				}
				errs <- nil
			}()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				var v json.RawMessage
				if g%2 == 0 {
					v, _, _ = s.KVGet(ctx, "a", "k")
				} else if now, ok, _ := s.KVGetNow("a", "k"); ok {
					v = now.Raw
				}
				if v != nil && !isWritten(v) {
					errs <- fmt.Errorf("read %s, never written", v)
					return
				}
				if v != nil && i%16 == 0 {
					held = append(held, v)
				}
			}
		}()
	}
	for i := range 300 {
		if err := s.KVSet(ctx, "a", "k", []byte(values[i%len(values)])); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
