package js

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/gen/model"
)

// The acceptors are the runtime's check of what arrives from the host: one
// predicate per host→app frame, composed of the small combinators in
// runtime-js/src/validate-core.js (aString, aStruct, …), true exactly when the full
// validator finds no violation. They carry no paths or rule ids, so they are
// a fraction of the descriptors' size, and a bundle keeps only the
// combinators the schemas use.

// acceptData is one exported acceptor.
type acceptData struct{ Type, Fn, Lit string }

// pure marks a combinator call as free of side effects, so a bundle that
// does not use an acceptor (dist/frames.mjs) drops it.
const pure = "/* @__PURE__ */ "

// indexKey matches property names that JS orders before all others in an
// object literal; aStruct relies on the written order of its fields.
var indexKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(0|[1-9][0-9]*)$`) })

// acceptor renders one type as a combinator expression; sub renders nested
// types.
func acceptor(t *model.Type, sub func(*model.Type) string) (string, error) {
	elem := func() string {
		if t.Elem == nil {
			return "anything"
		}
		return sub(t.Elem)
	}
	switch t.Kind {
	case model.String:
		if err := onlyBounds(t, "minLength", "maxLength", "enum", "const", "pattern"); err != nil {
			return "", err
		}
		return stringAcceptor(t)
	case model.Integer, model.Number:
		if err := onlyBounds(t, "minimum", "maximum"); err != nil {
			return "", err
		}
		name := "anInteger"
		if t.Kind == model.Number {
			name = "aNumber"
		}
		return pureCall(name, num64(t.Minimum), num64(t.Maximum)), nil
	case model.Boolean, model.Any, model.Scalar:
		if err := onlyBounds(t); err != nil {
			return "", err
		}
		return map[model.Kind]string{model.Boolean: "aBoolean", model.Any: "anything", model.Scalar: "aScalar"}[t.Kind], nil
	case model.RawObject, model.Map:
		if err := onlyBounds(t, "maxProperties", "propertyNames"); err != nil {
			return "", err
		}
		if t.Kind == model.RawObject && t.MaxProperties == nil {
			if t.KeyMinLength != nil || t.KeyMaxLength != nil {
				return "", fmt.Errorf("propertyNames on an object without value type")
			}
			return "isObject", nil
		}
		if t.KeyMinLength != nil || t.KeyMaxLength != nil {
			return pureCall("aKeyedMap", elem(), num(t.MaxProperties), num(t.KeyMinLength), num(t.KeyMaxLength)), nil
		}
		return pureCall("aMap", elem(), num(t.MaxProperties)), nil
	case model.Array:
		if err := onlyBounds(t, "minItems", "maxItems"); err != nil {
			return "", err
		}
		return pureCall("anArray", elem(), num(t.MinItems), num(t.MaxItems)), nil
	case model.Struct:
		if err := onlyBounds(t); err != nil {
			return "", err
		}
		return structAcceptor(t.Object, sub)
	}
	return "", fmt.Errorf("kind %v has no acceptor (runtime-js/src/validate-core.js)", t.Kind)
}

// stringAcceptor is the acceptor of a string type: its fixed values (enum
// or const), or its length bounds and pattern.
func stringAcceptor(t *model.Type) (string, error) {
	if t.Pattern != "" && (t.Const != nil || len(t.Enum) > 0) {
		return "", fmt.Errorf("pattern with enum or const on a string: the runtime's acceptors check one")
	}
	var fixed []string // the only values allowed, when enum or const says
	switch {
	case t.Const != nil && len(t.Enum) > 0:
		return "", fmt.Errorf("both enum and const on a string: the runtime's acceptors check one")
	case t.Const != nil:
		fixed = []string{*t.Const}
	case len(t.Enum) > 0:
		fixed = t.Enum
	}
	bounded := t.MinLength != nil && *t.MinLength > 0 || t.MaxLength != nil
	if fixed == nil {
		if !bounded && t.Pattern == "" {
			return "aText", nil
		}
		lo := "0"
		if t.MinLength != nil {
			lo = num(t.MinLength)
		}
		re := "void 0"
		if t.Pattern != "" {
			re = acceptRegex(t.Pattern)
		}
		return pureCall("aString", lo, num(t.MaxLength), re), nil
	}
	// Values that all meet the length bounds need no length check.
	for _, v := range fixed {
		n := utf8.RuneCountInString(v)
		if t.MinLength != nil && n < *t.MinLength || t.MaxLength != nil && n > *t.MaxLength {
			return "", fmt.Errorf("value %q is outside the string's own length bounds", v)
		}
	}
	// A const is the one value of a list: one combinator for both.
	return pure + "oneOf(" + jsonText(fixed) + ")", nil
}

// onlyBounds checks that t sets only the constraints in ok, the ones its
// kind's combinator checks; any other one is an error rather than a check
// silently left out.
func onlyBounds(t *model.Type, ok ...string) error {
	for _, b := range []struct {
		name string
		set  bool
	}{
		{"minLength", t.MinLength != nil}, {"maxLength", t.MaxLength != nil},
		{"minimum", t.Minimum != nil}, {"maximum", t.Maximum != nil},
		{"enum", len(t.Enum) > 0}, {"const", t.Const != nil}, {"pattern", t.Pattern != ""},
		{"minItems", t.MinItems != nil}, {"maxItems", t.MaxItems != nil},
		{"maxProperties", t.MaxProperties != nil},
		{"propertyNames", t.KeyMinLength != nil || t.KeyMaxLength != nil},
	} {
		if b.set && !contains(ok, b.name) {
			return fmt.Errorf("%s on a %v: the runtime's acceptors have no check for it (runtime-js/src/validate-core.js)", b.name, t.Kind)
		}
	}
	return nil
}

// num and num64 are a bound as a JS argument, void 0 when absent.
func num(p *int) string {
	if p == nil {
		return "void 0"
	}
	return fmt.Sprint(*p)
}

func num64(p *int64) string {
	if p == nil {
		return "void 0"
	}
	return fmt.Sprint(*p)
}

// pureCall renders a pure call name(args…) without trailing absent arguments.
func pureCall(name string, args ...string) string {
	for len(args) > 0 && args[len(args)-1] == "void 0" {
		args = args[:len(args)-1]
	}
	return pure + name + "(" + strings.Join(args, ",") + ")"
}

// structAcceptor renders aStruct({fields, required ones first}, number
// required[, conditions]).
func structAcceptor(o *model.Object, sub func(*model.Type) string) (string, error) {
	if o == nil {
		return "", fmt.Errorf("a struct without fields")
	}
	if o.Strict {
		return "", fmt.Errorf("object %q is strict (additionalProperties false): the runtime's acceptors have no check for it (runtime-js/src/validate-core.js)", o.Name)
	}
	var req, opt []string
	for _, f := range o.Fields {
		if indexKey().MatchString(f.Name) {
			return "", fmt.Errorf("field %q is an array index, which JS orders first: aStruct relies on field order", f.Name)
		}
		lit := jsonText(f.Name) + ":" + sub(f.Type)
		if f.Required {
			req = append(req, lit)
		} else {
			opt = append(opt, lit)
		}
	}
	s := pure + "aStruct({" + strings.Join(append(req, opt...), ",") + "}," + fmt.Sprint(len(req))
	if len(o.Conds) > 0 {
		var conds []string
		for _, c := range o.Conds {
			cond, err := condAcceptor(o, c, sub)
			if err != nil {
				return "", err
			}
			conds = append(conds, "["+whenAcceptor(c.When)+","+cond+"]")
		}
		s += ",[" + strings.Join(conds, ",") + "]"
	}
	return s + ")", nil
}

// whenAcceptor renders a condition's if as an aStruct that requires each of
// its fields with its one value (oneOf([value])): aStruct applies a
// condition's acceptor when this one holds.
func whenAcceptor(when []model.Pin) string {
	var fields []string
	for _, w := range when {
		fields = append(fields, jsonText(w.Field)+":"+pure+"oneOf(["+jsonText(w.Equals)+"])")
	}
	return pure + "aStruct({" + strings.Join(fields, ",") + "}," + fmt.Sprint(len(when)) + ")"
}

// condAcceptor renders what a condition asks of the whole object o as an
// aStruct of its own: the fields it requires and, optional, the fields it
// pins (oneOf([value]): absent, or that value). aStruct applies it when the
// condition's fields have their values (whenAcceptor): one combinator for
// fields, conditions and what they ask. A required field's value is checked by o's own fields, so
// any acceptor true of its valid values would do: its own when that is a
// one-step check (the same text as in o's fields, which gzip takes for
// less), isObject for an object (not its fields again: a db result can be
// megabytes), else anything.
func condAcceptor(o *model.Object, c model.Cond, sub func(*model.Type) string) (string, error) {
	var fields []string
	for _, n := range c.Require {
		accept := "anything"
		for _, f := range o.Fields {
			if f.Name != n {
				continue
			}
			switch own := sub(f.Type); {
			case slices.Contains([]string{"aBoolean", "aText", "aScalar", "isObject"}, own):
				accept = own
			case f.Type.Kind == model.Struct || f.Type.Kind == model.Map || f.Type.Kind == model.RawObject:
				accept = "isObject"
			}
		}
		fields = append(fields, jsonText(n)+":"+accept)
	}
	for _, p := range c.Pins {
		fields = append(fields, jsonText(p.Field)+":"+pure+"oneOf(["+jsonText(p.Equals)+"])")
	}
	for _, n := range append(slices.Clone(c.Require), pinFields(c.Pins)...) {
		if indexKey().MatchString(n) {
			return "", fmt.Errorf("field %q is an array index, which JS orders first: aStruct relies on field order", n)
		}
	}
	return pure + "aStruct({" + strings.Join(fields, ",") + "}," + fmt.Sprint(len(c.Require)) + ")", nil
}

func pinFields(pins []model.Pin) []string {
	var names []string
	for _, p := range pins {
		names = append(names, p.Field)
	}
	return names
}

// acceptHoister renders acceptors and hoists every expression that occurs
// more than once into a shared const.
type acceptHoister struct {
	count  map[string]int
	names  map[string]string
	shared []nameValue
	err    error
	// titled names the expression of a titled object: hoisted, it is that
	// object's exported acceptor itself (acceptTheme), not a const and an
	// alias of it.
	titled map[string]string
}

// inline renders t with nothing hoisted: the key that counts occurrences.
func (h *acceptHoister) inline(t *model.Type) string {
	s, err := acceptor(t, h.inline)
	if err != nil && h.err == nil {
		h.err = err
	}
	return s
}

func (h *acceptHoister) countType(t *model.Type) {
	key := h.inline(t)
	h.count[key]++
	if h.count[key] > 1 {
		return // its parts are rendered once, inside its hoisted const
	}
	if t.Kind == model.Struct && t.Object != nil {
		for _, f := range t.Object.Fields {
			h.countType(f.Type)
		}
	}
	if t.Elem != nil {
		h.countType(t.Elem)
	}
}

// typ renders t, hoisting it when it occurs twice or more and is a call.
func (h *acceptHoister) typ(t *model.Type) string {
	key := h.inline(t)
	lit, err := acceptor(t, h.typ)
	if err != nil && h.err == nil {
		h.err = err
	}
	if h.count[key] < 2 || !strings.HasSuffix(lit, ")") {
		return lit
	}
	if n, ok := h.names[key]; ok {
		return n
	}
	n, title := fmt.Sprintf("a%d", len(h.shared)), h.titled[key]
	if title != "" {
		n = "accept" + title
	}
	h.names[key] = n
	h.shared = append(h.shared, nameValue{Name: n, Value: title, Lit: lit})
	return n
}

// prepareAcceptors fills d.Accepts (one per host→app frame), d.AcceptObjects
// (one per titled object those frames reach) and d.AcceptShared.
func prepareAcceptors(m *model.Model, d *data) error {
	h := &acceptHoister{count: map[string]int{}, names: map[string]string{}, titled: map[string]string{}}
	var bodies []*model.Type
	for _, f := range m.Frames {
		if f.Direction == model.HostToApp {
			bodies = append(bodies, &model.Type{Kind: model.Struct, Object: f.Body})
		}
	}
	// Titled objects the host→app frames reach, in order, each once.
	var titled []*model.Object
	seen := map[string]bool{}
	var walk func(t *model.Type)
	walk = func(t *model.Type) {
		if t == nil {
			return
		}
		if t.Kind == model.Struct && t.Object != nil {
			if t.Object.Name != "" && !seen[t.Object.Name] {
				seen[t.Object.Name] = true
				titled = append(titled, t.Object)
			}
			for _, f := range t.Object.Fields {
				walk(f.Type)
			}
		}
		walk(t.Elem)
	}
	for _, b := range bodies {
		for _, f := range b.Object.Fields {
			walk(f.Type)
		}
		h.countType(b)
	}
	// Counted once more, so an object with an acceptor of its own is hoisted
	// and its export and the frames share one expression.
	for _, o := range titled {
		key := h.inline(&model.Type{Kind: model.Struct, Object: o})
		h.count[key]++
		h.titled[key] = o.Name
	}
	if h.err != nil {
		return fmt.Errorf("js: host→app frames: %w", h.err)
	}
	for _, f := range m.Frames {
		if f.Direction != model.HostToApp {
			continue
		}
		lit, err := structAcceptor(f.Body, h.typ)
		if err == nil {
			err = h.err
		}
		if err != nil {
			return fmt.Errorf("js: frame %s: %w", f.Type, err)
		}
		d.Accepts = append(d.Accepts, acceptData{Type: f.Type, Fn: "accept" + f.Title, Lit: lit})
	}
	for _, o := range titled {
		fn := "accept" + o.Name
		if lit := h.typ(&model.Type{Kind: model.Struct, Object: o}); lit != fn {
			d.AcceptObjects = append(d.AcceptObjects, acceptData{Type: o.Name, Fn: fn, Lit: lit})
		}
	}
	if h.err != nil {
		return fmt.Errorf("js: %w", h.err)
	}
	d.AcceptShared = h.shared
	return nil
}

// acceptRegex is the pattern p as the acceptors' JS literal: case-folded
// when that is the same language in fewer bytes, else regexLiteral(p). A
// pattern of ASCII classes, each holding both cases of every letter it
// holds (the BCP 47 locale's [A-Za-z], [A-Za-z0-9], [Xx]), with no letter,
// escape, dot, negated class or flag outside them, reads the same under the
// i flag without u with each class's upper case left out: without u a
// string is read by UTF-16 code units, which only a dot, a negated class or
// a class with a non-ASCII member would tell from code points, and i folds
// no non-ASCII character onto an ASCII one (ſ, K, ı stay themselves; with
// u they would match s, k, i). TestAcceptRegex holds the rewrite, and the
// node test of the case-folded locale pattern (runtime-js/test) holds the
// two to one verdict.
func acceptRegex(p string) string {
	if f, ok := foldedRegex(p); ok {
		return f
	}
	return regexLiteral(p)
}

func foldedRegex(p string) (string, bool) {
	var b strings.Builder
	b.WriteByte('/')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '[':
			end := strings.IndexByte(p[i:], ']')
			if end < 2 {
				return "", false
			}
			class, ok := foldedClass(p[i+1 : i+end])
			if !ok {
				return "", false
			}
			b.WriteString(class)
			i += end
		case c == '(' && strings.HasPrefix(p[i:], "(?:"):
			// A group captures: the same language for test(), two bytes
			// less (no escape here, so no backreference reads it).
			b.WriteByte(c)
			i += 2
		case c == '(' && strings.HasPrefix(p[i:], "(?"):
			return "", false // a flag group or a named group
		case strings.IndexByte("()?:{},|^$*+-0123456789", c) >= 0:
			b.WriteByte(c)
		default:
			return "", false // a letter, an escape, a dot, a slash, …
		}
	}
	return b.String() + "/i", true
}

// foldedClass renders the members of a bracket class (without its
// brackets) with its letters in lower case only, or says it cannot: a
// negated class, an escape, a non-ASCII member, a letter without its other
// case.
func foldedClass(body string) (string, bool) {
	var set [128]bool
	for i := 0; i < len(body); i++ {
		lo, hi := body[i], body[i]
		if i+2 < len(body) && body[i+1] == '-' {
			hi = body[i+2]
			i += 2
		}
		if lo > hi || hi >= 128 || lo == '\\' || lo == '^' && i == 0 || lo == '[' || hi == '\\' {
			return "", false
		}
		for c := lo; c <= hi; c++ {
			set[c] = true
		}
	}
	var members []byte
	for c := byte(0); c < 128; c++ {
		if !set[c] {
			continue
		}
		switch {
		case 'A' <= c && c <= 'Z':
			if !set[c+'a'-'A'] {
				return "", false
			}
		case 'a' <= c && c <= 'z':
			if !set[c-'a'+'A'] {
				return "", false
			}
			members = append(members, c)
		case '0' <= c && c <= '9' || c == '-' || c == '_':
			members = append(members, c)
		default:
			return "", false
		}
	}
	if len(members) == 1 && members[0] != '-' {
		return string(members), true // [Xx] is x under the i flag
	}
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(members); {
		j := i
		for j+1 < len(members) && members[j+1] == members[j]+1 {
			j++
		}
		switch {
		case members[i] == '0' && members[j] == '9':
			b.WriteString(`\d`)
		case j-i >= 2:
			b.WriteString(string(members[i]) + "-" + string(members[j]))
		default:
			j = i
			if members[i] == '-' {
				b.WriteString(`\-`)
			} else {
				b.WriteByte(members[i])
			}
		}
		i = j + 1
	}
	b.WriteByte(']')
	if b.Len() == 4 && strings.HasPrefix(b.String(), `[\d`) {
		return `\d`, true
	}
	return b.String(), true
}
