package frame

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/snuggen/snuggen/internal/jsonscan"
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
	// Numbers as JSON.parse reads them, the reading the spec's validators
	// share (the nearest double; jsonscan.ParseFloat): JSON Schema's exact
	// decimals would call 1.0000000000000001 a fraction. An infinite one has
	// no JSON Schema value to compare.
	inst, finite := asDoubles(inst)
	if !finite {
		return false, false, nil
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

// asDoubles replaces every json.Number in v with the double JSON.parse reads
// for it, written exactly (json.Number of its shortest decimal); finite is
// false when one of them is ±Infinity.
func asDoubles(v any) (out any, finite bool) {
	switch x := v.(type) {
	case json.Number:
		f := jsonscan.ParseFloat(string(x))
		if math.IsInf(f, 0) {
			return nil, false
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), true
	case map[string]any:
		for k, e := range x {
			if x[k], finite = asDoubles(e); !finite {
				return nil, false
			}
		}
	case []any:
		for i, e := range x {
			if x[i], finite = asDoubles(e); !finite {
				return nil, false
			}
		}
	}
	return v, true
}
