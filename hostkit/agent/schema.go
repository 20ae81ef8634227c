package agent

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// Limits on a responseSchema, checked before it is compiled. An app's
// schema is the app's input: unchecked, 20,000 empty subschemas took 6 s to
// compile, and a few kilobytes of references or one pattern can make checking
// a reply take hours. Real response schemas are a few kilobytes with tens of
// subschemas; these leave ample room above that.
const (
	// MaxSchemaBytes bounds the schema's JSON text.
	MaxSchemaBytes = 64 << 10
	// MaxSchemaDepth bounds how deeply the schema's JSON nests.
	MaxSchemaDepth = 64
	// MaxSubschemas bounds the schema objects and booleans in it.
	MaxSubschemas = 1000
	// MaxSchemaValues bounds every JSON value in it (enum members
	// included).
	MaxSchemaValues = 20000
	// MaxPatternBytes bounds one pattern (pattern, a patternProperties
	// name).
	MaxPatternBytes = 1000
	// MaxPatternSize bounds one pattern's compiled size, counted as the
	// instructions of its program with repetitions expanded: matching costs
	// this much per byte of text at worst. "^[a-z]{1,64}$" is about 70.
	MaxPatternSize = 1000
	// maxNumberText and maxExponent bound a number's text and exponent, in
	// the schema and in a reply checked against one: the validator turns
	// numbers into exact rationals, and 1e1000000 alone takes 0.1 s.
	maxNumberText = 100
	maxExponent   = 1000
)

// Bounds on checking one reply against its schema (MaxValidationCost units,
// MaxValidationTime of the clock, whichever comes first). A unit is about one
// byte of text matched against one instruction of a pattern's program, some
// 10 to 30 ns; every other step of the validator is counted in the same
// units before it runs (see nodeCost.of). A schema whose references or
// combinators multiply the work by the reply's depth is stopped here rather
// than at compile time.
const (
	MaxValidationCost = 30_000_000
	MaxValidationTime = time.Second
)

// ErrValidationBudget is the end of a Meter's budget: the reply could not
// be checked against its schema within the host's bounds.
var ErrValidationBudget = errors.New("finding and checking the reply's object takes more work than the host allows")

// Meter bounds the work of the validations (and reply candidates) it is
// given: one per request, shared by everything done for it.
type Meter struct {
	ctx      context.Context
	left     int64
	deadline time.Time
	calls    int
	// sizes holds the size of each array of the value being validated, for
	// uniqueItems (hashing and comparing items costs their whole size).
	sizes map[unsafe.Pointer]int64
}

// NewMeter returns a Meter with MaxValidationCost and MaxValidationTime
// that also stops when ctx ends.
func NewMeter(ctx context.Context) *Meter {
	return &Meter{ctx: ctx, left: MaxValidationCost, deadline: time.Now().Add(MaxValidationTime)}
}

// meterStop is the panic that ends a validation from inside the validator;
// Schema.Validate recovers it.
type meterStop struct{ err error }

// charge counts units of work about to be done, and stops the work (by
// panicking with meterStop) when the budget, the time or the context is
// spent.
func (m *Meter) charge(units int64) {
	m.left -= units
	if m.left < 0 {
		panic(meterStop{ErrValidationBudget})
	}
	m.calls++
	if m.calls%64 == 0 {
		if err := m.ctx.Err(); err != nil {
			panic(meterStop{context.Cause(m.ctx)})
		}
		if time.Now().After(m.deadline) {
			panic(meterStop{ErrValidationBudget})
		}
	}
}

// Charge counts units of work done outside a validation (decoding reply
// candidates) and reports whether the budget allows going on.
func (m *Meter) Charge(units int64) error {
	var err error
	func() {
		defer func() {
			if v := recover(); v != nil {
				ms, ok := v.(meterStop)
				if !ok {
					panic(v)
				}
				err = ms.err
			}
		}()
		m.charge(units)
	}()
	return err
}

// Schema is a compiled responseSchema whose validations are metered (each
// by its own Meter; validations may run at once).
type Schema struct {
	root      *snode
	track     bool // some subschema has unevaluatedProperties or unevaluatedItems
	hasUnique bool
}

// SchemaError means a responseSchema is not a usable JSON Schema: it does
// not compile, refers to anything outside itself, or passes the limits above.
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return "responseSchema: " + e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }

