package load

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// santhosh-tekuri/jsonschema/v5 is the independent check of schemas/ (in
// tests only: snuggen does not link it, its package init costs every
// process start several milliseconds).

// compileAll compiles every *.schema.json of dir with v5 (draft 2020-12,
// references between the files, nothing loaded from elsewhere).
func compileAll(t *testing.T, files map[string][]byte) error {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.Draft = jsonschema.Draft2020
	c.LoadURL = func(s string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("%s is not in schemas/", s)
	}
	var ids []string
	for name, data := range files {
		id := "file:///schemas/" + name
		if f, _, err := parseTree(data); err == nil {
			if x := f.get("$id"); x != nil && x.kind == 's' {
				id = x.str
			}
		}
		if err := c.AddResource(id, bytes.NewReader(data)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids {
		if _, err := c.Compile(id); err != nil {
			return err
		}
	}
	return nil
}

func schemaFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no schemas in %s: %v", dir, err)
	}
	files := map[string][]byte{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files[filepath.Base(p)] = data
	}
	return files
}

// TestSchemasCompileWithV5: every schema of schemas/ (and of the frozen
// copy the tests break) is a JSON Schema v5 compiles; snuggen gen no longer
// runs v5 itself.
func TestSchemasCompileWithV5(t *testing.T) {
	for _, dir := range []string{"../../schemas", "../testdata/spec"} {
		if err := compileAll(t, schemaFiles(t, dir)); err != nil {
			t.Errorf("%s: %v", dir, err)
		}
	}
}

// TestLoadRefusesWhatV5Refuses: a keyword value the 2020-12 meta-schema
// refuses, put into a property's schema, is refused by the loader too,
// with its file and line (v5 used to report these).
func TestLoadRefusesWhatV5Refuses(t *testing.T) {
	const old = `"instanceId": { "type": "string", "minLength": 1, "maxLength": 128 }`
	for _, b := range []string{`"type":"string","title":5`, `"type":"string","description":5`, `"type":"string","$comment":5`,
		`"type":"string","minLength":-1`, `"type":"string","minLength":1.5`, `"type":"string","minLength":"x"`,
		`"type":"integer","minimum":"x"`, `"type":"integer","maximum":"x"`, `"enum":5`, `"type":"integer","maximum":true`,
		`"type":"array","minItems":-1`, `"type":"object","required":["a","a"]`, `"type":"object","required":[5]`, `"type":"object","required":5`,
		`"type":"string","pattern":"("`, `"type":"string","pattern":5`, `"type":"array","items":5`, `"type":"array","items":[{}]`,
		`"type":"object","properties":5`, `"type":"object","additionalProperties":5`, `"type":"object","propertyNames":5`,
		`"allOf":[]`, `"allOf":5`, `"allOf":[5]`, `"type":"string","if":5`, `"type":"string","if":{},"then":5`, `"type":"string","contentEncoding":5`,
		`"type":"string","examples":5`, `"$ref":5`, `"type":[]`, `"type":"string","$id":5`, `"type":"string","$schema":5`,
		`"type":"object","maxProperties":-1`, `"type":"string","$id":"#x"`, `"type":"object","properties":{"a":5}`,
		`"type":"object","propertyNames":{"minLength":-1}`, `"type":"array","items":{"type":"strin"}`, `"type":"string","else":5`,
		`"type":"string","contentEncoding":"base64","contentMediaType":5`,
	} {
		fsys := copySpec(t, "../testdata/spec")
		name := "app-cancel.schema.json"
		data := strings.Replace(string(fsys[name].Data), old, `"instanceId": {`+b+`}`, 1)
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
		files := map[string][]byte{}
		for n, f := range fsys {
			if strings.HasSuffix(n, ".schema.json") {
				files[n] = f.Data
			}
		}
		if compileAll(t, files) == nil {
			t.Errorf("%s: v5 accepts it: not a case for this test", b)
			continue
		}
		_, err := Load(fsys, "schemas")
		ds, ok := err.(Diagnostics)
		if !ok {
			t.Errorf("%s: Load returned %v, want Diagnostics", b, err)
			continue
		}
		found := false
		for _, d := range ds {
			found = found || (d.File == "schemas/"+name && d.Line == 12)
		}
		if !found {
			t.Errorf("%s: no diagnostic at schemas/%s:12: %v", b, name, err)
		}
	}
}
