package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The meter rewrites every schema object's format (schema.go): these tests
// hold the metered schema to the library's own verdicts on the schema as
// the app wrote it. For every schema the walker accepts, both compile it or
// both refuse it, and for every instance both give the same verdict.

// oracle compiles a schema the walker accepted with the library alone, as
// the host configures it: nothing loaded, content asserted before 2019-09.
func oracle(doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if m, ok := doc.(map[string]any); ok {
		s, _ := m["$schema"].(string)
		if strings.Contains(s, "draft-04") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-07") {
			c.AssertContent()
		}
	}
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, err
	}
	return c.Compile(schemaURL)
}

func decodeNumbers(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// tally counts what the comparisons covered.
type tally struct{ walked, compiled, valid, invalid int }

// agree compares the metered schema with the library's on one schema and
// its instances.
func agree(t testing.TB, schema string, instances []string, n *tally) {
	t.Helper()
	if _, _, err := walkSchema(json.RawMessage(schema)); err != nil {
		return
	}
	n.walked++
	ours, ourErr := compileSchema(json.RawMessage(schema))
	theirs, theirErr := oracle(decodeNumbers(t, schema))
	if (ourErr == nil) != (theirErr == nil) {
		t.Fatalf("schema %s\ncompiles: metered %v, library %v", schema, ourErr, theirErr)
	}
	if ourErr != nil {
		if strings.Contains(ourErr.Error(), "snug-meter") {
			t.Fatalf("schema %s: the meter's format leaks into %v", schema, ourErr)
		}
		return
	}
	n.compiled++
	for _, inst := range instances {
		v := decodeNumbers(t, inst)
		if checkNumbers(v) != nil {
			continue
		}
		ourV := ours.Validate(NewMeter(context.Background()), v)
		var ve *ValidationError
		if ourV != nil && (!errors.As(ourV, &ve) || strings.Contains(ve.Message, "snug-meter")) {
			t.Fatalf("schema %s\ninstance %s: %v", schema, inst, ourV)
		}
		theirV := theirs.Validate(decodeNumbers(t, inst))
		if (ourV == nil) != (theirV == nil) {
			t.Fatalf("schema %s\ninstance %s\nvalid: metered %v (%v), library %v (%v)", schema, inst, ourV == nil, ourV, theirV == nil, theirV)
		}
		if ourV == nil {
			n.valid++
		} else {
			n.invalid++
		}
	}
}

// gen makes random schemas over the keywords the validator implements and
// random instances that use the schemas' own names and values.
type gen struct {
	r    *rand.Rand
	d    string // $schema, "" for none
	vals []string
}

var drafts = []string{"", "https://json-schema.org/draft/2020-12/schema", "https://json-schema.org/draft/2019-09/schema",
	"http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema#"}

var formatNames = []string{"date-time", "date", "time", "duration", "email", "hostname", "ipv4", "ipv6", "uri", "uri-reference",
	"uuid", "json-pointer", "relative-json-pointer", "regex", "uri-template", "period", "unknown-format"}

var stringPool = []string{`""`, `"a"`, `"ab"`, `"abc-1234"`, `"ABC"`, `"héllo"`, `"2026-01-02T03:04:05Z"`, `"2026-02-30"`, `"2026-01-02"`,
	`"23:59:60Z"`, `"12:00:00+01:00"`, `"P1D"`, `"PT1H"`, `"P1W"`, `"a@b.co"`, `"not an email"`, `"example.com"`, `"-bad.com"`,
	`"192.168.0.1"`, `"01.2.3.4"`, `"::1"`, `"http://x.y/z?q=1"`, `"/relative"`, `"a\\b"`, `"6ba7b810-9dad-11d1-80b4-00c04fd430c8"`,
	`"/a/b~0"`, `"/a~2"`, `"0#"`, `"1/a"`, `"(a|b)*"`, `"("`, `"aGVsbG8="`, `"eyJhIjoxfQ=="`, `"{\"a\":1}"`, `"2026-01-02T03:04:05Z/P1D"`,
	`"http://{a}/b"`, `"x{y"`}

func (g *gen) pick(list []string) string { return list[g.r.IntN(len(list))] }

func (g *gen) num() string {
	return g.pick([]string{"0", "1", "2", "3", "-1", "1.5", "2.0", "10", "0.1", "1e2", "100", "7"})
}

func (g *gen) smallInt() string { return strconv.Itoa(g.r.IntN(4)) }

func (g *gen) key() string { return g.pick([]string{"a", "b", "c", "d", "x-1", "e/f"}) }

func (g *gen) value(depth int) string {
	switch k := g.r.IntN(9); {
	case k == 0 && depth < 3:
		n := g.r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = g.value(depth + 1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case k == 1 && depth < 3:
		n := g.r.IntN(4)
		seen := map[string]bool{}
		var parts []string
		for range n {
			k := g.key()
			if seen[k] {
				continue
			}
			seen[k] = true
			parts = append(parts, strconv.Quote(k)+":"+g.value(depth+1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	case k == 2:
		return g.num()
	case k == 3:
		return g.pick([]string{"true", "false", "null"})
	case k == 4 && len(g.vals) > 0:
		return g.pick(g.vals)
	default:
		return g.pick(stringPool)
	}
}

// kwGen makes the keywords of one random schema object.
type kwGen struct {
	g     *gen
	depth int
	kv    []string
}

func (k *kwGen) add(key, v string) { k.kv = append(k.kv, strconv.Quote(key)+":"+v) }

func (k *kwGen) sub() string { return k.g.schema(k.depth + 1) }

func (k *kwGen) list() string {
	m := 1 + k.g.r.IntN(3)
	parts := make([]string, m)
	for i := range parts {
		parts[i] = k.sub()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// keyed makes the members of a properties-like map of subschemas (sub
// true) or of a list of names.
func (k *kwGen) keyed(first int, sub bool) []string {
	m := first + k.g.r.IntN(3)
	seen := map[string]bool{}
	var parts []string
	for range m {
		key := k.g.key()
		if !seen[key] {
			seen[key] = true
			if sub {
				parts = append(parts, strconv.Quote(key)+":"+k.sub())
			} else {
				parts = append(parts, strconv.Quote(key))
			}
		}
	}
	return parts
}

func (k *kwGen) props() string { return "{" + strings.Join(k.keyed(1, true), ",") + "}" }
func (k *kwGen) names() string { return "[" + strings.Join(k.keyed(0, false), ",") + "]" }

var types = []string{"string", "number", "integer", "object", "array", "boolean", "null"}

// keywordMakers are the keywords a random schema draws from, each as
// likely as its entries.
func keywordMakers() []func(k *kwGen) {
	return []func(k *kwGen){
		func(k *kwGen) {
			if k.g.r.IntN(3) == 0 {
				k.add("type", `["`+k.g.pick(types)+`","`+k.g.pick(types)+`"]`)
			} else {
				k.add("type", strconv.Quote(k.g.pick(types)))
			}
		},
		func(k *kwGen) {
			if k.g.r.IntN(3) == 0 {
				k.add("type", `["`+k.g.pick(types)+`","`+k.g.pick(types)+`"]`)
			} else {
				k.add("type", strconv.Quote(k.g.pick(types)))
			}
		},
		func(k *kwGen) {
			k.add("enum", "["+k.g.value(1)+","+k.g.value(1)+"]")
		},
		func(k *kwGen) {
			k.add("const", k.g.value(1))
		},
		func(k *kwGen) {
			k.add("properties", k.props())
		},
		func(k *kwGen) {
			k.add("properties", k.props())
		},
		func(k *kwGen) {
			k.add("required", k.names())
		},
		func(k *kwGen) {
			if k.g.r.IntN(2) == 0 {
				k.add("additionalProperties", k.g.pick([]string{"false", "true"}))
			} else {
				k.add("additionalProperties", k.sub())
			}
		},
		func(k *kwGen) {
			k.add("patternProperties", `{"^x":`+k.sub()+`,"b$":`+k.sub()+`}`)
		},
		func(k *kwGen) {
			k.add("propertyNames", k.sub())
		},
		func(k *kwGen) {
			k.add(k.g.pick([]string{"minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength", "minContains", "maxContains"}), k.g.smallInt())
		},
		func(k *kwGen) {
			k.add("items", k.sub())
		},
		func(k *kwGen) {
			k.add("items", k.sub())
		},
		func(k *kwGen) {
			k.add("items", k.list())
		},
		func(k *kwGen) {
			k.add("prefixItems", k.list())
		},
		func(k *kwGen) {
			if k.g.r.IntN(2) == 0 {
				k.add("additionalItems", k.g.pick([]string{"false", "true"}))
			} else {
				k.add("additionalItems", k.sub())
			}
		},
		func(k *kwGen) {
			k.add("contains", k.sub())
		},
		func(k *kwGen) {
			k.add("uniqueItems", k.g.pick([]string{"true", "false"}))
		},
		func(k *kwGen) {
			k.add("pattern", k.g.pick([]string{`"^a"`, `"b$"`, `"^[a-z]{1,3}$"`, `"\\d"`, `"é"`}))
		},
		func(k *kwGen) {
			k.add("format", strconv.Quote(k.g.pick(formatNames)))
		},
		func(k *kwGen) {
			k.add(k.g.pick([]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}), k.g.num())
		},
		func(k *kwGen) {
			k.add("multipleOf", k.g.pick([]string{"1", "2", "0.5", "0.1", "3"}))
		},
		func(k *kwGen) {
			k.add("allOf", k.list())
		},
		func(k *kwGen) {
			k.add("anyOf", k.list())
		},
		func(k *kwGen) {
			k.add("oneOf", k.list())
		},
		func(k *kwGen) {
			k.add("not", k.sub())
		},
		func(k *kwGen) {
			k.add("if", k.sub())
		},
		func(k *kwGen) {
			k.add("then", k.sub())
		},
		func(k *kwGen) {
			k.add("else", k.sub())
		},
		func(k *kwGen) {
			k.add("dependentSchemas", k.props())
		},
		func(k *kwGen) {
			k.add("dependentRequired", `{"`+k.g.key()+`":`+k.names()+`}`)
		},
		func(k *kwGen) {
			if k.g.r.IntN(2) == 0 {
				k.add("dependencies", `{"`+k.g.key()+`":`+k.names()+`}`)
			} else {
				k.add("dependencies", k.props())
			}
		},
		func(k *kwGen) {
			k.add("unevaluatedProperties", k.sub())
		},
		func(k *kwGen) {
			k.add("unevaluatedItems", k.sub())
		},
		func(k *kwGen) {
			k.add("$ref", k.g.pick([]string{`"#/$defs/a"`, `"#/definitions/b"`, `"#"`, `"#/$defs/a"`, `"#/definitions/b"`}))
		},
		func(k *kwGen) {
			k.add("$ref", k.g.pick([]string{`"#/$defs/a"`, `"#/definitions/b"`, `"#"`, `"#/$defs/a"`, `"#/definitions/b"`}))
		},
		func(k *kwGen) {
			k.add("contentEncoding", `"base64"`)
		},
		func(k *kwGen) {
			k.add("contentMediaType", `"application/json"`)
		},
		func(k *kwGen) {
			k.add("contentSchema", k.sub())
		},
		func(k *kwGen) { // invalid values the meta-schema refuses (now and then)
			if k.g.r.IntN(4) != 0 {
				return
			}
			k.add(k.g.pick([]string{"minLength", "maxItems", "minProperties", "multipleOf", "required", "type", "enum", "items", "allOf", "pattern", "format", "uniqueItems", "properties", "exclusiveMinimum"}),
				k.g.pick([]string{"-1", "1.5", "0", `"x"`, "[]", "{}", "[1]", `["a","a"]`, "true", "null", `"strin"`, `["string","string"]`, `"(("`}))
		},
		func(k *kwGen) {
			k.add(k.g.pick([]string{"title", "description", "$comment", "examples", "readOnly", "deprecated", "default"}), k.g.value(1))
		},
		func(k *kwGen) {
			if strings.Contains(k.g.d, "draft-04") {
				k.add("exclusiveMinimum", k.g.pick([]string{"true", "false"}))
				k.add(k.g.pick([]string{"minimum", "maximum"}), k.g.num())
			} else {
				k.add("exclusiveMaximum", k.g.num())
			}
		},
		func(k *kwGen) {
			k.add("maxLength", k.g.pick([]string{"1e3", "2.0", "1e999"}))
		},
		func(k *kwGen) {
			if k.depth > 0 {
				return
			}
			k.add("$id", k.g.pick([]string{`"https://example.com/s"`, `"https://example.com/s#"`, `"https://example.com/s#x"`, `"s.json"`}))
		},
	}
}

// schema makes a random schema object or boolean.
func (g *gen) schema(depth int) string {
	if g.r.IntN(12) == 0 && !strings.Contains(g.d, "draft-04") {
		return g.pick([]string{"true", "false"})
	}
	k := &kwGen{g: g, depth: depth}
	n := 1 + g.r.IntN(4)
	if depth > 2 {
		n = g.r.IntN(2)
	}
	makers := keywordMakers()
	for range n {
		makers[g.r.IntN(len(makers))](k)
	}
	if depth == 0 {
		if g.d != "" {
			k.add("$schema", strconv.Quote(g.d))
		}
		k.add("$defs", `{"a":`+g.schema(1)+`}`)
		k.add("definitions", `{"b":`+g.schema(1)+`}`)
	}
	// the same key twice would make two readings
	seen := map[string]bool{}
	var uniq []string
	for _, p := range k.kv {
		key := p[:strings.Index(p, `":`)+1]
		if !seen[key] {
			seen[key] = true
			uniq = append(uniq, p)
		}
	}
	return "{" + strings.Join(uniq, ",") + "}"
}

// poolFrom collects the schema's names and scalar values as instance
// material.
func poolFrom(doc any, keys, vals map[string]bool) {
	switch d := doc.(type) {
	case map[string]any:
		for k, v := range d {
			keys[k] = true
			poolFrom(v, keys, vals)
		}
	case []any:
		for _, v := range d {
			poolFrom(v, keys, vals)
		}
	case string:
		vals[strconv.Quote(d)] = true
	case json.Number:
		vals[string(d)] = true
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// randomPairs makes n random schemas, each with its instances.
func randomPairs(seed uint64, n int) (schemas []string, instances [][]string) {
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed))}
	for range n {
		g.d = g.pick(drafts)
		g.vals = nil
		s := g.schema(0)
		var doc any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			panic(s + ": " + err.Error())
		}
		keys, vals := map[string]bool{}, map[string]bool{}
		poolFrom(doc, keys, vals)
		g.vals = sortedSet(vals)
		var insts []string
		for range 12 {
			insts = append(insts, g.value(0))
		}
		schemas = append(schemas, s)
		instances = append(instances, insts)
	}
	return schemas, instances
}

// TestMeterKeepsVerdicts: random schemas over every keyword, in every
// draft, each with random instances made of its own names and values: the
// metered schema and the library's compile the same schemas and give every
// instance the same verdict.
func TestMeterKeepsVerdicts(t *testing.T) {
	n := 2500
	if testing.Short() {
		n = 500
	}
	schemas, instances := randomPairs(1, n)
	var c tally
	for i, s := range schemas {
		agree(t, s, instances[i], &c)
	}
	t.Logf("%d random schemas: %d past the walker, %d compiled; %d instances valid, %d invalid", n, c.walked, c.compiled, c.valid, c.invalid)
	if c.compiled < n/2 || c.valid < c.invalid/10 {
		t.Fatalf("the generator covers too little: %+v", c)
	}
}

// testSchemas returns every JSON object literal of the agent's and the
// offline agent's tests that looks like a schema (it has a "type",
// "properties", "$ref" or a combinator).
func testSchemas(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"*_test.go", "offline/*_test.go"} {
		files, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			file, err := parser.ParseFile(token.NewFileSet(), f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(file, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil || !strings.HasPrefix(strings.TrimSpace(s), "{") || !json.Valid([]byte(s)) {
					return true
				}
				for _, k := range []string{`"type"`, `"properties"`, `"$ref"`, `"allOf"`, `"anyOf"`, `"oneOf"`, `"$schema"`, `"enum"`} {
					if strings.Contains(s, k) {
						out = append(out, s)
						break
					}
				}
				return true
			})
		}
	}
	return out
}

// TestMeterKeepsVerdictsOnTestSchemas: every schema written in the
// agent's and the offline agent's tests, against random instances and the
// values the offline agent generates for it.
func TestMeterKeepsVerdictsOnTestSchemas(t *testing.T) {
	schemas := testSchemas(t)
	if len(schemas) < 20 {
		t.Fatalf("found %d schemas in the tests", len(schemas))
	}
	g := &gen{r: rand.New(rand.NewPCG(2, 2))}
	var c tally
	for _, s := range schemas {
		var doc any
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if dec.Decode(&doc) != nil {
			continue
		}
		keys, vals := map[string]bool{}, map[string]bool{}
		poolFrom(doc, keys, vals)
		g.vals = sortedSet(vals)
		var insts []string
		for range 30 {
			insts = append(insts, g.value(0))
		}
		agree(t, s, insts, &c)
	}
	t.Logf("%d schemas from the tests: %+v", len(schemas), c)
}

// FuzzMeterKeepsVerdicts: a schema and an instance, seeded with the
// random pairs and the tests' schemas; the seed corpus runs in go test.
func FuzzMeterKeepsVerdicts(f *testing.F) {
	schemas, instances := randomPairs(7, 150)
	for i, s := range schemas {
		for _, inst := range instances[i][:3] {
			f.Add(s, inst)
		}
	}
	for _, s := range testSchemas(f) {
		f.Add(s, `{"a":1,"title":"x","items":[1,2]}`)
	}
	f.Fuzz(func(t *testing.T, schema, instance string) {
		var v any
		if len(schema) > 4096 || len(instance) > 4096 || json.Unmarshal([]byte(instance), &v) != nil {
			return
		}
		if d := json.NewDecoder(strings.NewReader(schema)); d.Decode(new(any)) != nil || d.More() {
			return
		}
		agree(t, schema, []string{instance}, new(tally))
	})
}

// TestValidationsOfOneSchemaRunAtOnce: a compiled schema is shared (the
// cache hands one to every request) and each validation carries its own
// meter, so validations run side by side with the verdicts they have alone
// (go test -race checks the sharing).
func TestValidationsOfOneSchemaRunAtOnce(t *testing.T) {
	schemas, instances := randomPairs(11, 40)
	for i, s := range schemas {
		sch, err := CompileSchema(json.RawMessage(s))
		if err != nil {
			continue
		}
		want := make([]bool, len(instances[i]))
		values := make([]any, len(instances[i]))
		for j, inst := range instances[i] {
			values[j] = decodeNumbers(t, inst)
			want[j] = sch.Validate(NewMeter(context.Background()), values[j]) == nil
		}
		errs := make(chan error, 8)
		for range 8 {
			go func() {
				for j, v := range values {
					if got := sch.Validate(NewMeter(context.Background()), v) == nil; got != want[j] {
						errs <- fmt.Errorf("schema %s, instance %s: valid %v at once, %v alone", s, instances[i][j], got, want[j])
						return
					}
				}
				errs <- nil
			}()
		}
		for range 8 {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
	}
}

// appSchemas are schemas as apps write them, in each draft, each with
// replies that match and replies that do not.
var appSchemas = []struct {
	schema string
	good   []string
	bad    []string
}{
	{`{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":["title","tags"],"properties":{"title":{"type":"string","minLength":1,"maxLength":80},"tags":{"type":"array","items":{"type":"string","enum":["work","home"]},"uniqueItems":true},"score":{"type":"number","minimum":0,"maximum":10,"exclusiveMaximum":true}},"additionalProperties":false}`,
		[]string{`{"title":"a","tags":[]}`, `{"title":"a","tags":["work","home"],"score":9.5}`},
		[]string{`{"title":"","tags":[]}`, `{"title":"a","tags":["work","work"]}`, `{"title":"a","tags":[],"score":10}`, `{"title":"a","tags":[],"x":1}`}},
	{`{"$schema":"http://json-schema.org/draft-04/schema#","definitions":{"card":{"type":"object","properties":{"front":{"type":"string"},"back":{"type":"string"}},"required":["front","back"],"additionalProperties":false}},"type":"object","properties":{"cards":{"type":"array","items":{"$ref":"#/definitions/card"},"minItems":1}},"required":["cards"]}`,
		[]string{`{"cards":[{"front":"a","back":"b"}]}`},
		[]string{`{"cards":[]}`, `{"cards":[{"front":"a"}]}`, `{"cards":[{"front":"a","back":"b","c":1}]}`}},
	{`{"$schema":"http://json-schema.org/draft-06/schema#","type":"object","properties":{"kind":{"const":"todo"},"due":{"type":"string","format":"date"},"mail":{"type":"string","format":"email"},"list":{"type":"array","contains":{"type":"integer"}}},"propertyNames":{"pattern":"^[a-z]+$"}}`,
		[]string{`{"kind":"todo","due":"2026-12-01","mail":"a@b.co","list":[1.0,"x"]}`},
		[]string{`{"kind":"done"}`, `{"due":"2026-13-01"}`, `{"mail":"nope"}`, `{"list":["x"]}`, `{"Kind":"todo"}`}},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"unit":{"enum":["c","f"]},"value":{"type":"number"}},"if":{"properties":{"unit":{"const":"c"}}},"then":{"properties":{"value":{"minimum":-273.15}}},"else":{"properties":{"value":{"minimum":-459.67}}},"required":["unit","value"]}`,
		[]string{`{"unit":"c","value":-273.15}`, `{"unit":"f","value":-400}`},
		[]string{`{"unit":"c","value":-300}`, `{"unit":"f","value":-460}`, `{"unit":"k","value":1}`}},
	{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"when":{"type":"string","format":"date-time"},"site":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"},"ip":{"type":"string","format":"ipv4"},"blob":{"type":"string","contentEncoding":"base64","contentMediaType":"application/json"}},"dependencies":{"site":["when"]}}`,
		[]string{`{"when":"2026-12-01T10:00:00Z","site":"https://example.com/a","id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","ip":"10.0.0.1","blob":"eyJhIjoxfQ=="}`},
		[]string{`{"when":"yesterday"}`, `{"site":"/relative","when":"2026-12-01T10:00:00Z"}`, `{"site":"https://example.com"}`, `{"ip":"256.0.0.1"}`, `{"blob":"not base64!"}`, `{"blob":"bm90IGpzb24="}`}},
	{`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"object","properties":{"a":{"type":"string"}},"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"properties":{"b":{"type":"integer"}}}},"unevaluatedProperties":false}`,
		[]string{`{"a":"x","b":1}`, `{}`},
		[]string{`{"a":"x"}`, `{"b":"x"}`, `{"c":1}`}},
	{`{"$schema":"https://json-schema.org/draft/2019-09/schema","type":"array","items":[{"type":"string"},{"type":"integer"}],"additionalItems":false,"minContains":1,"contains":{"type":"string"}}`,
		[]string{`["a",1]`, `["a"]`},
		[]string{`[1]`, `["a",1,2]`, `["a","b"]`}},
	{`{"type":"object","$defs":{"step":{"type":"object","properties":{"text":{"type":"string"},"done":{"type":"boolean"}},"required":["text"]}},"properties":{"steps":{"type":"array","items":{"$ref":"#/$defs/step"},"maxItems":2},"total":{"type":"integer","multipleOf":5}},"required":["steps"],"additionalProperties":false}`,
		[]string{`{"steps":[{"text":"a","done":true}],"total":10}`, `{"steps":[],"total":1e1}`},
		[]string{`{"steps":[{"done":true}]}`, `{"steps":[{"text":"a"},{"text":"b"},{"text":"c"}]}`, `{"steps":[],"total":7}`, `{"steps":[],"x":1}`}},
	{`{"type":"object","properties":{"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false},"extra":{"type":"object","patternProperties":{"^x-":{"type":"string"}},"unevaluatedProperties":false}},"allOf":[{"properties":{"more":true}}],"unevaluatedProperties":false}`,
		[]string{`{"pair":["a",1],"extra":{"x-a":"b"},"more":null}`},
		[]string{`{"pair":["a",1,2]}`, `{"extra":{"y":"b"}}`, `{"other":1}`}},
	{`{"type":"object","properties":{"answer":{"oneOf":[{"type":"string","maxLength":3},{"type":"integer","exclusiveMinimum":0}]},"note":{"anyOf":[{"type":"null"},{"type":"string","pattern":"^[A-Z]"}]},"n":{"not":{"type":"string"}}}}`,
		[]string{`{"answer":"abc","note":null,"n":1}`, `{"answer":3,"note":"Hi"}`},
		[]string{`{"answer":"abcd"}`, `{"answer":0}`, `{"note":"hi"}`, `{"n":"s"}`}},
}

