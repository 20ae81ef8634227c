package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v5"
)

// The host's validator is held to santhosh-tekuri/jsonschema/v5, the
// independent oracle (linked into tests only): for every schema the
// walker accepts, both compile it or both refuse it, and for every
// instance both give the same verdict. Formats are asserted as the host
// asserts them: by drafts before 2019-09 only, "regex" within the pattern
// bounds (checkPattern).

// oracle compiles a schema the walker accepted with v5. v5 panics on some
// schemas its meta-schema check lets through (a "minLength" that is not a
// number below "$defs" in 2020-12, say): that is a refusal here (the host
// refuses them with a message).
func oracle(doc any) (sch *jsonschema.Schema, err error) {
	defer func() {
		if r := recover(); r != nil {
			sch, err = nil, fmt.Errorf("v5 panics: %v", r)
		}
	}()
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	// As the host asserted formats through v5: in drafts before 2019-09
	// only (v5 also asserts them in a schema without $schema), "regex"
	// within the pattern bounds.
	old := false
	if m, ok := doc.(map[string]any); ok {
		s, _ := m["$schema"].(string)
		old = strings.Contains(s, "draft-04") || strings.Contains(s, "draft-06") || strings.Contains(s, "draft-07")
	}
	for name := range jsonschema.Formats {
		if !old {
			c.Formats[name] = func(any) bool { return true }
		}
	}
	if old {
		c.Formats["regex"] = func(v any) bool {
			s, ok := v.(string)
			return !ok || checkPattern(s) == nil
		}
	}
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("refusing to load %q", u)
	}
	if err := c.AddResource("snug:///response-schema.json", bytes.NewReader(raw)); err != nil {
		return nil, err
	}
	return c.Compile("snug:///response-schema.json")
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