// maxCachedSchemas bounds the compiled-schema cache (least recently used
// out).
const maxCachedSchemas = 256

var schemaCache = struct {
	sync.Mutex
	order *list.List // of cacheEntry, most recent first
	byKey map[[32]byte]*list.Element
}{order: list.New(), byKey: map[[32]byte]*list.Element{}}

type cacheEntry struct {
	key [32]byte
	s   *Schema
}

// CompileSchema checks a responseSchema against the limits above and its
// draft's meta-schema, then compiles it for the host's own validator
// (validate.go), whose verdicts are santhosh-tekuri/jsonschema/v5's. A $ref must be a JSON
// pointer into the schema itself ("#/$defs/item"): nothing outside it is
// loaded (an app's schema must not make the host read files or fetch URLs),
// and $id below the root, anchors and dynamic references are refused.
// Compiled schemas are cached by content.
func CompileSchema(schema json.RawMessage) (*Schema, error) {
	key := sha256.Sum256(schema)
	schemaCache.Lock()
	if e, ok := schemaCache.byKey[key]; ok {
		schemaCache.order.MoveToFront(e)
		s := e.Value.(cacheEntry).s
		schemaCache.Unlock()
		return s, nil
	}
	schemaCache.Unlock()

	s, err := compileSchema(schema)
	if err != nil {
		return nil, &SchemaError{Err: err}
	}
	schemaCache.Lock()
	defer schemaCache.Unlock()
	if e, ok := schemaCache.byKey[key]; ok { // compiled meanwhile by another request
		return e.Value.(cacheEntry).s, nil
	}
	schemaCache.byKey[key] = schemaCache.order.PushFront(cacheEntry{key, s})
	if schemaCache.order.Len() > maxCachedSchemas {
		last := schemaCache.order.Back()
		schemaCache.order.Remove(last)
		delete(schemaCache.byKey, last.Value.(cacheEntry).key)
	}
	return s, nil
}

func compileSchema(raw json.RawMessage) (*Schema, error) {
	doc, w, err := walkSchema(raw)
	if err != nil {
		return nil, err
	}
	return compileWalked(doc, w)
}

// walkSchema decodes a responseSchema and checks it against the host's
// limits and reference rules (not yet against its draft's meta-schema).
func walkSchema(raw json.RawMessage) (any, *walker, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, nil, fmt.Errorf("the schema is %d bytes; the host accepts at most %d", len(raw), MaxSchemaBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("not one JSON value")
	}
	w := &walker{byPtr: map[string]int{}}
	if err := w.values(doc, 0); err != nil {
		return nil, nil, err
	}
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m["$schema"].(string); ok {
			w.draft = v
		}
	}
	if err := w.schema(doc, "", true); err != nil {
		return nil, nil, err
	}
	for _, r := range w.refs {
		if err := w.checkRef(r); err != nil {
			return nil, nil, err
		}
	}
	return doc, w, nil
}

// compileWalked compiles a schema walkSchema accepted.
func compileWalked(doc any, w *walker) (*Schema, error) {
	d := draft(2020)
	if m, ok := doc.(map[string]any); ok {
		if v, ok := m["$schema"]; ok {
			sv, _ := v.(string)
			if d, ok = draftOf(sv); !ok {
				return nil, fmt.Errorf("$schema %q: the host knows drafts 2020-12, 2019-09, 07, 06 and 04 (\"https://json-schema.org/draft/2020-12/schema\")", sv)
			}
		}
	}
	if err := metaCheck(doc, d, ""); err != nil {
		return nil, err
	}
	if m, ok := doc.(map[string]any); ok && d >= 2019 {
		if err := checkVocabulary(m, d); err != nil {
			return nil, err
		}
	}
	c := &compiler{d: d, root: doc, assertFm: d < 2019, byPtr: map[string]*snode{}, metaDone: map[string]bool{}}
	c.standard(doc, "")
	root, err := c.node("")
	if err != nil {
		return nil, err
	}
	if err := c.checkLoops(root); err != nil {
		return nil, err
	}
	s := &Schema{root: root, track: c.track}
	for i, n := range w.nodes {
		if cn := c.byPtr[w.ptrs[i]]; cn != nil {
			cn.cost = n.cost
		}
		if n.cost.unique {
			s.hasUnique = true
		}
	}
	return s, nil
}