// TestAppSchemasVerdicts: schemas as apps write them, with replies that
// match and replies that do not: the metered schema agrees with the
// library, and its verdict is the one each reply was written for, with a
// reason.
func TestAppSchemasVerdicts(t *testing.T) {
	var c tally
	for _, a := range appSchemas {
		agree(t, a.schema, append(append([]string{}, a.good...), a.bad...), &c)
		sch, err := CompileSchema(json.RawMessage(a.schema))
		if err != nil {
			t.Fatalf("%s: %v", a.schema, err)
		}
		for _, g := range a.good {
			if err := sch.Validate(NewMeter(context.Background()), decodeNumbers(t, g)); err != nil {
				t.Errorf("%s\n%s: %v", a.schema, g, err)
			}
		}
		for _, b := range a.bad {
			err := sch.Validate(NewMeter(context.Background()), decodeNumbers(t, b))
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Message == "" {
				t.Errorf("%s\n%s: %v, want a ValidationError", a.schema, b, err)
			}
		}
	}
}

// TestMeterKeepsVerdictsOnEdges: references with escaped and
// percent-encoded pointers and to the root, a draft-04 id, $schema's other
// spellings, $vocabulary (meaningful in a meta-schema only: an app's schema
// naming an unknown one compiles; draft-03 does not), $ref's siblings before and after 2019-09, content
// in draft-07 and 2019-09, uniqueItems past 20 items (hashed, not paired).
func TestMeterKeepsVerdictsOnEdges(t *testing.T) {
	var c tally
	for _, s := range []string{
		`{"$defs":{"a b":{"type":"string"},"c/d":{"type":"integer"},"e~f":{"minimum":3}},"properties":{"x":{"$ref":"#/$defs/a%20b"},"y":{"$ref":"#/$defs/c~1d"},"z":{"$ref":"#/$defs/e~0f"}}}`,
		`{"properties":{"child":{"$ref":"#"},"n":{"type":"integer"}},"additionalProperties":false}`,
		`{"$schema":"http://json-schema.org/draft-04/schema#","id":"http://example.com/root.json","properties":{"a":{"$ref":"#/definitions/x"}},"definitions":{"x":{"type":"string","maxLength":2}}}`,
		`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"d":{"format":"date"}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"https://json-schema.org/draft/2020-12/vocab/core":true,"https://example.com/vocab":false},"type":"object"}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","$vocabulary":{"https://example.com/vocab":true},"type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-03/schema#","type":"object"}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"$ref":"#/definitions/x","type":"integer"}},"definitions":{"x":{"type":"string"}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"$ref":"#/$defs/x","type":"integer"}},"$defs":{"x":{"type":"string"}}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"contentMediaType":"application/json","contentSchema":{"type":"object","required":["k"]}}}}`,
		`{"$schema":"https://json-schema.org/draft/2019-09/schema","properties":{"a":{"contentMediaType":"application/json","contentSchema":{"type":"object","required":["k"]}}}}`,
		`{"type":"array","uniqueItems":true,"maxItems":100}`,
	} {
		agree(t, s, []string{`{"x":"ab","y":1,"z":5}`, `{"x":1}`, `{"y":"s"}`, `{"z":1}`, `{"child":{"n":1}}`, `{"child":{"n":"x"}}`, `{"a":"abc"}`, `{"a":"ab"}`, `{"a":1}`, `{"d":"2026-02-30"}`,
			`{"a":"{\"k\":1}"}`, `{"a":"{}"}`, `{"a":"nope"}`, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,1.0]`,
			`[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,{"a":[1]},{"a":[1.0]}]`, `[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23]`}, &c)
	}
	if c.compiled != 11 || c.valid == 0 || c.invalid == 0 {
		t.Fatalf("covered %+v", c)
	}
}
