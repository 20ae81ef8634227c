package frame

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/snuggen/snuggen/schemas"
)

var (
	schemaOnce sync.Once
	schemaByID map[string]*jsonschema.Schema // frame type → compiled schema
	schemaErr  error
)

// compiledSchemas compiles every frame schema in schemas/ with
// santhosh-tekuri/jsonschema/v5, keyed by frame type.
func compiledSchemas(t testing.TB) map[string]*jsonschema.Schema {
	t.Helper()
	schemaOnce.Do(func() {
		c := jsonschema.NewCompiler()
		c.Draft = jsonschema.Draft2020
		names, _ := fs.Glob(schemas.FS, "*.schema.json")
		ids := map[string]string{}
		for _, n := range names {
			b, _ := fs.ReadFile(schemas.FS, n)
			id := "https://snug.dev/schemas/v1/" + n
			ids[n] = id
			if err := c.AddResource(id, bytes.NewReader(b)); err != nil {
				schemaErr = err
				return
			}
		}
		schemaByID = map[string]*jsonschema.Schema{}
		for _, n := range names {
			if n == "error.schema.json" || n == "chat-envelope.schema.json" {
				continue
			}
			s, err := c.Compile(ids[n])
			if err != nil {
				schemaErr = fmt.Errorf("compile %s: %w", n, err)
				return
			}
			schemaByID["snug:"+strings.TrimSuffix(n, ".schema.json")] = s
		}
	})
	if schemaErr != nil {
		t.Fatal(schemaErr)
	}
	return schemaByID
}

// schemaVerdict validates raw with jsonschema, from bytes to verdict: known
// reports whether raw is an object whose type has a schema.
func schemaVerdict(byType map[string]*jsonschema.Schema, raw []byte) (valid, known bool, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var inst any
	if err := dec.Decode(&inst); err != nil {
		return false, false, err
	}
	obj, ok := inst.(map[string]any)
	if !ok {
		return false, false, nil
	}
	typ, _ := obj["type"].(string)
	s := byType[typ]
	if s == nil {
		return false, false, nil
	}
	return s.Validate(inst) == nil, true, nil
}