// checkVocabulary refuses a $vocabulary that requires a vocabulary the
// draft does not have.
func checkVocabulary(m map[string]any, d draft) error {
	vocab, ok := m["$vocabulary"].(map[string]any)
	if !ok {
		return nil
	}
	base := "https://json-schema.org/draft/2020-12/vocab/"
	names := []string{"core", "applicator", "unevaluated", "validation", "meta-data", "format-annotation", "format-assertion", "content"}
	if d == 2019 {
		base = "https://json-schema.org/draft/2019-09/vocab/"
		names = []string{"core", "applicator", "validation", "meta-data", "format", "content"}
	}
	for _, u := range sortedKeys(vocab) {
		if req, _ := vocab[u].(bool); !req {
			continue
		}
		name, ok := strings.CutPrefix(u, base)
		if !ok || !slices.Contains(names, name) {
			return fmt.Errorf("$vocabulary: the host does not know the vocabulary %q", u)
		}
	}
	return nil
}

// Validate checks v (decoded with UseNumber) against s within m's budget.
// A reply that does not match is a *ValidationError; a budget or context
// that runs out is an error wrapping ErrValidationBudget or the context's
// cause; a number beyond the bounds the validator handles cheaply is
// refused (*NumberError) before validating.
func (s *Schema) Validate(m *Meter, v any) (err error) {
	if err := checkNumbers(v, 0); err != nil {
		return err
	}
	if err := m.ctx.Err(); err != nil {
		return context.Cause(m.ctx)
	}
	m.sizes = nil
	if s.hasUnique {
		m.sizes = map[unsafe.Pointer]int64{}
		arraySizes(v, m.sizes)
	}
	defer func() {
		if r := recover(); r != nil {
			ms, ok := r.(meterStop)
			if !ok {
				panic(r)
			}
			err = ms.err
		}
	}()
	x := &validation{s: s, m: m, track: s.track}
	if _, verr := x.apply(s.root, v, ""); verr != nil {
		return verr
	}
	return nil
}

// nodeCost is what one schema object's own checks cost, per value.
type nodeCost struct {
	patternSize int   // pattern's program size, 0 without one
	ppSize      int   // the patternProperties programs' sizes, summed
	fixed       int64 // enum and const: comparing a value costs up to their size
	unique      bool  // uniqueItems: hashing every item of an array
	content     bool  // contentEncoding/contentMediaType: decoding a string
	format      string
}

// Units per step of the validator besides pattern matching (measured on the
// exponential-reference schemas of the tests: a step costs about a
// microsecond).
const (
	unitsPerApply = 48 // one schema object applied to one value
	unitsPerEntry = 4  // one member or item of that value (the validator maps them all)
)

func (c nodeCost) of(v any, m *Meter) int64 {
	u := int64(unitsPerApply) + c.fixed
	switch v := v.(type) {
	case map[string]any:
		u += unitsPerEntry * int64(len(v))
		if c.ppSize > 0 {
			for k := range v {
				u += int64(len(k)+1) * int64(c.ppSize)
			}
		}
	case []any:
		u += unitsPerEntry * int64(len(v))
		if c.unique && len(v) > 1 {
			size := m.sizes[unsafe.Pointer(unsafe.SliceData(v))]
			if len(v) <= 20 {
				size *= int64(len(v)) // pairwise comparison for short arrays
			}
			u += size
		}
	case string:
		if c.patternSize > 0 {
			u += int64(len(v)+1) * int64(c.patternSize)
		}
		if c.content || c.format != "" {
			u += int64(len(v))
		}
	}
	return u
}

// arraySizes records the size (in bytes of JSON, roughly) of every array
// in v, keyed by its first element's address.
func arraySizes(v any, sizes map[unsafe.Pointer]int64) int64 {
	switch v := v.(type) {
	case map[string]any:
		n := int64(2)
		for k, x := range v {
			n += int64(len(k)) + 4 + arraySizes(x, sizes)
		}
		return n
	case []any:
		n := int64(2)
		for _, x := range v {
			n += 1 + arraySizes(x, sizes)
		}
		if len(v) > 0 {
			sizes[unsafe.Pointer(unsafe.SliceData(v))] = n
		}
		return n
	case string:
		return int64(len(v)) + 2
	case json.Number:
		return int64(len(v))
	}
	return 4
}

