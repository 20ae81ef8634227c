package agent

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The validator of responseSchemas: a JSON Schema validator for the drafts
// CompileSchema admits (2020-12, 2019-09, draft-07, -06, -04), bounded by
// the walker's limits and metered per schema object applied. Its verdicts
// are those of santhosh-tekuri/jsonschema/v5, which the tests hold it to
// (TestValidatorAgreesWithV5, FuzzValidatorAgreesWithV5); v5 is not linked
// into the host because its package init compiles five meta-schemas at
// every process start.

// draft is a JSON Schema draft: 4, 6, 7, 2019 or 2020.
type draft int

// draftOf maps a $schema to its draft as v5 does (http or https, an
// optional empty fragment); ok is false for any other $schema.
func draftOf(s string) (draft, bool) {
	if rest, ok := strings.CutPrefix(s, "http://"); ok {
		s = "https://" + rest
	}
	if i := strings.IndexByte(s, '#'); i >= 0 && (s[i:] == "#" || s[i:] == "#/") {
		s = s[:i]
	}
	switch s {
	case "https://json-schema.org/schema", "https://json-schema.org/draft/2020-12/schema":
		return 2020, true
	case "https://json-schema.org/draft/2019-09/schema":
		return 2019, true
	case "https://json-schema.org/draft-07/schema":
		return 7, true
	case "https://json-schema.org/draft-06/schema":
		return 6, true
	case "https://json-schema.org/draft-04/schema":
		return 4, true
	}
	return 0, false
}

// ValidationError is a reply that does not match its responseSchema: where
// (a JSON pointer into the reply) and why.
type ValidationError struct {
	InstanceLocation string // "" for the whole reply
	KeywordLocation  string // JSON pointer into the schema of the failing keyword
	Message          string
}

func (e *ValidationError) Error() string {
	loc := e.InstanceLocation
	if loc == "" {
		loc = "/"
	}
	return "at " + loc + ": " + e.Message
}

// snode is one compiled schema position.
type snode struct {
	ptr     string // JSON pointer of the position in the schema
	always  *bool  // a boolean schema
	cost    nodeCost
	metered bool

	ref     *snode
	refOnly bool // drafts before 2019-09: $ref's siblings are ignored

	types      []string
	hasConst   bool
	constant   any
	enum       []any
	enumMsg    string
	format     func(any) bool
	formatName string

	minProps, maxProps, minItems, maxItems, minLen, maxLen int
	minContains, maxContains                               int
	required                                               []string
	minimum, maximum, exclMin, exclMax, multipleOf         *big.Rat
	pattern                                                *regexp.Regexp
	uniqueItems                                            bool

	propNames   []string // properties, in order
	props       map[string]*snode
	patProps    []patProp
	additional  *snode
	propertyNms *snode
	deps        []dep
	depRequired []dep
	depSchemas  []dep

	items        *snode   // one schema for every item
	tuple        []*snode // items as a list (before 2020-12) or prefixItems
	additItems   *snode   // additionalItems after a tuple (before 2020-12)
	contains     *snode
	containsEval bool

	not                 *snode
	allOf, anyOf, oneOf []*snode
	ifS, thenS, elseS   *snode

	unevalProps, unevalItems *snode

	contentEncoding, contentMediaType string
	decode                            func(string) ([]byte, error)
	mediaJSON                         bool
	contentSchema                     *snode
}

type patProp struct {
	re *regexp.Regexp
	s  *snode
}

type dep struct {
	name  string
	names []string // a list of required names
	s     *snode   // or a schema applied to the object
}

// compiler turns a checked schema document into snodes.
type compiler struct {
	d        draft
	root     any
	assertFm bool // the draft asserts format (before 2019-09)
	byPtr    map[string]*snode
	metaDone map[string]bool
	track    bool // some node has unevaluated*: evaluation is tracked
}

func (c *compiler) errAt(ptr, format string, a ...any) error {
	at := ptr
	if at == "" {
		at = "/"
	}
	return fmt.Errorf("at %s: %s", at, fmt.Sprintf(format, a...))
}

