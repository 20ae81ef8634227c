package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// maxAttempts bounds how many different choices Generate tries before it
// gives up on a schema.
const maxAttempts = 24

// maxDepth stops a recursive schema ($ref to itself) from recursing forever.
const maxDepth = 24

// optionalDepth is the nesting below which only what a schema requires is
// generated (required members, minItems items), so a recursive schema gives
// a small tree instead of an exponential one.
const optionalDepth = 4

// MaxWork bounds one Generate: every value generated, every schema merged
// and every byte of string made counts one unit, across all attempts. A
// schema that asks for more (minItems: 100000000, minLength: 1e9, a
// recursive object that requires two of itself) is answered with a short
// object explaining why, which the bridge then reports as PARSE_FAILED.
const MaxWork = 200_000

// ErrTooLarge is a schema asking for more than MaxWork of generating.
var ErrTooLarge = errors.New("the schema asks for a value larger than the offline agent generates")

// budget is one Generate's work count, shared by its attempts.
type budget struct {
	ctx  context.Context
	left int
	n    int
}

// stopGen is the panic that ends a generation; Generate recovers it.
type stopGen struct{ err error }

// spend counts n units, ending the generation when the budget or the
// context is spent.
func (b *budget) spend(n int) {
	b.left -= n
	if b.left < 0 {
		panic(stopGen{ErrTooLarge})
	}
	if b.n++; b.n%256 == 0 {
		if err := b.ctx.Err(); err != nil {
			panic(stopGen{context.Cause(b.ctx)})
		}
	}
}

// Generate returns a JSON value valid against schema, chosen by seed; action
// names the request in a "message" string. It checks each attempt with the
// same validator the bridge uses. When no attempt validates it returns the
// last attempt together with an error saying why.
func Generate(schema json.RawMessage, seed uint64, action string) (json.RawMessage, error) {
	return GenerateContext(context.Background(), schema, seed, action)
}

// GenerateContext is Generate ending when ctx does (with ctx's error); its
// work is bounded by MaxWork (ErrTooLarge) and its validations share one
// agent.Meter.
func GenerateContext(ctx context.Context, schema json.RawMessage, seed uint64, action string) (data json.RawMessage, err error) {
	sch, err := agent.CompileSchema(schema)
	if err != nil {
		return nil, err
	}
	meter := agent.NewMeter(ctx)
	root, err := decode(schema)
	if err != nil {
		return nil, fmt.Errorf("offline: schema: %w", err)
	}
	b := &budget{ctx: ctx, left: MaxWork}
	defer func() {
		if r := recover(); r != nil {
			st, ok := r.(stopGen)
			if !ok {
				panic(r)
			}
			if !errors.Is(st.err, ErrTooLarge) {
				data, err = nil, st.err
				return
			}
			data = mustJSON(map[string]string{"message": fmt.Sprintf(
				"The offline agent stopped: %v (more than %d units of work).", ErrTooLarge, MaxWork)})
			err = st.err
		}
	}()
	var last json.RawMessage
	var lastErr error
	for attempt := range uint64(maxAttempts) {
		g := &gen{root: root, rng: seed ^ (attempt * 0x9E3779B97F4A7C15), action: action, attempt: int(attempt), b: b}
		raw := mustJSON(g.value(root, "", 0))
		b.spend(len(raw))
		inst, err := decode(raw)
		if err != nil {
			return nil, err
		}
		if lastErr = sch.Validate(meter, inst); lastErr == nil {
			return raw, nil
		}
		var ve *agent.ValidationError
		if !errors.As(lastErr, &ve) {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			// The validation budget is spent: no more attempts.
			return mustJSON(map[string]string{"message": fmt.Sprintf("The offline agent stopped: %v.", lastErr)}), lastErr
		}
		last = raw
	}
	return last, fmt.Errorf("offline: no value valid against the schema after %d attempts: %v", maxAttempts, lastErr)
}