// checkNumbers refuses numbers the validator cannot handle cheaply (it
// makes an exact rational of each: 1e1000000 takes a tenth of a second).
func checkNumbers(v any, _ int) error {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if err := checkNumbers(x, 0); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkNumbers(x, 0); err != nil {
				return err
			}
		}
	case json.Number:
		return checkNumber(string(v))
	}
	return nil
}

// NumberError is a number the host does not check against a schema: its
// text is longer than 100 characters or its exponent beyond ±1000.
type NumberError struct{ Text string }

func (e *NumberError) Error() string {
	return fmt.Sprintf("the number %.24s is beyond what the host checks (at most %d characters, exponent within ±%d)",
		e.Text, maxNumberText, maxExponent)
}

func checkNumber(text string) error {
	if len(text) > maxNumberText {
		return &NumberError{text}
	}
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
		if err != nil || exp > maxExponent || exp < -maxExponent {
			return &NumberError{text}
		}
	}
	return nil
}

// checkPattern parses a pattern as the validator will (Go's RE2 syntax) and
// bounds its size.
func checkPattern(p string) error {
	if len(p) > MaxPatternBytes {
		return fmt.Errorf("the pattern %.40q… is %d bytes; the host accepts at most %d", p, len(p), MaxPatternBytes)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return fmt.Errorf("the pattern %.60q is not a valid regular expression: %v", p, err)
	}
	if n := progSize(re); n > MaxPatternSize {
		return fmt.Errorf("the pattern %.60q expands to about %d instructions (repetitions counted out); the host accepts at most %d", p, n, MaxPatternSize)
	}
	return nil
}

// progSize estimates the size of re's compiled program, repetitions
// expanded as the compiler expands them, without compiling it (compiling
// "a{1000}" a hundred times over takes seconds). It saturates well above
// MaxPatternSize.
func progSize(re *syntax.Regexp) int {
	const ceiling = 1 << 30
	sat := func(n int) int { return min(n, ceiling) }
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass:
		return 1 + len(re.Rune)/16
	case syntax.OpCapture, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return sat(1 + progSize(re.Sub[0]))
	case syntax.OpRepeat:
		n := re.Max
		if n < 0 {
			n = re.Min + 1
		}
		return sat((n + 1) * (1 + progSize(re.Sub[0])))
	case syntax.OpConcat, syntax.OpAlternate:
		n := len(re.Sub)
		for _, sub := range re.Sub {
			n = sat(n + progSize(sub))
		}
		return n
	}
	return 1
}

// walker checks a schema document and finds its schema objects.
type walker struct {
	draft string
	nodes []node
	ptrs  []string       // each node's JSON pointer
	byPtr map[string]int // JSON pointer of each schema position → index in nodes (-1 for a boolean)
	refs  []ref
	count int // JSON values seen
}

type node struct {
	m    map[string]any
	cost nodeCost
}

type ref struct{ at, target string }

// values bounds the document as JSON: depth, count, numbers.
func (w *walker) values(v any, depth int) error {
	if depth > MaxSchemaDepth {
		return fmt.Errorf("the schema nests deeper than %d levels", MaxSchemaDepth)
	}
	w.count++
	if w.count > MaxSchemaValues {
		return fmt.Errorf("the schema holds more than %d JSON values", MaxSchemaValues)
	}
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if err := w.values(x, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := w.values(x, depth+1); err != nil {
				return err
			}
		}
	case json.Number:
		if err := checkNumber(string(v)); err != nil {
			return err
		}
	}
	return nil
}

