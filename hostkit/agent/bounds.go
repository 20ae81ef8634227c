package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp/syntax"
	"strconv"
	"strings"
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

// NumberError is a number the host does not check against a schema: its
// text is longer than 100 characters or its exponent beyond ±1000.
type NumberError struct{ Text string }

func (e *NumberError) Error() string {
	return fmt.Sprintf("the number %.24s is beyond what the host checks (at most %d characters, exponent within ±%d)",
		e.Text, maxNumberText, maxExponent)
}

// checkNumbers refuses numbers the validator cannot handle cheaply (it
// makes an exact rational of each).
func checkNumbers(v any) error {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			if err := checkNumbers(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkNumbers(x); err != nil {
				return err
			}
		}
	case json.Number:
		return checkNumber(string(v))
	}
	return nil
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

// checkPattern parses a pattern as the validator will (Go's RE2 syntax),
// bounds its size and returns it.
func checkPattern(p string) (int, error) {
	if len(p) > MaxPatternBytes {
		return 0, fmt.Errorf("the pattern %.40q… is %d bytes; the host accepts at most %d", p, len(p), MaxPatternBytes)
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return 0, fmt.Errorf("the pattern %.60q is not a valid regular expression: %v", p, err)
	}
	n := progSize(re)
	if n > MaxPatternSize {
		return 0, fmt.Errorf("the pattern %.60q expands to about %d instructions (repetitions counted out); the host accepts at most %d", p, n, MaxPatternSize)
	}
	return n, nil
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

// Units per step of the validator besides pattern matching: a step costs
// about a microsecond.
const (
	unitsPerApply = 48 // one schema object applied to one value
	unitsPerEntry = 4  // one member or item of that value
	// unitsPerLevel is charged per application for each level of the
	// reply's depth past freeDepth: an error the validator makes holds its
	// location, copied whole (a reply 3,000 levels deep with an error at
	// each level took 1.9 s and hundreds of megabytes uncharged). Up to
	// freeDepth that copy is within unitsPerApply.
	unitsPerLevel = 64
	freeDepth     = 32
)

// depthCost is what each application is charged for v's depth.
func depthCost(v any) int64 {
	return unitsPerLevel * int64(max(0, depth(v)-freeDepth))
}

// nodeCost is what applying one schema object to a value costs, charged
// before the object's checks run (see Schema.Validate).
type nodeCost struct {
	patternSize int   // pattern's program size, 0 without one
	ppSize      int   // the patternProperties programs' sizes, summed
	fixed       int64 // the object's own keyword values (enum, const, required…): checks cost up to their size
	numbers     int64 // the numbers among them: each is compared with a number of the reply
	children    int64 // what the object's subschemas cost before their own charge: their fixed checks, $ref hops
	childNums   int64 // the numbers among those subschemas' keyword values
	entry       int64 // the same for one member or item: the subschemas that may apply to it
	entryNums   int64
	unique      bool // uniqueItems: comparing or hashing the array's items
	text        bool // format, content or a length: reading the whole string
}

// of is the cost of applying the object to v.
func (c *nodeCost) of(v any) int64 {
	u := unitsPerApply + c.fixed + c.children
	switch v := v.(type) {
	case map[string]any:
		u += int64(len(v)) * (unitsPerEntry + c.entry)
		for k, x := range v {
			u += int64(len(k)+1)*int64(c.ppSize) + c.entryNums*numCostOf(x)
		}
	case []any:
		u += int64(len(v)) * (unitsPerEntry + c.entry)
		if c.entryNums > 0 {
			for _, x := range v {
				u += c.entryNums * numCostOf(x)
			}
		}
		if c.unique && len(v) > 1 {
			size := jsonSize(v)
			if len(v) <= 20 {
				size *= int64(len(v)) // pairwise comparison for short arrays
			}
			u += size
		}
	case string:
		u += int64(len(v)+1) * int64(c.patternSize)
		if c.text {
			u += int64(len(v))
		}
	case json.Number:
		u += numCost(string(v)) * (c.numbers + c.childNums)
	}
	return u
}

// numCost is what making an exact rational of a number's text costs, in
// units: its digits and its exponent (1e999 is an integer of 3,300 bits; an
// enum of 9,000 such numbers checked against 500 numbers of a reply took 73
// s charged as its bytes).
func numCost(text string) int64 {
	n := int64(len(text))
	if i := strings.IndexAny(text, "eE"); i >= 0 {
		e, _ := strconv.Atoi(strings.TrimPrefix(text[i+1:], "+"))
		n += int64(max(e, -e))
	}
	return n
}

func numCostOf(v any) int64 {
	if n, ok := v.(json.Number); ok {
		return numCost(string(n))
	}
	return 0
}

// numbersIn counts the numbers in a keyword's value and their numCost.
func numbersIn(v any) (count, cost int64) {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			n, c := numbersIn(x)
			count, cost = count+n, cost+c
		}
	case []any:
		for _, x := range v {
			n, c := numbersIn(x)
			count, cost = count+n, cost+c
		}
	case json.Number:
		return 1, numCost(string(v))
	}
	return count, cost
}

