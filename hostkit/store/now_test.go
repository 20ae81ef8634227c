package store

import (
	"context"
	"testing"
	"time"
)

// KVGetNow never waits: before the database is open, and while another
// call holds it (a query that runs until cancelled), it returns ok false
// at once having done nothing; on a free, open database it reads as KVGet.
func TestKVGetNowDoesNotWait(t *testing.T) {
	s, _ := newStore(t, Options{StatementTimeout: time.Minute})
	if _, _, ok, err := kvGetNow(s, "a", "k"); ok || err != nil {
		t.Fatalf("KVGetNow on a database never opened: ok %v, %v", ok, err)
	}
	bg := context.Background()
	if err := s.KVSet(bg, "a", "k", []byte(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	v, found, ok, err := kvGetNow(s, "a", "k")
	if !ok || err != nil || !found || string(v) != `[1,2]` {
		t.Fatalf("KVGetNow on a free database: %s %v %v %v", v, found, ok, err)
	}
	if _, found, ok, err := kvGetNow(s, "a", "nothing"); !ok || err != nil || found {
		t.Fatalf("KVGetNow of a missing key: found %v ok %v %v", found, ok, err)
	}
	if _, _, ok, err := kvGetNow(s, "a", ""); !ok || err == nil {
		t.Fatalf("KVGetNow of an empty key: ok %v, %v", ok, err)
	}

	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() {
		_, err := s.Exec(ctx, "a", "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT count(*) FROM r", nil)
		done <- err
	}()
	// Until the query holds the database KVGetNow may still read; once it
	// does, KVGetNow returns without waiting for it.
	untilHeld(t, s, "a")
	select {
	case err := <-done:
		t.Fatalf("the query ended before it was cancelled: %v", err)
	default:
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled query succeeded")
	}
	if _, _, ok, err := kvGetNow(s, "a", "k"); !ok || err != nil {
		t.Fatalf("KVGetNow once the query ended: ok %v, %v", ok, err)
	}
	s.Close()
	if _, _, ok, _ := kvGetNow(s, "a", "k"); ok {
		t.Fatal("KVGetNow read from a closed store")
	}
}

// A kvGet that finds the database held by another quick call (a KVGetNow
// on another read loop) looks again after yielding, a bounded number of
// times, and reads once the holder let go; behind any other call it gives
// up without yielding at all.
func TestKVGetNowLooksAgainOnlyBehindAQuickCall(t *testing.T) {
	s, _ := newStore(t, Options{})
	if err := s.KVSet(context.Background(), "a", "k", []byte(`1`)); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	d := s.dbs["a"]
	s.mu.RUnlock()
	yields := 0
	release := 0 // the yield at which the holder lets go (0: never)
	old := yieldToHolder
	t.Cleanup(func() { yieldToHolder = old })
	yieldToHolder = func() {
		yields++
		if yields == release {
			d.quick.Store(false)
			<-d.lock
		}
	}
	hold := func(quick bool) {
		d.lock <- struct{}{}
		d.quick.Store(quick)
	}

	// A quick holder that lets go at the second yield: read.
	hold(true)
	yields, release = 0, 2
	if v, _, ok, err := kvGetNow(s, "a", "k"); !ok || err != nil || string(v) != "1" {
		t.Fatalf("behind a quick call that let go: ok %v, %v", ok, err)
	}
	if yields != 2 {
		t.Fatalf("yields %d, want 2", yields)
	}
	// A quick holder that does not let go: a bounded number of looks.
	hold(true)
	yields, release = 0, 0
	if _, _, ok, _ := kvGetNow(s, "a", "k"); ok {
		t.Fatal("read while the quick call held the database")
	}
	if yields != quickLooks {
		t.Fatalf("yields %d, want %d", yields, quickLooks)
	}
	// Any other holder (a query, a write): no second look.
	d.quick.Store(false)
	yields = 0
	if _, _, ok, _ := kvGetNow(s, "a", "k"); ok || yields != 0 {
		t.Fatalf("behind a call that is not quick: ok %v after %d yields", ok, yields)
	}
	<-d.lock
	if _, _, ok, err := kvGetNow(s, "a", "k"); !ok || err != nil {
		t.Fatalf("on the free database: ok %v, %v", ok, err)
	}
	if d.quick.Load() {
		t.Fatal("quick left set after the call")
	}
}

// untilHeld returns once app's database is held by a statement still
// running: KVGetNow, which never waits for one, then answers not ok.
func untilHeld(t *testing.T, s *Store, app string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(time.Millisecond) {
		_, _, ok, err := kvGetNow(s, app, "k")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow query never held the database")
		}
	}
}
