package js

import (
	"fmt"
	"regexp"
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
	type bound struct {
		name string
		set  bool
	}
	// only lists the constraints a kind's combinator checks; any other one
	// set on the type is an error rather than a check silently left out.
	only := func(ok ...string) error {
		for _, b := range []bound{
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
	num := func(p *int) string {
		if p == nil {
			return "void 0"
		}
		return fmt.Sprint(*p)
	}
	num64 := func(p *int64) string {
		if p == nil {
			return "void 0"
		}
		return fmt.Sprint(*p)
	}
	// call renders name(args…) without trailing absent arguments.
	call := func(name string, args ...string) string {
		for len(args) > 0 && args[len(args)-1] == "void 0" {
			args = args[:len(args)-1]
		}
		return pure + name + "(" + strings.Join(args, ",") + ")"
	}
	elem := func() string {
		if t.Elem == nil {
			return "anything"
		}
		return sub(t.Elem)
	}
	switch t.Kind {
	case model.String:
		if err := only("minLength", "maxLength", "enum", "const", "pattern"); err != nil {
			return "", err
		}
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
				re = regexLiteral(t.Pattern)
			}
			return call("aString", lo, num(t.MaxLength), re), nil
		}
		// Values that all meet the length bounds need no length check.
		for _, v := range fixed {
			n := utf8.RuneCountInString(v)
			if t.MinLength != nil && n < *t.MinLength || t.MaxLength != nil && n > *t.MaxLength {
				return "", fmt.Errorf("value %q is outside the string's own length bounds", v)
			}
		}
		if t.Const != nil {
			return pure + "is(" + jsonText(*t.Const) + ")", nil
		}
		return pure + "oneOf(" + jsonText(t.Enum) + ")", nil
	case model.Integer, model.Number:
		if err := only("minimum", "maximum"); err != nil {
			return "", err
		}
		name := "anInteger"
		if t.Kind == model.Number {
			name = "aNumber"
		}
		return call(name, num64(t.Minimum), num64(t.Maximum)), nil
	case model.Boolean, model.Any, model.Scalar:
		if err := only(); err != nil {
			return "", err
		}
		return map[model.Kind]string{model.Boolean: "aBoolean", model.Any: "anything", model.Scalar: "aScalar"}[t.Kind], nil
	case model.RawObject, model.Map:
		if err := only("maxProperties", "propertyNames"); err != nil {
			return "", err
		}
		if t.Kind == model.RawObject && t.MaxProperties == nil {
			if t.KeyMinLength != nil || t.KeyMaxLength != nil {
				return "", fmt.Errorf("propertyNames on an object without value type")
			}
			return "isObject", nil
		}
		return call("aMap", elem(), num(t.MaxProperties), num(t.KeyMinLength), num(t.KeyMaxLength)), nil
	case model.Array:
		if err := only("minItems", "maxItems"); err != nil {
			return "", err
		}
		return call("anArray", elem(), num(t.MinItems), num(t.MaxItems)), nil
	case model.Struct:
		if err := only(); err != nil {
			return "", err
		}
		return structAcceptor(t.Object, sub)
	}
	return "", fmt.Errorf("kind %v has no acceptor (runtime-js/src/validate-core.js)", t.Kind)
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
			conds = append(conds, "["+strings.Join(condParts(c), ",")+"]")
		}
		s += ",[" + strings.Join(conds, ",") + "]"
	}
	return s + ")", nil
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