func decode(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

type gen struct {
	b       *budget
	root    any
	rng     uint64
	action  string
	attempt int
	ordinal string // " 2" while generating the second item of an array
}

// next is splitmix64: small, fast, and the same on every platform.
func (g *gen) next() uint64 {
	g.rng += 0x9E3779B97F4A7C15
	z := g.rng
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

func (g *gen) pick(n int) int { return int(g.next() % uint64(n)) }

// value generates a value for schema s; name is the member or item it fills.
func (g *gen) value(s any, name string, depth int) any {
	if depth > maxDepth {
		return nil
	}
	g.b.spend(1)
	m, ok := s.(map[string]any)
	if !ok {
		if b, isBool := s.(bool); isBool && !b {
			return nil // false admits nothing; validation will say so
		}
		return g.str(map[string]any{}, name)
	}
	m = g.flatten(m, depth)
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[g.pick(len(e))]
	}
	t := g.typeOf(m)
	if depth == 0 && m["type"] == nil && t == "string" {
		t = "object" // a reply is an object
	}
	switch t {
	case "object":
		return g.object(m, name, depth)
	case "array":
		return g.array(m, name, depth)
	case "integer":
		return g.number(m, true)
	case "number":
		return g.number(m, false)
	case "boolean":
		return g.next()%2 == 0
	case "null":
		return nil
	default:
		return g.str(m, name)
	}
}

// flatten resolves $ref, allOf and one branch of anyOf/oneOf into one
// schema object.
func (g *gen) flatten(m map[string]any, depth int) map[string]any {
	for range maxDepth {
		changed := false
		if ref, ok := m["$ref"].(string); ok {
			target, _ := resolve(g.root, ref).(map[string]any)
			g.b.spend(len(m) + len(target))
			m = merge(without(m, "$ref"), target)
			changed = true
		}
		if all, ok := m["allOf"].([]any); ok {
			base := without(m, "allOf")
			for _, sub := range all {
				sm, _ := sub.(map[string]any)
				g.b.spend(len(base) + len(sm))
				base = merge(base, sm)
			}
			m, changed = base, true
		}
		for _, k := range []string{"oneOf", "anyOf"} {
			if alts, ok := m[k].([]any); ok && len(alts) > 0 {
				// Rotate the first choice by attempt so retries explore others.
				sm, _ := alts[(g.pick(len(alts))+g.attempt)%len(alts)].(map[string]any)
				g.b.spend(len(m) + len(sm))
				m, changed = merge(without(m, k), sm), true
			}
		}
		if !changed {
			return m
		}
	}
	return m
}

// resolve follows a local JSON pointer reference ("#", "#/$defs/x"). Other
// references resolve to nil (the compiler already refused them).
func resolve(root any, ref string) any {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(p, "/")[1:] {
		tok, _ = url.PathUnescape(tok)
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// merge combines two schemas that must both hold: properties merge, required
// lists join, bounds take the tighter value, types intersect, anything else
// from b fills what a lacks.
func merge(a, b map[string]any) map[string]any {
	out := without(a, "")
	for k, bv := range b {
		av, has := out[k]
		if !has {
			out[k] = bv
			continue
		}
		switch k {
		case "properties":
			ap, _ := av.(map[string]any)
			bp, _ := bv.(map[string]any)
			props := without(ap, "")
			for name, ps := range bp {
				if prev, ok := props[name].(map[string]any); ok {
					if psm, ok := ps.(map[string]any); ok {
						props[name] = merge(prev, psm)
						continue
					}
				}
				props[name] = ps
			}
			out[k] = props
		case "required":
			al, _ := av.([]any)
			bl, _ := bv.([]any)
			out[k] = append(append([]any{}, al...), bl...)
		case "minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties":
			if num(bv) > num(av) {
				out[k] = bv
			}
		case "maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties":
			if num(bv) < num(av) {
				out[k] = bv
			}
		case "type":
			at, bt := types(av), types(bv)
			var both []any
			for _, t := range at {
				for _, u := range bt {
					if t == u || (t == "number" && u == "integer") {
						both = append(both, u)
					} else if t == "integer" && u == "number" {
						both = append(both, t)
					}
				}
			}
			if len(both) > 0 {
				out[k] = both
			}
		}
	}
	return out
}

func types(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

func num(v any) float64 {
	if n, ok := v.(json.Number); ok {
		f, err := n.Float64()
		if err == nil {
			return f
		}
	}
	return math.NaN()
}

func has(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// typeOf chooses the type to generate: the first non-null listed type
// (integer before number), else the one the keywords imply.
func (g *gen) typeOf(m map[string]any) string {
	ts := types(m["type"])
	if len(ts) > 0 {
		for _, t := range ts {
			if t == "integer" {
				return t
			}
		}
		for _, t := range ts {
			if t != "null" {
				return t
			}
		}
		return ts[0]
	}
	switch {
	case has(m, "properties", "required", "additionalProperties", "minProperties", "maxProperties", "patternProperties"):
		return "object"
	case has(m, "items", "prefixItems", "minItems", "maxItems", "contains", "uniqueItems"):
		return "array"
	case has(m, "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"):
		return "number"
	}
	return "string"
}

func (g *gen) object(m map[string]any, name string, depth int) any {
	props, _ := m["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	var required []string
	isReq := map[string]bool{}
	if r, ok := m["required"].([]any); ok {
		for _, x := range r {
			if s, ok := x.(string); ok && !isReq[s] {
				isReq[s] = true
				required = append(required, s)
			}
		}
	}
	maxProps := math.MaxInt
	if f := num(m["maxProperties"]); !math.IsNaN(f) {
		maxProps = count(f)
	}
	keys := append([]string{}, required...)
	for _, k := range names {
		if !isReq[k] && len(keys) < maxProps && depth < optionalDepth {
			keys = append(keys, k)
		}
	}
	if depth == 0 && len(keys) == 0 && maxProps > 0 {
		if ap, ok := m["additionalProperties"]; !ok || ap == true {
			keys = append(keys, "message") // the reply contract's recommended member
		}
	}
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		sub, ok := props[k]
		if !ok {
			sub = additional(m)
		}
		out[k] = g.value(sub, k, depth+1)
	}
	if f := num(m["minProperties"]); !math.IsNaN(f) {
		if ap, ok := m["additionalProperties"].(bool); !ok || ap {
			for i := 1; float64(len(out)) < f; i++ {
				g.b.spend(1)
				k := fmt.Sprintf("extra%d", i)
				if _, taken := out[k]; !taken {
					out[k] = g.value(additional(m), k, depth+1)
				}
			}
		}
	}
	return out
}

// additional is the schema for members beyond properties.
func additional(m map[string]any) any {
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		return ap
	}
	return map[string]any{}
}

func (g *gen) array(m map[string]any, name string, depth int) any {
	prefix, _ := m["prefixItems"].([]any)
	items := m["items"]
	if tuple, ok := items.([]any); ok { // draft 4–7 tuple form
		prefix, items = tuple, m["additionalItems"]
	}
	closed := items == false
	n := 2
	if depth >= optionalDepth {
		n = 0
	}
	if f := num(m["minItems"]); !math.IsNaN(f) {
		n = max(n, count(f))
	}
	if len(prefix) > n {
		n = len(prefix)
	}
	if f := num(m["maxItems"]); !math.IsNaN(f) && count(f) < n {
		n = count(f)
	}
	if closed && n > len(prefix) {
		n = len(prefix)
	}
	contains := m["contains"]
	minContains := 1
	if f := num(m["minContains"]); !math.IsNaN(f) {
		minContains = count(f)
	}
	unique := m["uniqueItems"] == true
	out := make([]any, 0, min(n, 64)) // n comes from the schema: grow as items are made
	seen := map[string]bool{}
	for i := 0; i < n; i++ {
		var sub any = map[string]any{}
		switch {
		case i < len(prefix):
			sub = prefix[i]
		case contains != nil && i < minContains:
			sub = contains
		case items != nil:
			sub = items
		}
		outer := g.ordinal
		g.ordinal = fmt.Sprintf("%s %d", outer, i+1)
		itemName := singular(name)
		v := g.value(sub, itemName, depth+1)
		if unique {
			// Re-draw a few times when a value repeats (enums, booleans).
			key := string(mustJSON(v))
			for try := 0; try < 8 && seen[key]; try++ {
				v = g.value(sub, itemName, depth+1)
				key = string(mustJSON(v))
				g.b.spend(len(key))
			}
			g.b.spend(len(key))
			seen[key] = true
		}
		g.ordinal = outer
		out = append(out, v)
	}
	return out
}

func singular(name string) string {
	if name == "" {
		return "item"
	}
	if s, ok := strings.CutSuffix(name, "ies"); ok {
		return s + "y"
	}
	if s, ok := strings.CutSuffix(name, "s"); ok && len(s) > 1 {
		return s
	}
	return name
}

func (g *gen) number(m map[string]any, integer bool) any {
	lo, hi := math.Inf(-1), math.Inf(1)
	loEx, hiEx := false, false
	if f := num(m["minimum"]); !math.IsNaN(f) {
		lo = f
	}
	if f := num(m["maximum"]); !math.IsNaN(f) {
		hi = f
	}
	switch x := m["exclusiveMinimum"].(type) {
	case json.Number: // draft 6+
		if f := num(x); f >= lo {
			lo, loEx = f, true
		}
	case bool: // draft 4
		loEx = x
	}
	switch x := m["exclusiveMaximum"].(type) {
	case json.Number:
		if f := num(x); f <= hi {
			hi, hiEx = f, true
		}
	case bool:
		hiEx = x
	}
	step := num(m["multipleOf"])
	if math.IsNaN(step) || step <= 0 {
		step = 0
	}
	if integer {
		if step == 0 {
			step = 1
		} else if step != math.Trunc(step) {
			step = math.Ceil(step) // an integer multiple of a fraction is rare; approximate
		}
	}
	// A pleasant default inside the range: a small number near the bottom.
	v := float64(g.pick(90) + 1)
	if !math.IsInf(lo, -1) {
		v = lo + float64(g.pick(5))
		if loEx && v == lo {
			v = lo + 1
		}
	}
	if !math.IsInf(hi, 1) && (v > hi || (hiEx && v >= hi)) {
		v = hi
		if hiEx {
			v = hi - 1
		}
		if !math.IsInf(lo, -1) && v <= lo {
			v = (lo + hi) / 2
		}
	}
	if step > 0 {
		r := math.Ceil(v/step) * step
		if !math.IsInf(hi, 1) && (r > hi || (hiEx && r >= hi)) {
			r = math.Floor(v/step) * step
		}
		v = r
	}
	if integer {
		return json.Number(strconv.FormatInt(int64(math.Round(v)), 10))
	}
	return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
}

// formats gives one valid example per common "format".
var formats = map[string]string{
	"date-time":     "2026-01-02T03:04:05Z",
	"date":          "2026-01-02",
	"time":          "03:04:05Z",
	"duration":      "P1D",
	"email":         "someone@example.com",
	"idn-email":     "someone@example.com",
	"hostname":      "example.com",
	"idn-hostname":  "example.com",
	"ipv4":          "192.0.2.1",
	"ipv6":          "2001:db8::1",
	"uri":           "https://example.com/",
	"uri-reference": "https://example.com/",
	"iri":           "https://example.com/",
	"iri-reference": "https://example.com/",
	"url":           "https://example.com/",
	"uuid":          "00000000-0000-4000-8000-000000000000",
	"regex":         ".*",
	"json-pointer":  "/a",
}

func (g *gen) str(m map[string]any, name string) any {
	var s string
	if f, ok := m["format"].(string); ok && formats[f] != "" {
		s = formats[f]
	} else if name == "message" && g.action != "" {
		s = fmt.Sprintf("Mock reply to %q.", g.action)
	} else if name == "" {
		s = "sample text" + g.ordinal
	} else {
		s = fmt.Sprintf("sample %s%s", name, g.ordinal)
		if g.attempt > 0 {
			s += fmt.Sprintf(" %d", g.pick(1000))
		}
	}
	minLen, maxLen := 0, math.MaxInt
	if f := num(m["minLength"]); !math.IsNaN(f) {
		minLen = count(f)
	}
	if f := num(m["maxLength"]); !math.IsNaN(f) {
		maxLen = count(f)
	}
	r := []rune(s)
	if minLen > len(r) {
		g.b.spend(minLen - len(r)) // before making it: minLength may be 1e9
		r = append(r, []rune(strings.Repeat(".", minLen-len(r)))...)
	}
	if maxLen >= 0 && len(r) > maxLen {
		r = r[:maxLen]
	}
	return string(r)
}

// count is a schema's count (minItems, maxLength, …) as an int, saturated:
// the schema may say 1e300, which int() would turn into anything.
func count(f float64) int {
	switch {
	case f <= 0:
		return 0
	case f >= 1<<40:
		return 1 << 40
	}
	return int(f)
}