// agree compares the two validators on one schema and its instances.
func agree(t testing.TB, schema string, instances []string, n *tally) {
	t.Helper()
	doc, w, err := walkSchema(json.RawMessage(schema))
	if err != nil {
		return
	}
	n.walked++
	ours, ourErr := compileWalked(doc, w)
	theirs, theirErr := oracle(doc)
	if ourErr != nil && theirErr == nil && strings.Contains(ourErr.Error(), "infinite loop") {
		// v5 finds a loop of references only when it meets it in a
		// favourable order, which depends on Go's map order: it finds it
		// in one of a few tries. The host refuses it every time.
		for range 50 {
			if _, theirErr = oracle(doc); theirErr != nil {
				break
			}
		}
	}
	if (ourErr == nil) != (theirErr == nil) {
		t.Fatalf("schema %s\ncompiles: ours %v, v5 %v", schema, ourErr, theirErr)
	}
	if ourErr != nil {
		return
	}
	n.compiled++
	for _, inst := range instances {
		v := decodeNumbers(t, inst)
		if checkNumbers(v, 0) != nil {
			continue
		}
		ourV := ours.Validate(NewMeter(context.Background()), v)
		var ve *ValidationError
		if ourV != nil && !errors.As(ourV, &ve) {
			t.Fatalf("schema %s\ninstance %s: %v", schema, inst, ourV)
		}
		theirV := theirs.Validate(decodeNumbers(t, inst))
		if (ourV == nil) != (theirV == nil) {
			t.Fatalf("schema %s\ninstance %s\nvalid: ours %v (%v), v5 %v (%v)", schema, inst, ourV == nil, ourV, theirV == nil, theirV)
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

// schema makes a random schema object or boolean.
func (g *gen) schema(depth int) string {
	if g.r.IntN(12) == 0 && !strings.Contains(g.d, "draft-04") {
		return g.pick([]string{"true", "false"})
	}
	var kv []string
	add := func(k, v string) { kv = append(kv, strconv.Quote(k)+":"+v) }
	n := 1 + g.r.IntN(4)
	if depth > 2 {
		n = g.r.IntN(2)
	}
	types := []string{"string", "number", "integer", "object", "array", "boolean", "null"}
	for range n {
		sub := func() string { return g.schema(depth + 1) }
		list := func() string {
			m := 1 + g.r.IntN(3)
			parts := make([]string, m)
			for i := range parts {
				parts[i] = sub()
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		props := func() string {
			m := 1 + g.r.IntN(3)
			seen := map[string]bool{}
			var parts []string
			for range m {
				k := g.key()
				if !seen[k] {
					seen[k] = true
					parts = append(parts, strconv.Quote(k)+":"+sub())
				}
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
		names := func() string {
			m := g.r.IntN(3)
			seen := map[string]bool{}
			var parts []string
			for range m {
				k := g.key()
				if !seen[k] {
					seen[k] = true
					parts = append(parts, strconv.Quote(k))
				}
			}
			return "[" + strings.Join(parts, ",") + "]"
		}
		switch g.r.IntN(44) {
		case 0, 1:
			if g.r.IntN(3) == 0 {
				add("type", `["`+g.pick(types)+`","`+g.pick(types)+`"]`)
			} else {
				add("type", strconv.Quote(g.pick(types)))
			}
		case 2:
			add("enum", "["+g.value(1)+","+g.value(1)+"]")
		case 3:
			add("const", g.value(1))
		case 4, 5:
			add("properties", props())
		case 6:
			add("required", names())
		case 7:
			if g.r.IntN(2) == 0 {
				add("additionalProperties", g.pick([]string{"false", "true"}))
			} else {
				add("additionalProperties", sub())
			}
		case 8:
			add("patternProperties", `{"^x":`+sub()+`,"b$":`+sub()+`}`)
		case 9:
			add("propertyNames", sub())
		case 10:
			add(g.pick([]string{"minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength", "minContains", "maxContains"}), g.smallInt())
		case 11, 12:
			add("items", sub())
		case 13:
			add("items", list())
		case 14:
			add("prefixItems", list())
		case 15:
			if g.r.IntN(2) == 0 {
				add("additionalItems", g.pick([]string{"false", "true"}))
			} else {
				add("additionalItems", sub())
			}
		case 16:
			add("contains", sub())
		case 17:
			add("uniqueItems", g.pick([]string{"true", "false"}))
		case 18:
			add("pattern", g.pick([]string{`"^a"`, `"b$"`, `"^[a-z]{1,3}$"`, `"\\d"`, `"é"`}))
		case 19:
			add("format", strconv.Quote(g.pick(formatNames)))
		case 20:
			add(g.pick([]string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}), g.num())
		case 21:
			add("multipleOf", g.pick([]string{"1", "2", "0.5", "0.1", "3"}))
		case 22:
			add("allOf", list())
		case 23:
			add("anyOf", list())
		case 24:
			add("oneOf", list())
		case 25:
			add("not", sub())
		case 26:
			add("if", sub())
		case 27:
			add("then", sub())
		case 28:
			add("else", sub())
		case 29:
			add("dependentSchemas", props())
		case 30:
			add("dependentRequired", `{"`+g.key()+`":`+names()+`}`)
		case 31:
			if g.r.IntN(2) == 0 {
				add("dependencies", `{"`+g.key()+`":`+names()+`}`)
			} else {
				add("dependencies", props())
			}
		case 32:
			add("unevaluatedProperties", sub())
		case 33:
			add("unevaluatedItems", sub())
		case 34, 35:
			add("$ref", g.pick([]string{`"#/$defs/a"`, `"#/definitions/b"`, `"#"`, `"#/$defs/a"`, `"#/definitions/b"`}))
		case 36:
			add("contentEncoding", `"base64"`)
		case 37:
			add("contentMediaType", `"application/json"`)
		case 38:
			add("contentSchema", sub())
		case 39: // invalid values the meta-schema refuses (now and then)
			if g.r.IntN(4) != 0 {
				continue
			}
			add(g.pick([]string{"minLength", "maxItems", "minProperties", "multipleOf", "required", "type", "enum", "items", "allOf", "pattern", "format", "uniqueItems", "properties", "exclusiveMinimum"}),
				g.pick([]string{"-1", "1.5", "0", `"x"`, "[]", "{}", "[1]", `["a","a"]`, "true", "null", `"strin"`, `["string","string"]`, `"(("`}))
		case 40:
			add(g.pick([]string{"title", "description", "$comment", "examples", "readOnly", "deprecated", "default"}), g.value(1))
		case 41:
			if strings.Contains(g.d, "draft-04") {
				add("exclusiveMinimum", g.pick([]string{"true", "false"}))
				add(g.pick([]string{"minimum", "maximum"}), g.num())
			} else {
				add("exclusiveMaximum", g.num())
			}
		case 42:
			add("maxLength", g.pick([]string{"1e3", "2.0", "1e999"}))
		case 43:
			if depth > 0 {
				continue
			}
			add("$id", g.pick([]string{`"https://example.com/s"`, `"https://example.com/s#"`, `"https://example.com/s#x"`, `"s.json"`}))
		}
	}
	if depth == 0 {
		if g.d != "" {
			add("$schema", strconv.Quote(g.d))
		}
		add("$defs", `{"a":`+g.schema(1)+`}`)
		add("definitions", `{"b":`+g.schema(1)+`}`)
	}
	// the same key twice would make two readings
	seen := map[string]bool{}
	var uniq []string
	for _, p := range kv {
		k := p[:strings.Index(p, `":`)+1]
		if !seen[k] {
			seen[k] = true
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

// TestValidatorAgreesWithV5: random schemas over every keyword the
// validator implements, in every draft, each with random instances made of
// its own names and values: v5 and the host's validator compile the same
// schemas and give every instance the same verdict.
func TestValidatorAgreesWithV5(t *testing.T) {
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

// TestValidatorAgreesWithV5OnTestSchemas: every schema written in the
// agent's and the offline agent's tests, against random instances and the
// values the offline agent generates for it.
func TestValidatorAgreesWithV5OnTestSchemas(t *testing.T) {
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

// TestFormatsAgreeWithV5: each format the host asserts gives v5's verdict
// on valid values, their mutations and the pool of test strings.
func TestFormatsAgreeWithV5(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	samples := []string{"2026-01-02T03:04:05Z", "2026-01-02t03:04:05.123+05:30", "1990-12-31T23:59:60Z", "1990-12-31T15:59:60-08:00",
		"2026-01-02", "03:04:05Z", "23:59:60+00:00", "P1Y2M3DT4H5M6S", "P4W", "PT0.5S", "P1DT", "example.com", "a-b.c-d.e",
		"joe@example.com", "\"joe x\"@example.com", "joe@[127.0.0.1]", "joe@[IPv6:::1]", "10.0.0.255", "::ffff:1.2.3.4", "fe80::1%eth0",
		"http://user@[::1]:80/p?q#f", "urn:isbn:123", "//host/path", "../a/b", "http://x/{a}/{b}", "/a/b/~0~1", "2/a", "0#",
		"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "2026-01-02T03:04:05Z/2026-02-02T03:04:05Z", "P1D/2026-01-02T03:04:05Z",
		"1.2.3", "http://[1::2", "a\\b", "x y"}
	const alphabet = "0123456789-:T.Z+@[]/{}~#%aP"
	mutate := func(s string) string {
		b := []byte(s)
		switch r.IntN(3) {
		case 0:
			if len(b) > 0 {
				b = append(b[:r.IntN(len(b))], b[r.IntN(len(b))+0:]...)
			}
		case 1:
			if len(b) > 0 {
				b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
			}
		default:
			i := r.IntN(len(b) + 1)
			b = append(b[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, b[i:]...)...)
		}
		return string(b)
	}
	for _, name := range formatNames {
		if name == "regex" || name == "unknown-format" {
			continue
		}
		ours, theirs := formatChecker(name), jsonschema.Formats[name]
		for _, s := range samples {
			for i := range 200 {
				v := s
				for range i % 4 {
					v = mutate(v)
				}
				if ours(v) != theirs(v) {
					t.Errorf("format %s on %q: ours %v, v5 %v", name, v, ours(v), theirs(v))
				}
			}
		}
	}
}

// FuzzValidatorAgreesWithV5: a schema and an instance, seeded with the
// random pairs and the tests' schemas; the seed corpus runs in go test.
func FuzzValidatorAgreesWithV5(f *testing.F) {
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

// TestValidatorAgreesWithV5OnAppSchemas: schemas as apps write them, with
// replies that match and replies that do not: both validators agree, and
// the host's verdict is the one each reply was written for.
func TestValidatorAgreesWithV5OnAppSchemas(t *testing.T) {
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

// TestValidatorAgreesWithV5OnEdges: references with escaped and
// percent-encoded pointers and to the root, a draft-04 id, $schema's other
// spellings, $vocabulary, $ref's siblings before and after 2019-09, content
// in draft-07 and 2019-09, uniqueItems past 20 items (hashed, not paired).
func TestValidatorAgreesWithV5OnEdges(t *testing.T) {
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
	if c.compiled != 10 || c.valid == 0 || c.invalid == 0 {
		t.Fatalf("covered %+v", c)
	}
}
