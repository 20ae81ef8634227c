package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSchemaCacheIsBoundedLRU: compiled schemas are cached by content, the
// cache never holds more than maxCachedSchemas, and the schema used last
// stays while older ones go.
func TestSchemaCacheIsBoundedLRU(t *testing.T) {
	schema := func(i int) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer"}}}`, i))
	}
	hot, err := CompileSchema(schema(-1))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * maxCachedSchemas {
		if _, err := CompileSchema(schema(i)); err != nil {
			t.Fatal(err)
		}
		if again, _ := CompileSchema(schema(-1)); again != hot {
			t.Fatalf("after %d others the hot schema was compiled again", i+1)
		}
	}
	schemaCache.Lock()
	n, m := schemaCache.order.Len(), len(schemaCache.byKey)
	schemaCache.Unlock()
	if n > maxCachedSchemas || m != n {
		t.Fatalf("cache holds %d entries (%d keys), bound %d", n, m, maxCachedSchemas)
	}
	first, _ := CompileSchema(schema(0))
	if again, _ := CompileSchema(schema(0)); again != first {
		t.Fatal("a schema compiled twice in a row was not cached")
	}
}

// TestBusySchemaWaitsUntilItsContextEnds: a validation that finds its
// schema's kept copy busy and every spare in use waits, and ends with its
// request's context; once the copy is back it runs. A spare is compiled
// while one is free, and given up after its one use.
func TestBusySchemaWaitsUntilItsContextEnds(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	kept, spare, err := s.take(context.Background())
	if err != nil || spare {
		t.Fatalf("take: %v, spare %v", err, spare)
	}
	// The kept copy is busy: a validation runs on a spare.
	if err := s.Validate(NewMeter(context.Background()), map[string]any{}); err == nil {
		t.Fatal("an object without a: valid")
	}
	if n := len(spares); n != 0 {
		t.Fatalf("%d spares still held after their one use", n)
	}
	for range maxSpares {
		spares <- struct{}{}
	}
	defer func() {
		for range maxSpares {
			<-spares
		}
	}()
	// The request ends a little later (were the validation not waiting, it
	// would have answered valid by then).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	time.AfterFunc(20*time.Millisecond, cancel)
	if err := s.Validate(NewMeter(ctx), map[string]any{"a": 1.0}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want the context's", err)
	}
	s.put(kept, false)
	if err := s.Validate(NewMeter(context.Background()), map[string]any{"a": 1.0}); err != nil {
		t.Fatalf("with the copy back: %v", err)
	}
}