// depth is how deeply v nests (0 for a scalar).
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			d = max(d, depth(x))
		}
	case []any:
		for _, x := range v {
			d = max(d, depth(x))
		}
	default:
		return 0
	}
	return d + 1
}

// jsonSize is v's size as JSON text, roughly.
func jsonSize(v any) int64 {
	switch v := v.(type) {
	case map[string]any:
		n := int64(2)
		for k, x := range v {
			n += int64(len(k)) + 4 + jsonSize(x)
		}
		return n
	case []any:
		n := int64(2)
		for _, x := range v {
			n += 1 + jsonSize(x)
		}
		return n
	case string:
		return int64(len(v)) + 2
	case json.Number:
		return numCost(string(v))
	}
	return 4
}

// walker checks a schema document against the host's limits and finds its
// schema objects.
type walker struct {
	draft    string // the root's $schema
	oldDraft bool   // draft-04, -06 or -07: $ref hides its siblings, formats assert
	nodes    []*node
	byPtr    map[string]int // JSON pointer of each schema position → index in nodes (-1 for a boolean)
	refs     []ref
	count    int // JSON values seen
}

// node is one schema object of the document.
type node struct {
	m    map[string]any
	ptr  string
	cost nodeCost
	kids []kid  // its direct subschemas
	ref  string // the JSON pointer its $ref names, "" for none
	pre  price  // what applying it costs before its own charge
	done int    // 0, 1 while pre is worked out, 2 once it is
}

// price is what a subschema costs its parent: units, and numbers compared
// with the reply's.
type price struct{ units, numbers int64 }

type ref struct{ at, target string }

// kid is a subschema: its JSON pointer and the keyword it is under.
type kid struct{ ptr, kw string }

// walkSchema decodes a responseSchema and checks it against the host's
// limits and reference rules, before any library sees it.
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
		w.draft, _ = m["$schema"].(string)
		w.oldDraft = strings.Contains(w.draft, "draft-04") || strings.Contains(w.draft, "draft-06") || strings.Contains(w.draft, "draft-07")
	}
	if err := w.schema(doc, "", true); err != nil {
		return nil, nil, err
	}
	for i := range w.refs {
		if err := w.checkRef(&w.refs[i]); err != nil {
			return nil, nil, err
		}
	}
	w.costChildren()
	return doc, w, nil
}

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
		return checkNumber(string(v))
	}
	return nil
}

// Keywords whose value is a schema, a list of schemas, or a map of them,
// in every draft (a keyword a draft does not have is checked all the same).
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

func isSchemaKeyword(k string) bool {
	for _, list := range [][]string{schemaKeywords, schemaListKeywords, schemaMapKeywords} {
		for _, s := range list {
			if s == k {
				return true
			}
		}
	}
	return false
}

// schema checks the schema at v (JSON pointer ptr) and everything below it.
func (w *walker) schema(v any, ptr string, root bool) error {
	if len(w.byPtr) >= MaxSubschemas {
		return fmt.Errorf("the schema has more than %d subschemas", MaxSubschemas)
	}
	switch v := v.(type) {
	case bool:
		w.byPtr[ptr] = -1
	case map[string]any:
		w.byPtr[ptr] = len(w.nodes)
		n := &node{m: v, ptr: ptr}
		w.nodes = append(w.nodes, n)
		if err := w.object(n, root); err != nil {
			return err
		}
		return w.subschemas(n)
	}
	return nil // not a schema: the compiler reports it
}

// at names a JSON pointer in a message.
func at(ptr string) string {
	if ptr == "" {
		return "/"
	}
	return ptr
}

// object checks one schema object's own keywords and finds its costs.
func (w *walker) object(n *node, root bool) error {
	v := n.m
	for k, why := range refusedKeywords {
		if _, ok := v[k]; ok {
			return fmt.Errorf("at %s: %s", at(n.ptr), why)
		}
	}
	if !root {
		for _, k := range []string{"$id", "$schema"} {
			if _, ok := v[k]; ok {
				return fmt.Errorf("at %s: %s is allowed only at the schema's root", at(n.ptr), k)
			}
		}
		if id, ok := v["id"].(string); ok && strings.Contains(w.draft, "draft-04") && id != "" {
			return fmt.Errorf("at %s: id is allowed only at the schema's root", at(n.ptr))
		}
	}
	if r, ok := v["$ref"]; ok {
		rs, ok := r.(string)
		if !ok {
			return fmt.Errorf("at %s: $ref is not a string", at(n.ptr))
		}
		w.refs = append(w.refs, ref{at: n.ptr, target: rs})
	}
	if err := n.patterns(); err != nil {
		return err
	}
	if f, ok := v["format"]; ok {
		if _, isString := f.(string); !isString {
			return fmt.Errorf("at %s: format is not a string", at(n.ptr))
		}
	}
	n.cost.unique, _ = v["uniqueItems"].(bool)
	for _, k := range []string{"format", "contentEncoding", "contentMediaType", "minLength", "maxLength"} {
		if _, ok := v[k]; ok {
			n.cost.text = true
		}
	}
	if deps, ok := v["dependencies"].(map[string]any); ok { // draft-04 to 07: lists of required names
		for _, x := range deps {
			if names, ok := x.([]any); ok {
				b, _ := json.Marshal(names)
				n.cost.fixed += int64(len(b))
			}
		}
	}
	for k, x := range v {
		if !isSchemaKeyword(k) {
			b, _ := json.Marshal(x)
			count, cost := numbersIn(x)
			n.cost.fixed += int64(len(b)) + cost
			n.cost.numbers += count
		}
	}
	return nil
}

