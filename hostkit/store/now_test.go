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
	if _, _, ok, err := s.KVGetNow("a", "k"); ok || err != nil {
		t.Fatalf("KVGetNow on a database never opened: ok %v, %v", ok, err)
	}
	bg := context.Background()
	if err := s.KVSet(bg, "a", "k", []byte(`[1,2]`)); err != nil {
		t.Fatal(err)
	}
	v, found, ok, err := s.KVGetNow("a", "k")
	if !ok || err != nil || !found || string(v) != `[1,2]` {
		t.Fatalf("KVGetNow on a free database: %s %v %v %v", v, found, ok, err)
	}
	if _, found, ok, err := s.KVGetNow("a", "nothing"); !ok || err != nil || found {
		t.Fatalf("KVGetNow of a missing key: found %v ok %v %v", found, ok, err)
	}
	if _, _, ok, err := s.KVGetNow("a", ""); !ok || err == nil {
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
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, _, ok, err := s.KVGetNow("a", "k")
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the slow query never held the database")
		}
	}
	select {
	case err := <-done:
		t.Fatalf("the query ended before it was cancelled: %v", err)
	default:
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the cancelled query succeeded")
	}
	if _, _, ok, err := s.KVGetNow("a", "k"); !ok || err != nil {
		t.Fatalf("KVGetNow once the query ended: ok %v, %v", ok, err)
	}
	s.Close()
	if _, _, ok, _ := s.KVGetNow("a", "k"); ok {
		t.Fatal("KVGetNow read from a closed store")
	}
}