// Keywords whose value is a schema, a list of schemas, or a map of them,
// in every draft the validator knows (a keyword a draft does not have is
// checked all the same).
var (
	schemaKeywords = []string{"not", "if", "then", "else", "additionalProperties", "additionalItems",
		"unevaluatedProperties", "unevaluatedItems", "propertyNames", "contains", "contentSchema", "items"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	// refused keywords and why.
	refusedKeywords = map[string]string{
		"$anchor":          "anchors are refused: use a $ref JSON pointer such as \"#/$defs/item\"",
		"$dynamicAnchor":   "dynamic references are refused",
		"$dynamicRef":      "dynamic references are refused",
		"$recursiveAnchor": "recursive references are refused: use a $ref JSON pointer",
		"$recursiveRef":    "recursive references are refused: use a $ref JSON pointer",
		"regexProperties":  "regexProperties is refused",
	}
)

// schema checks the schema at v (JSON pointer ptr) and everything below it.
func (w *walker) schema(v any, ptr string, root bool) error {
	if len(w.byPtr) >= MaxSubschemas {
		return fmt.Errorf("the schema has more than %d subschemas", MaxSubschemas)
	}
	switch v := v.(type) {
	case bool:
		w.byPtr[ptr] = -1
		return nil
	case map[string]any:
		w.byPtr[ptr] = len(w.nodes)
		n := node{m: v}
		at := ptr
		if at == "" {
			at = "/"
		}
		for k, why := range refusedKeywords {
			if _, ok := v[k]; ok {
				return fmt.Errorf("at %s: %s", at, why)
			}
		}
		if !root {
			if _, ok := v["$id"]; ok {
				return fmt.Errorf("at %s: $id is allowed only at the schema's root", at)
			}
			if _, ok := v["$schema"]; ok {
				return fmt.Errorf("at %s: $schema is allowed only at the schema's root", at)
			}
			if id, ok := v["id"].(string); ok && strings.Contains(w.draft, "draft-04") && id != "" {
				return fmt.Errorf("at %s: id is allowed only at the schema's root", at)
			}
		}
		if r, ok := v["$ref"]; ok {
			rs, ok := r.(string)
			if !ok {
				return fmt.Errorf("at %s: $ref is not a string", at)
			}
			w.refs = append(w.refs, ref{at, rs})
		}
		if p, ok := v["pattern"].(string); ok {
			if err := checkPattern(p); err != nil {
				return fmt.Errorf("at %s: %w", at, err)
			}
			re, _ := syntax.Parse(p, syntax.Perl)
			n.cost.patternSize = progSize(re)
		}
		if pp, ok := v["patternProperties"].(map[string]any); ok {
			for p := range pp {
				if err := checkPattern(p); err != nil {
					return fmt.Errorf("at %s/patternProperties: %w", at, err)
				}
				re, _ := syntax.Parse(p, syntax.Perl)
				n.cost.ppSize += progSize(re)
			}
		}
		if f, ok := v["format"]; ok {
			fs, isString := f.(string)
			if !isString {
				return fmt.Errorf("at %s: format is not a string", at)
			}
			n.cost.format = fs
		}
		if u, ok := v["uniqueItems"].(bool); ok && u {
			n.cost.unique = true
		}
		_, enc := v["contentEncoding"]
		_, media := v["contentMediaType"]
		n.cost.content = enc || media
		for _, k := range []string{"enum", "const"} {
			if x, ok := v[k]; ok {
				b, _ := json.Marshal(x)
				n.cost.fixed += int64(len(b))
			}
		}
		w.nodes = append(w.nodes, n)
		w.ptrs = append(w.ptrs, ptr)

		for _, k := range schemaKeywords {
			if sub, ok := v[k]; ok {
				if _, isList := sub.([]any); !isList {
					if err := w.schema(sub, ptr+"/"+escapePtr(k), false); err != nil {
						return err
					}
				}
			}
		}
		for _, k := range schemaListKeywords {
			if list, ok := v[k].([]any); ok {
				for i, sub := range list {
					if err := w.schema(sub, ptr+"/"+escapePtr(k)+"/"+strconv.Itoa(i), false); err != nil {
						return err
					}
				}
			}
		}
		for _, k := range schemaMapKeywords {
			if m, ok := v[k].(map[string]any); ok {
				for name, sub := range m {
					if _, isList := sub.([]any); isList && k == "dependencies" {
						continue // draft-04 to 07: a list of required names
					}
					if err := w.schema(sub, ptr+"/"+escapePtr(k)+"/"+escapePtr(name), false); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	return nil // not a schema: the compiler reports it
}

// checkRef accepts only a JSON pointer into the document that names one of
// its schema positions.
func (w *walker) checkRef(r ref) error {
	frag, ok := strings.CutPrefix(r.target, "#")
	if !ok {
		return fmt.Errorf("at %s: $ref %q: only references inside the schema (\"#/$defs/name\") are allowed", r.at, r.target)
	}
	ptr, err := url.PathUnescape(frag)
	if err != nil || (ptr != "" && !strings.HasPrefix(ptr, "/")) {
		return fmt.Errorf("at %s: $ref %q is not a JSON pointer (anchors are refused)", r.at, r.target)
	}
	if _, ok := w.byPtr[ptr]; !ok {
		return fmt.Errorf("at %s: $ref %q does not point at a subschema of this schema", r.at, r.target)
	}
	return nil
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