// patterns checks the object's pattern and patternProperties names.
func (n *node) patterns() error {
	if p, ok := n.m["pattern"].(string); ok {
		size, err := checkPattern(p)
		if err != nil {
			return fmt.Errorf("at %s: %w", at(n.ptr), err)
		}
		n.cost.patternSize = size
	}
	pp, _ := n.m["patternProperties"].(map[string]any)
	for p := range pp {
		size, err := checkPattern(p)
		if err != nil {
			return fmt.Errorf("at %s/patternProperties: %w", at(n.ptr), err)
		}
		n.cost.ppSize += size
	}
	return nil
}

// subschemas walks the object's subschemas.
func (w *walker) subschemas(n *node) error {
	visit := func(sub any, kw, ptr string) error {
		n.kids = append(n.kids, kid{ptr, kw})
		return w.schema(sub, ptr, false)
	}
	for _, k := range schemaKeywords {
		if sub, ok := n.m[k]; ok {
			if _, isList := sub.([]any); !isList {
				if err := visit(sub, k, n.ptr+"/"+escapePtr(k)); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range schemaListKeywords {
		list, _ := n.m[k].([]any)
		for i, sub := range list {
			if err := visit(sub, k, n.ptr+"/"+escapePtr(k)+"/"+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	for _, k := range schemaMapKeywords {
		m, _ := n.m[k].(map[string]any)
		for name, sub := range m {
			if _, isList := sub.([]any); isList && k == "dependencies" {
				continue // draft-04 to 07: a list of required names
			}
			if err := visit(sub, k, n.ptr+"/"+escapePtr(k)+"/"+escapePtr(name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkRef accepts only a JSON pointer into the document that names one of
// its schema positions.
func (w *walker) checkRef(r *ref) error {
	frag, ok := strings.CutPrefix(r.target, "#")
	if !ok {
		return fmt.Errorf("at %s: $ref %q: only references inside the schema (\"#/$defs/name\") are allowed", at(r.at), r.target)
	}
	ptr, err := url.PathUnescape(frag)
	if err != nil || (ptr != "" && !strings.HasPrefix(ptr, "/")) {
		return fmt.Errorf("at %s: $ref %q is not a JSON pointer (anchors are refused)", at(r.at), r.target)
	}
	if _, ok := w.byPtr[ptr]; !ok {
		return fmt.Errorf("at %s: $ref %q does not point at a subschema of this schema", at(r.at), r.target)
	}
	w.nodes[w.byPtr[r.at]].ref = ptr
	return nil
}

// costChildren works out what each object's subschemas cost before their
// own charge runs. A subschema can stop on its type, const or enum before
// its charge; a draft-07 $ref object has no charge of its own (its other
// keywords are ignored), so its target's early cost and the hop are its
// parent's to pay: once per application for them all (the in-place ones
// apply to the value itself), and per member or item for those that may
// apply to one (one of properties, prefixItems…; every patternProperties).
func (w *walker) costChildren() {
	for _, n := range w.nodes {
		perKeyword := map[string]price{}
		for _, k := range n.kids {
			p := w.pre(w.byPtr[k.ptr])
			n.cost.children += unitsPerEntry + p.units
			n.cost.childNums += p.numbers
			q := perKeyword[k.kw]
			if k.kw == "patternProperties" {
				q = price{q.units + p.units, q.numbers + p.numbers}
			} else {
				q = price{max(q.units, p.units), max(q.numbers, p.numbers)}
			}
			perKeyword[k.kw] = q
		}
		for _, q := range perKeyword {
			n.cost.entry += q.units
			n.cost.entryNums += q.numbers
		}
	}
}

// pre is what applying the schema at index i costs before its own charge.
func (w *walker) pre(i int) price {
	if i < 0 {
		return price{}
	}
	n := w.nodes[i]
	switch n.done {
	case 2:
		return n.pre
	case 1: // a loop of references: the validator stops it
		return price{units: unitsPerApply}
	}
	n.done = 1
	p := price{n.cost.fixed, n.cost.numbers}
	if w.oldDraft && n.ref != "" {
		t := w.pre(w.byPtr[n.ref])
		p = price{p.units + unitsPerApply + t.units, p.numbers + t.numbers}
	}
	n.pre, n.done = p, 2
	return p
}

func escapePtr(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