// lookup finds the value at a JSON pointer of the document.
func (c *compiler) lookup(ptr string) (any, bool) {
	v := c.root
	if ptr == "" {
		return v, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := v.(type) {
		case map[string]any:
			y, ok := x[tok]
			if !ok {
				return nil, false
			}
			v = y
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// node compiles the schema at ptr (once).
func (c *compiler) node(ptr string) (*snode, error) {
	if n, ok := c.byPtr[ptr]; ok {
		return n, nil
	}
	v, ok := c.lookup(ptr)
	if !ok {
		return nil, c.errAt(ptr, "no schema here")
	}
	if !c.metaDone[ptr] {
		// Outside the draft's own keywords (or not a schema): checked as
		// a schema on first use, as v5 does.
		if err := metaCheck(v, c.d, ptr); err != nil {
			return nil, err
		}
		c.standard(v, ptr)
	}
	n := &snode{ptr: ptr, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLen: -1, maxLen: -1, minContains: 1, maxContains: -1}
	c.byPtr[ptr] = n
	switch v := v.(type) {
	case bool: // draft-04 has none: its meta-schema check refuses them
		n.always = &v
		return n, nil
	case map[string]any:
		return n, c.compileObject(n, v)
	}
	return nil, c.errAt(ptr, "a schema must be an object or a boolean")
}

func (c *compiler) sub(n *snode, kw string) (*snode, error) {
	return c.node(n.ptr + "/" + escapePtr(kw))
}

// opt compiles n's subschema under kw when m, n's object, has it; nil when
// it has none.
func (c *compiler) opt(n *snode, m map[string]any, kw string) (*snode, error) {
	if _, ok := m[kw]; !ok {
		return nil, nil
	}
	return c.sub(n, kw)
}

func (c *compiler) subs(n *snode, kw string, list []any) ([]*snode, error) {
	out := make([]*snode, len(list))
	for i := range list {
		s, err := c.node(n.ptr + "/" + escapePtr(kw) + "/" + strconv.Itoa(i))
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func ratOf(v any) *big.Rat {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// intOf converts a number as v5 does: through float64.
func intOf(v any) int {
	n, ok := v.(json.Number)
	if !ok {
		return -1
	}
	f, _ := strconv.ParseFloat(string(n), 64)
	return int(f)
}

func stringsOf(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// kindIn names the JSON kind keyword k's value must have where v5
// compiles it in draft d (it panics on another: a refusal here); "" for a
// keyword whose value is a schema (checked when compiled), takes any value
// or is ignored when v5 does not understand it. (A switch, not a map: no
// work at process start.)
func kindIn(k string, d draft) string {
	switch k {
	case "enum", "allOf", "anyOf", "oneOf":
		return "array"
	case "minimum", "maximum", "multipleOf", "minProperties", "maxProperties", "minItems", "maxItems", "minLength", "maxLength":
		return "number"
	case "exclusiveMinimum", "exclusiveMaximum":
		return "number or boolean"
	case "required":
		return "array of strings"
	case "uniqueItems":
		return "boolean"
	case "pattern", "format":
		return "string"
	case "properties", "patternProperties", "dependencies":
		return "object"
	case "minContains", "maxContains":
		if d >= 2019 {
			return "number"
		}
	case "dependentRequired", "dependentSchemas":
		if d >= 2019 {
			return "object"
		}
	case "prefixItems":
		if d >= 2020 {
			return "array"
		}
	case "contentEncoding", "contentMediaType":
		if d >= 7 {
			return "string"
		}
	}
	return ""
}

func kindOK(x any, kind string) bool {
	switch kind {
	case "array":
		_, ok := x.([]any)
		return ok
	case "array of strings":
		l, ok := x.([]any)
		for _, e := range l {
			if _, isStr := e.(string); !isStr {
				return false
			}
		}
		return ok
	case "number":
		_, ok := x.(json.Number)
		return ok
	case "number or boolean":
		_, ok := x.(json.Number)
		_, isBool := x.(bool)
		return ok || isBool
	case "boolean":
		_, ok := x.(bool)
		return ok
	case "string":
		_, ok := x.(string)
		return ok
	case "object":
		_, ok := x.(map[string]any)
		return ok
	}
	return true
}

func (c *compiler) compileObject(n *snode, m map[string]any) error {
	n.metered = true
	if _, ok := m["$ref"]; !ok || c.d >= 2019 {
		for _, k := range sortedKeys(m) {
			if kind := kindIn(k, c.d); kind != "" && !kindOK(m[k], kind) {
				return c.errAt(n.ptr+"/"+escapePtr(k), "%s must be a %s", k, kind)
			}
		}
		if t, ok := m["type"].([]any); ok && !kindOK(t, "array of strings") {
			return c.errAt(n.ptr+"/type", "type must be a type name or an array of them")
		}
		if dr, ok := m["dependentRequired"].(map[string]any); ok && c.d >= 2019 {
			for _, k := range sortedKeys(dr) {
				if !kindOK(dr[k], "array of strings") {
					return c.errAt(n.ptr+"/dependentRequired/"+escapePtr(k), "must be an array of names")
				}
			}
		}
		if deps, ok := m["dependencies"].(map[string]any); ok {
			for _, k := range sortedKeys(deps) {
				if l, isList := deps[k].([]any); isList && !kindOK(l, "array of strings") {
					return c.errAt(n.ptr+"/dependencies/"+escapePtr(k), "must be an array of names or a schema")
				}
			}
		}
	}
	if r, ok := m["$ref"].(string); ok {
		target, err := c.refTarget(n.ptr, r)
		if err != nil {
			return err
		}
		if n.ref, err = c.node(target); err != nil {
			return err
		}
		if c.d < 2019 {
			n.refOnly = true
			return nil
		}
	}
	d := c.d
	if t, ok := m["type"]; ok {
		switch t := t.(type) {
		case string:
			n.types = []string{t}
		case []any:
			n.types = stringsOf(t)
		}
	}
	if e, ok := m["enum"].([]any); ok {
		n.enum = e
		n.enumMsg = enumMessage(e)
	}
	if d >= 6 {
		if x, ok := m["const"]; ok {
			n.hasConst, n.constant = true, x
		}
	}
	n.minimum, n.maximum = ratOf(m["minimum"]), ratOf(m["maximum"])
	if x, ok := m["exclusiveMinimum"]; ok {
		if b, isBool := x.(bool); isBool {
			if b {
				n.minimum, n.exclMin = nil, n.minimum
			}
		} else {
			n.exclMin = ratOf(x)
		}
	}
	if x, ok := m["exclusiveMaximum"]; ok {
		if b, isBool := x.(bool); isBool {
			if b {
				n.maximum, n.exclMax = nil, n.maximum
			}
		} else {
			n.exclMax = ratOf(x)
		}
	}
	n.multipleOf = ratOf(m["multipleOf"])
	load := func(k string, into *int) {
		if x, ok := m[k]; ok {
			*into = intOf(x)
		}
	}
	load("minProperties", &n.minProps)
	load("maxProperties", &n.maxProps)
	load("minItems", &n.minItems)
	load("maxItems", &n.maxItems)
	load("minLength", &n.minLen)
	load("maxLength", &n.maxLen)
	if r, ok := m["required"]; ok {
		n.required = stringsOf(r)
	}
	n.uniqueItems, _ = m["uniqueItems"].(bool)
	if p, ok := m["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return c.errAt(n.ptr+"/pattern", "%v", err)
		}
		n.pattern = re
	}
	if d >= 2019 {
		load("minContains", &n.minContains)
		load("maxContains", &n.maxContains)
		if x, ok := m["dependentRequired"].(map[string]any); ok {
			for _, k := range sortedKeys(x) {
				n.depRequired = append(n.depRequired, dep{name: k, names: stringsOf(x[k])})
			}
		}
	}

	var err error
	if n.not, err = c.opt(n, m, "not"); err != nil {
		return err
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		list, ok := m[k].([]any)
		if !ok {
			continue
		}
		subs, err := c.subs(n, k, list)
		if err != nil {
			return err
		}
		switch k {
		case "allOf":
			n.allOf = subs
		case "anyOf":
			n.anyOf = subs
		default:
			n.oneOf = subs
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		n.propNames = sortedKeys(props)
		n.props = map[string]*snode{}
		for _, k := range n.propNames {
			if n.props[k], err = c.node(n.ptr + "/properties/" + escapePtr(k)); err != nil {
				return err
			}
		}
	}
	if pp, ok := m["patternProperties"].(map[string]any); ok {
		for _, k := range sortedKeys(pp) {
			re, err := regexp.Compile(k)
			if err != nil {
				return c.errAt(n.ptr+"/patternProperties", "%v", err)
			}
			s, err := c.node(n.ptr + "/patternProperties/" + escapePtr(k))
			if err != nil {
				return err
			}
			n.patProps = append(n.patProps, patProp{re, s})
		}
	}
	switch m["additionalProperties"].(type) {
	case bool, map[string]any: // v5 ignores any other value
		if n.additional, err = c.sub(n, "additionalProperties"); err != nil {
			return err
		}
	}
	if deps, ok := m["dependencies"].(map[string]any); ok {
		for _, k := range sortedKeys(deps) {
			if list, isList := deps[k].([]any); isList {
				n.deps = append(n.deps, dep{name: k, names: stringsOf(list)})
				continue
			}
			s, err := c.node(n.ptr + "/dependencies/" + escapePtr(k))
			if err != nil {
				return err
			}
			n.deps = append(n.deps, dep{name: k, s: s})
		}
	}
	if d >= 6 {
		if n.propertyNms, err = c.opt(n, m, "propertyNames"); err != nil {
			return err
		}
		if n.contains, err = c.opt(n, m, "contains"); err != nil {
			return err
		}
	}
	if d >= 7 && m["if"] != nil {
		if n.ifS, err = c.sub(n, "if"); err != nil {
			return err
		}
		if n.thenS, err = c.opt(n, m, "then"); err != nil {
			return err
		}
		if n.elseS, err = c.opt(n, m, "else"); err != nil {
			return err
		}
	}
	if d >= 2019 {
		if ds, ok := m["dependentSchemas"].(map[string]any); ok {
			for _, k := range sortedKeys(ds) {
				s, err := c.node(n.ptr + "/dependentSchemas/" + escapePtr(k))
				if err != nil {
					return err
				}
				n.depSchemas = append(n.depSchemas, dep{name: k, s: s})
			}
		}
	}
	if d >= 2020 {
		if list, ok := m["prefixItems"].([]any); ok {
			if n.tuple, err = c.subs(n, "prefixItems", list); err != nil {
				return err
			}
		}
		if n.items, err = c.opt(n, m, "items"); err != nil {
			return err
		}
	} else if items, ok := m["items"]; ok {
		if list, isList := items.([]any); isList {
			if n.tuple, err = c.subs(n, "items", list); err != nil {
				return err
			}
			switch m["additionalItems"].(type) {
			case bool, map[string]any: // v5 ignores any other value
				if n.additItems, err = c.sub(n, "additionalItems"); err != nil {
					return err
				}
			}
		} else if n.items, err = c.sub(n, "items"); err != nil {
			return err
		}
	}
	if d >= 2019 {
		if _, ok := m["unevaluatedProperties"]; ok {
			if n.unevalProps, err = c.sub(n, "unevaluatedProperties"); err != nil {
				return err
			}
			c.track = true
		}
		if _, ok := m["unevaluatedItems"]; ok {
			if n.unevalItems, err = c.sub(n, "unevaluatedItems"); err != nil {
				return err
			}
			c.track = true
		}
		n.containsEval = d >= 2020
	}
	if f, ok := m["format"].(string); ok {
		n.formatName = f
		if c.assertFm {
			n.format = formatChecker(f)
		}
	}
	if d >= 7 {
		if enc, ok := m["contentEncoding"].(string); ok {
			n.contentEncoding = enc
			if enc == "base64" {
				n.decode = base64.StdEncoding.DecodeString
			}
		}
		if mt, ok := m["contentMediaType"].(string); ok {
			n.contentMediaType = mt
			n.mediaJSON = mt == "application/json"
			if n.contentSchema, err = c.opt(n, m, "contentSchema"); err != nil {
				return err
			}
		}
		if d >= 2019 { // content is an annotation from 2019-09 on (contentSchema is compiled all the same)
			n.decode, n.mediaJSON = nil, false
		}
	}
	return nil
}

// refTarget resolves a $ref the walker accepted ("#" and a JSON pointer) to
// the pointer of its target, checking the target as a schema when it is
// outside the draft's own keywords.
func (c *compiler) refTarget(at, r string) (string, error) {
	frag, _ := strings.CutPrefix(r, "#")
	ptr, err := unescapeRefPtr(frag)
	if err != nil {
		return "", c.errAt(at, "$ref %q: %v", r, err)
	}
	if !c.metaDone[ptr] {
		v, ok := c.lookup(ptr)
		if !ok {
			return "", c.errAt(at, "$ref %q does not point at a subschema of this schema", r)
		}
		// A position outside the draft's own keywords is checked as a
		// schema when first referred to.
		if err := metaCheck(v, c.d, ptr); err != nil {
			return "", err
		}
		c.standard(v, ptr)
	}
	return ptr, nil
}

// standard marks the schema positions of the draft's keywords under v (at
// ptr) as checked.
func (c *compiler) standard(v any, ptr string) {
	c.metaDone[ptr] = true
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	one := func(k string) {
		x, ok := m[k]
		if !ok {
			return
		}
		// draft-04 has no boolean schemas, but additionalProperties and
		// additionalItems take a boolean of their own.
		if _, isBool := x.(bool); isBool && c.d == 4 && k != "additionalProperties" && k != "additionalItems" {
			return
		}
		switch x.(type) {
		case map[string]any, bool:
			c.standard(x, ptr+"/"+escapePtr(k))
		}
	}
	list := func(k string) {
		if l, ok := m[k].([]any); ok {
			for i, x := range l {
				c.standard(x, ptr+"/"+escapePtr(k)+"/"+strconv.Itoa(i))
			}
		}
	}
	props := func(k string) {
		if o, ok := m[k].(map[string]any); ok {
			for name, x := range o {
				c.standard(x, ptr+"/"+escapePtr(k)+"/"+escapePtr(name))
			}
		}
	}
	for _, k := range []string{"not", "additionalProperties", "items", "additionalItems"} {
		one(k)
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf", "items"} {
		list(k)
	}
	for _, k := range []string{"definitions", "properties", "patternProperties", "dependencies"} {
		props(k)
	}
	if c.d >= 6 {
		one("propertyNames")
		one("contains")
	}
	if c.d >= 7 {
		one("if")
		one("then")
		one("else")
	}
	if c.d >= 2019 {
		props("$defs")
		props("dependentSchemas")
		one("unevaluatedProperties")
		one("unevaluatedItems")
		one("contentSchema")
	}
	if c.d >= 2020 {
		list("prefixItems")
	}
}

// unescapeRefPtr undoes a $ref fragment's percent-encoding token by token
// (after ~1 and ~0, as v5 reads it).
func unescapeRefPtr(frag string) (string, error) {
	if frag == "" || frag == "/" {
		return "", nil
	}
	toks := strings.Split(frag[1:], "/")
	for i, t := range toks {
		t = strings.ReplaceAll(strings.ReplaceAll(t, "~1", "/"), "~0", "~")
		u, err := url.PathUnescape(t)
		if err != nil {
			return "", err
		}
		toks[i] = escapePtr(u)
	}
	return "/" + strings.Join(toks, "/"), nil
}

func enumMessage(e []any) string {
	for _, x := range e {
		switch x.(type) {
		case map[string]any, []any:
			return "enum failed"
		}
	}
	parts := make([]string, len(e))
	for i, x := range e {
		parts[i] = showValue(x)
	}
	if len(parts) == 1 {
		return "value must be " + parts[0]
	}
	return "value must be one of " + strings.Join(parts, ", ")
}

func showValue(x any) string {
	switch x := x.(type) {
	case string:
		return strconv.Quote(x)
	case nil:
		return "null"
	case json.Number:
		return string(x)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// checkLoops refuses a schema whose references and in-place applicators
// (allOf, $ref, not, …) go round without consuming the value: v5 refuses it
// as an infinite loop.
func (c *compiler) checkLoops(root *snode) error {
	const (
		white = iota
		grey
		black
	)
	color := map[*snode]int{}
	var visit func(n *snode) error
	var all func(n *snode) error
	seen := map[*snode]bool{}
	visit = func(n *snode) error {
		switch color[n] {
		case grey:
			return c.errAt(n.ptr, "the schema refers to itself without going into the value (an infinite loop)")
		case black:
			return nil
		}
		color[n] = grey
		for _, s := range inPlace(n) {
			if err := visit(s); err != nil {
				return err
			}
		}
		color[n] = black
		return nil
	}
	all = func(n *snode) error {
		if seen[n] {
			return nil
		}
		seen[n] = true
		if err := visit(n); err != nil {
			return err
		}
		for _, s := range children(n) {
			if err := all(s); err != nil {
				return err
			}
		}
		return nil
	}
	return all(root)
}

// inPlace lists the subschemas applied to the same value as n.
func inPlace(n *snode) []*snode {
	var out []*snode
	add := func(s ...*snode) {
		for _, x := range s {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	add(n.ref, n.not, n.ifS, n.thenS, n.elseS, n.contentSchema)
	add(n.allOf...)
	add(n.anyOf...)
	add(n.oneOf...)
	for _, d := range n.deps {
		add(d.s)
	}
	for _, d := range n.depSchemas {
		add(d.s)
	}
	return out
}

// children lists every subschema of n.
func children(n *snode) []*snode {
	out := inPlace(n)
	add := func(s ...*snode) {
		for _, x := range s {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	for _, k := range n.propNames {
		add(n.props[k])
	}
	for _, p := range n.patProps {
		add(p.s)
	}
	add(n.additional, n.propertyNms, n.items, n.additItems, n.contains, n.unevalProps, n.unevalItems)
	add(n.tuple...)
	return out
}

// evalState is what a successful application evaluated of an object's
// properties and an array's items (for unevaluated*), when tracked.
type evalState struct {
	props map[string]bool
	items map[int]bool
	all   bool // every property or item
}

func (e *evalState) merge(o *evalState) {
	if e == nil || o == nil {
		return
	}
	if o.all {
		e.all = true
	}
	for k := range o.props {
		e.props[k] = true
	}
	for k := range o.items {
		e.items[k] = true
	}
}

// validation is one run of a compiled schema over a value.
type validation struct {
	s     *Schema
	m     *Meter
	track bool
}

func fail(loc, kw, format string, a ...any) *ValidationError {
	return &ValidationError{InstanceLocation: loc, KeywordLocation: kw, Message: fmt.Sprintf(format, a...)}
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func numRat(v any) *big.Rat {
	switch v := v.(type) {
	case json.Number:
		r, _ := new(big.Rat).SetString(string(v))
		return r
	case float64:
		r, _ := new(big.Rat).SetString(strconv.FormatFloat(v, 'g', -1, 64))
		return r
	}
	return nil
}

// apply checks v (at loc) against n; on success, ev (when tracking) says
// what n evaluated.
func (x *validation) apply(n *snode, v any, loc string) (*evalState, *ValidationError) {
	if n.always != nil {
		if !*n.always {
			return nil, fail(loc, n.ptr, "not allowed")
		}
		return x.fresh(v), nil
	}
	if n.metered {
		x.m.charge(n.cost.of(v, x.m))
	}
	if n.refOnly {
		return x.apply(n.ref, v, loc)
	}
	ev := x.fresh(v)
	if len(n.types) > 0 {
		vt := jsonType(v)
		ok := false
		for _, t := range n.types {
			if t == vt || (t == "integer" && vt == "number" && numRat(v).IsInt()) {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fail(loc, n.ptr+"/type", "expected %s, but got %s", strings.Join(n.types, " or "), vt)
		}
	}
	if n.hasConst && !equalJSON(v, n.constant) {
		switch n.constant.(type) {
		case map[string]any, []any:
			return nil, fail(loc, n.ptr+"/const", "const failed")
		}
		return nil, fail(loc, n.ptr+"/const", "value must be %s", showValue(n.constant))
	}
	if n.enum != nil {
		ok := false
		for _, e := range n.enum {
			if equalJSON(v, e) {
				ok = true
				break
			}
		}
		if !ok {
			return nil, fail(loc, n.ptr+"/enum", "%s", n.enumMsg)
		}
	}
	if n.format != nil && !n.format(v) {
		return nil, fail(loc, n.ptr+"/format", "%s is not valid %q", quoteShort(v), n.formatName)
	}
	switch v := v.(type) {
	case map[string]any:
		if err := x.object(n, v, loc, ev); err != nil {
			return nil, err
		}
	case []any:
		if err := x.array(n, v, loc, ev); err != nil {
			return nil, err
		}
	case string:
		if err := x.str(n, v, loc); err != nil {
			return nil, err
		}
	case json.Number, float64:
		if err := x.number(n, v, loc); err != nil {
			return nil, err
		}
	}
	inPlace := func(s *snode) *ValidationError {
		sev, err := x.apply(s, v, loc)
		if err == nil {
			ev.merge(sev)
		}
		return err
	}
	if n.ref != nil {
		if err := inPlace(n.ref); err != nil {
			return nil, err
		}
	}
	if n.not != nil {
		if _, err := x.apply(n.not, v, loc); err == nil {
			return nil, fail(loc, n.ptr+"/not", "not failed")
		}
	}
	for _, s := range n.allOf {
		if err := inPlace(s); err != nil {
			return nil, err
		}
	}
	if len(n.anyOf) > 0 {
		var first *ValidationError
		matched := false
		for _, s := range n.anyOf {
			err := inPlace(s)
			if err == nil {
				matched = true
				if !x.track {
					break
				}
			} else if first == nil {
				first = err
			}
		}
		if !matched {
			return nil, first
		}
	}
	if len(n.oneOf) > 0 {
		var first *ValidationError
		matched := -1
		for i, s := range n.oneOf {
			sev, err := x.apply(s, v, loc)
			if err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			if matched >= 0 {
				return nil, fail(loc, n.ptr+"/oneOf", "valid against schemas at indexes %d and %d", matched, i)
			}
			matched = i
			ev.merge(sev)
		}
		if matched < 0 {
			return nil, first
		}
	}
	if n.ifS != nil {
		if err := inPlace(n.ifS); err == nil {
			if n.thenS != nil {
				if err := inPlace(n.thenS); err != nil {
					return nil, err
				}
			}
		} else if n.elseS != nil {
			if err := inPlace(n.elseS); err != nil {
				return nil, err
			}
		}
	}
	if obj, ok := v.(map[string]any); ok {
		for _, d := range n.deps {
			if _, has := obj[d.name]; !has {
				continue
			}
			if d.s == nil {
				for _, k := range d.names {
					if _, ok := obj[k]; !ok {
						return nil, fail(loc, n.ptr+"/dependencies", "property %q is required, if %q property exists", k, d.name)
					}
				}
			} else if err := inPlace(d.s); err != nil {
				return nil, err
			}
		}
		for _, d := range n.depSchemas {
			if _, has := obj[d.name]; has {
				if err := inPlace(d.s); err != nil {
					return nil, err
				}
			}
		}
		if n.unevalProps != nil {
			for _, k := range sortedKeys(obj) {
				if ev != nil && (ev.all || ev.props[k]) {
					continue
				}
				if _, err := x.apply(n.unevalProps, obj[k], loc+"/"+escapePtr(k)); err != nil {
					return nil, err
				}
			}
			ev.all = true
		}
	}
	if arr, ok := v.([]any); ok && n.unevalItems != nil {
		for i, item := range arr {
			if ev != nil && (ev.all || ev.items[i]) {
				continue
			}
			if _, err := x.apply(n.unevalItems, item, loc+"/"+strconv.Itoa(i)); err != nil {
				return nil, err
			}
		}
		ev.all = true
	}
	return ev, nil
}

func (x *validation) fresh(v any) *evalState {
	if !x.track {
		return nil
	}
	return &evalState{props: map[string]bool{}, items: map[int]bool{}}
}

func (x *validation) object(n *snode, v map[string]any, loc string, ev *evalState) *ValidationError {
	if n.minProps != -1 && len(v) < n.minProps {
		return fail(loc, n.ptr+"/minProperties", "minimum %d properties allowed, but found %d properties", n.minProps, len(v))
	}
	if n.maxProps != -1 && len(v) > n.maxProps {
		return fail(loc, n.ptr+"/maxProperties", "maximum %d properties allowed, but found %d properties", n.maxProps, len(v))
	}
	var missing []string
	for _, k := range n.required {
		if _, ok := v[k]; !ok {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		return fail(loc, n.ptr+"/required", "missing properties: %s", strings.Join(missing, ", "))
	}
	keys := sortedKeys(v)
	evaluated := map[string]bool{}
	for _, k := range n.propNames {
		if pv, ok := v[k]; ok {
			evaluated[k] = true
			if _, err := x.apply(n.props[k], pv, loc+"/"+escapePtr(k)); err != nil {
				return err
			}
		}
	}
	if n.propertyNms != nil {
		for _, k := range keys {
			if _, err := x.apply(n.propertyNms, k, loc+"/"+escapePtr(k)); err != nil {
				return err
			}
		}
	}
	for _, p := range n.patProps {
		for _, k := range keys {
			if p.re.MatchString(k) {
				evaluated[k] = true
				if _, err := x.apply(p.s, v[k], loc+"/"+escapePtr(k)); err != nil {
					return err
				}
			}
		}
	}
	if n.additional != nil {
		for _, k := range keys {
			if evaluated[k] {
				continue
			}
			if n.additional.always != nil && !*n.additional.always {
				return fail(loc, n.ptr+"/additionalProperties", "additionalProperties %q not allowed", k)
			}
			if _, err := x.apply(n.additional, v[k], loc+"/"+escapePtr(k)); err != nil {
				return err
			}
		}
		if ev != nil {
			ev.all = true
		}
	}
	for _, d := range n.depRequired {
		if _, has := v[d.name]; !has {
			continue
		}
		for _, k := range d.names {
			if _, ok := v[k]; !ok {
				return fail(loc, n.ptr+"/dependentRequired", "property %q is required, if %q property exists", k, d.name)
			}
		}
	}
	if ev != nil {
		for k := range evaluated {
			ev.props[k] = true
		}
	}
	return nil
}

func (x *validation) array(n *snode, v []any, loc string, ev *evalState) *ValidationError {
	if n.minItems != -1 && len(v) < n.minItems {
		return fail(loc, n.ptr+"/minItems", "minimum %d items required, but found %d items", n.minItems, len(v))
	}
	if n.maxItems != -1 && len(v) > n.maxItems {
		return fail(loc, n.ptr+"/maxItems", "maximum %d items required, but found %d items", n.maxItems, len(v))
	}
	if n.uniqueItems {
		if i, j, dup := duplicateItems(v); dup {
			return fail(loc, n.ptr+"/uniqueItems", "items at index %d and %d are equal", i, j)
		}
	}
	at := func(i int) string { return loc + "/" + strconv.Itoa(i) }
	for i, item := range v {
		var s *snode
		switch {
		case i < len(n.tuple):
			s = n.tuple[i]
		case n.items != nil:
			s = n.items
		case n.additItems != nil && len(n.tuple) > 0:
			s = n.additItems
		}
		if s == nil {
			break
		}
		if s.always != nil && !*s.always && s == n.additItems {
			return fail(loc, n.ptr+"/additionalItems", "only %d items are allowed, but found %d items", len(n.tuple), len(v))
		}
		if _, err := x.apply(s, item, at(i)); err != nil {
			return err
		}
		if ev != nil {
			ev.items[i] = true
		}
	}
	if n.contains != nil && (n.minContains != -1 || n.maxContains != -1) {
		matched := 0
		var first *ValidationError
		for i, item := range v {
			if _, err := x.apply(n.contains, item, at(i)); err != nil {
				if first == nil {
					first = err
				}
				continue
			}
			matched++
			if n.containsEval && ev != nil {
				ev.items[i] = true
			}
		}
		if n.minContains != -1 && matched < n.minContains {
			if first != nil && n.minContains == 1 {
				return first
			}
			return fail(loc, n.ptr+"/contains", "valid must be >= %d, but got %d", n.minContains, matched)
		}
		if n.maxContains != -1 && matched > n.maxContains {
			return fail(loc, n.ptr+"/maxContains", "valid must be <= %d, but got %d", n.maxContains, matched)
		}
	}
	return nil
}

func (x *validation) str(n *snode, v, loc string) *ValidationError {
	if n.minLen != -1 || n.maxLen != -1 {
		l := utf8.RuneCountInString(v)
		if n.minLen != -1 && l < n.minLen {
			return fail(loc, n.ptr+"/minLength", "length must be >= %d, but got %d", n.minLen, l)
		}
		if n.maxLen != -1 && l > n.maxLen {
			return fail(loc, n.ptr+"/maxLength", "length must be <= %d, but got %d", n.maxLen, l)
		}
	}
	if n.pattern != nil && !n.pattern.MatchString(v) {
		return fail(loc, n.ptr+"/pattern", "does not match pattern %q", n.pattern.String())
	}
	if n.decode != nil || n.mediaJSON {
		decoded := n.contentEncoding == ""
		content := []byte(v)
		if n.decode != nil {
			b, err := n.decode(v)
			if err != nil {
				return fail(loc, n.ptr+"/contentEncoding", "value is not %s encoded", n.contentEncoding)
			}
			content, decoded = b, true
		}
		if decoded && n.mediaJSON {
			var any any
			if err := json.Unmarshal(content, &any); err != nil {
				return fail(loc, n.ptr+"/contentMediaType", "value is not of mediatype %q", n.contentMediaType)
			}
		}
		if decoded && n.contentSchema != nil {
			doc, ok := decodeOne(content)
			if !ok {
				return fail(loc, n.ptr+"/contentSchema", "value is not valid json")
			}
			if _, err := x.apply(n.contentSchema, doc, loc); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeOne decodes exactly one JSON value with numbers kept as json.Number.
func decodeOne(b []byte) (any, bool) {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if t, _ := dec.Token(); t != nil {
		return nil, false
	}
	return v, true
}

func (x *validation) number(n *snode, v any, loc string) *ValidationError {
	if n.minimum == nil && n.maximum == nil && n.exclMin == nil && n.exclMax == nil && n.multipleOf == nil {
		return nil
	}
	r := numRat(v)
	show := func(b *big.Rat) string { f, _ := b.Float64(); return strconv.FormatFloat(f, 'g', -1, 64) }
	switch {
	case n.minimum != nil && r.Cmp(n.minimum) < 0:
		return fail(loc, n.ptr+"/minimum", "must be >= %s but found %v", show(n.minimum), v)
	case n.exclMin != nil && r.Cmp(n.exclMin) <= 0:
		return fail(loc, n.ptr+"/exclusiveMinimum", "must be > %s but found %v", show(n.exclMin), v)
	case n.maximum != nil && r.Cmp(n.maximum) > 0:
		return fail(loc, n.ptr+"/maximum", "must be <= %s but found %v", show(n.maximum), v)
	case n.exclMax != nil && r.Cmp(n.exclMax) >= 0:
		return fail(loc, n.ptr+"/exclusiveMaximum", "must be < %s but found %v", show(n.exclMax), v)
	case n.multipleOf != nil && !new(big.Rat).Quo(r, n.multipleOf).IsInt():
		return fail(loc, n.ptr+"/multipleOf", "%v not multipleOf %s", v, show(n.multipleOf))
	}
	return nil
}

// quoteShort shows a value in a message, a long string cut in the middle.
func quoteShort(v any) string {
	s, ok := v.(string)
	if !ok {
		return showValue(v)
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:90], "") + "…" + strings.ToValidUTF8(s[len(s)-90:], "")
	}
	return strconv.Quote(s)
}

// equalJSON is JSON equality: numbers by value, objects regardless of
// order.
func equalJSON(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, x := range a {
			y, ok := bm[k]
			if !ok || !equalJSON(x, y) {
				return false
			}
		}
		return true
	case []any:
		bl, ok := b.([]any)
		if !ok || len(a) != len(bl) {
			return false
		}
		for i := range a {
			if !equalJSON(a[i], bl[i]) {
				return false
			}
		}
		return true
	case json.Number, float64:
		if jsonType(b) != "number" {
			return false
		}
		return numRat(a).Cmp(numRat(b)) == 0
	case string:
		s, ok := b.(string)
		return ok && s == a
	case bool:
		t, ok := b.(bool)
		return ok && t == a
	case nil:
		return b == nil
	}
	return false
}

// duplicateItems finds two equal items (the first pair by the later index).
func duplicateItems(v []any) (int, int, bool) {
	if len(v) <= 20 {
		for j := 1; j < len(v); j++ {
			for i := 0; i < j; i++ {
				if equalJSON(v[i], v[j]) {
					return i, j, true
				}
			}
		}
		return 0, 0, false
	}
	seen := make(map[string]int, len(v))
	var b strings.Builder
	for j, item := range v {
		b.Reset()
		canonical(&b, item)
		if i, ok := seen[b.String()]; ok {
			return i, j, true
		}
		seen[b.String()] = j
	}
	return 0, 0, false
}

// canonical writes a text that two JSON values share exactly when they are
// equal.
func canonical(b *strings.Builder, v any) {
	switch v := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for _, k := range sortedKeys(v) {
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, v[k])
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for _, x := range v {
			canonical(b, x)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case json.Number, float64:
		b.WriteString(numRat(v).RatString())
	case string:
		b.WriteString(strconv.Quote(v))
	default:
		fmt.Fprint(b, v)
	}
}
