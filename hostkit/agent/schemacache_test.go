package agent

import (
	"encoding/json"
	"fmt"
	"testing"
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
