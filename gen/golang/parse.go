package golang

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/snuggen/snuggen/gen/model"
)

var (
	dID = jen.Id("d")
	cID = jen.Id("c")
)

func cAdd(seg jen.Code, rule, msg string) *jen.Statement {
	return jen.Id("c").Dot("Add").Call(seg, jen.Id(rule), jen.Lit(msg))
}

func skipChecked() *jen.Statement { return jen.Id("d").Dot("SkipChecked").Call() }

// seg is a path segment for violations: a literal key, an expression (a map
// key variable) or empty (the current path, inside an array element).
type seg struct {
	code  jen.Code
	empty bool
}

func litSeg(k string) seg { return seg{code: jen.Lit(k)} }
func emptySeg() seg       { return seg{code: jen.Lit(""), empty: true} }
func (s seg) push() jen.Code {
	if s.empty {
		return jen.Null()
	}
	return jen.Id("c").Dot("Push").Call(s.code)
}
func (s seg) pop() jen.Code {
	if s.empty {
		return jen.Null()
	}
	return jen.Id("c").Dot("Pop").Call()
}

// sink is where a decoded value goes: direct is a target the value is
// assigned to as is ("f.AppID, _ = readString(…)"), nil when assign must
// build the statement (a pointer, an append, a map entry, a condition bit).
type sink struct {
	direct *jen.Statement
	assign func(v jen.Code) jen.Code
}

// readers are the hand-written readers (frame/read.go) of the scalar kinds.
var readers = map[model.Kind]string{
	model.String:  "readString",
	model.Boolean: "readBool",
	model.Integer: "readInt",
	model.Number:  "readNumber",
	model.Scalar:  "readScalar",
}

// decodeValue emits statements that decode the next value as t into out; a
// value of another type is a type violation at key (a Go string expression,
// "" for the current path) and is skipped.
func (g *gen) decodeValue(t *model.Type, out sink, key jen.Code, depth int) []jen.Code {
	v := fmt.Sprintf("v%d", depth)
	assign := out.assign
	switch t.Kind {
	case model.String, model.Boolean, model.Integer, model.Number, model.Scalar:
		call := jen.Id(readers[t.Kind]).Call(dID, cID, key)
		if out.direct != nil {
			return []jen.Code{jen.List(out.direct, jen.Id("_")).Op("=").Add(call)}
		}
		return []jen.Code{jen.If(jen.List(jen.Id(v), jen.Id("ok")).Op(":=").Add(call), jen.Id("ok")).Block(assign(jen.Id(v)))}
	case model.Any, model.RawObject:
		call := jen.Id("readAny").Call(dID)
		if t.Kind == model.RawObject {
			call = jen.Id("readRawObject").Call(dID, cID, key)
		}
		if out.direct != nil {
			return []jen.Code{jen.List(out.direct, jen.Id("_")).Op("=").Add(call)}
		}
		return []jen.Code{jen.If(jen.List(jen.Id(v), jen.Id("ok")).Op(":=").Add(call), jen.Id("ok")).Block(assign(jen.Id(v)))}
	case model.Struct:
		return []jen.Code{jen.If(jen.Id("beginObject").Call(dID, cID, key)).Block(
			jen.Id(v).Op(":=").New(jen.Id(t.Object.Name)),
			jen.Id(v).Dot("decode").Call(dID, cID),
			jen.Id("end").Call(cID, key),
			assign(jen.Id(v)),
		)}
	case model.Map:
		m, k := fmt.Sprintf("m%d", depth), fmt.Sprintf("k%d", depth)
		body := []jen.Code{
			jen.List(jen.Id(k), jen.Id("ok")).Op(":=").Add(dID).Dot("Key").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Break()),
			jen.If(jen.List(jen.Id("_"), jen.Id("dup")).Op(":=").Id(m).Index(jen.Id(k)), jen.Id("dup")).Block(
				jen.Id("d").Dot("MarkDup").Call(),
			),
			// The entry's own path: a key may be "" (its pointer ends in "/").
			jen.Id("c").Dot("Push").Call(jen.Id(k)),
		}
		// Every key is entered in the map, a value of the wrong type too (as
		// its zero value), so that a key named again is a duplicate whatever
		// the first value was: frame.duplicate-key, as JSON.parse's reader says.
		entry := jen.Id(m).Index(jen.Id(k))
		elem := sink{assign: func(x jen.Code) jen.Code { return entry.Clone().Op("=").Add(x) }}
		switch t.Elem.Kind {
		case model.Struct, model.Map, model.Array:
		default:
			elem.direct = entry.Clone() // the reader's zero value when it fails
		}
		body = append(body, g.decodeValue(t.Elem, elem, jen.Lit(""), depth+1)...)
		if elem.direct == nil {
			body = append(body, jen.If(jen.List(jen.Id("_"), jen.Id("in")).Op(":=").Add(entry.Clone()), jen.Op("!").Id("in")).Block(
				entry.Clone().Op("=").Op("*").New(g.goType(t.Elem, false)),
			))
		}
		body = append(body, jen.Id("c").Dot("Pop").Call())
		return []jen.Code{jen.If(jen.Id("beginObject").Call(dID, cID, key)).Block(
			jen.Id(m).Op(":=").Map(jen.String()).Add(g.goType(t.Elem, false)).Values(),
			jen.For(jen.Id("first").Op(":=").True(), jen.Add(dID).Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(body...),
			jen.Id("end").Call(cID, key),
			assign(jen.Id(m)),
		)}
	case model.Array:
		sl, i := fmt.Sprintf("s%d", depth), fmt.Sprintf("i%d", depth)
		body := []jen.Code{jen.Id("c").Dot("PushIndex").Call(jen.Id(i))}
		body = append(body, g.decodeValue(t.Elem, sink{assign: func(x jen.Code) jen.Code { return jen.Id(sl).Op("=").Append(jen.Id(sl), x) }}, jen.Lit(""), depth+1)...)
		body = append(body, jen.Id("c").Dot("Pop").Call())
		return []jen.Code{jen.If(jen.Id("beginArray").Call(dID, cID, key)).Block(
			jen.Id(sl).Op(":=").Index().Add(g.goType(t.Elem, false)).Values(),
			jen.For(jen.Id(i).Op(":=").Lit(0), jen.Add(dID).Dot("ArrMore").Call(jen.Id(i).Op("==").Lit(0)), jen.Id(i).Op("++")).Block(body...),
			jen.Id("end").Call(cID, key),
			assign(jen.Id(sl)),
		)}
	}
	panic("golang: unknown kind")
}

func bit(i int) jen.Code { return jen.Parens(jen.Lit(1).Op("<<").Lit(i)) }

// decodeObject emits (*Name).decode, which reads the members of an object
// whose '{' has been consumed: shape checks only (type, required, additional
// properties, duplicate keys, conditional requirements).
func (g *gen) decodeObject(f *jen.File, name string, o *model.Object, top bool) {
	od := newObjDecode(o)
	var cases []jen.Code
	if top {
		cases = append(cases,
			jen.Case(jen.Lit("v")).Block(markSeen(0), skipChecked()),
			jen.Case(jen.Lit("type")).Block(markSeen(1), skipChecked()),
		)
	}
	for _, fl := range o.Fields {
		cases = append(cases, g.fieldCase(od, fl))
	}
	cases = append(cases, jen.Default().Block(jen.Id("unknownKey").Call(dID, cID, jen.Op("&").Id("unknown"), jen.Id("key"), jen.Lit(o.Strict))))
	after := g.requiredChecks(od)
	vars := []jen.Code{jen.Var().Id("unknown").Qual(jsonscanPkg, "KeySet")}
	params := []jen.Code{jen.Id("d").Op("*").Qual(jsonscanPkg, "Decoder"), jen.Id("c").Op("*").Qual(violationPkg, "Collector")}
	firstIs := jen.True()
	if top {
		// Parse's header read v and type; when they led the object it goes
		// on from there (got has their bits) instead of reading them again.
		params = append(params, jen.Id("got").Uint64())
		firstIs = jen.Id("got").Op("==").Lit(0)
	} else {
		vars = append([]jen.Code{jen.Var().Id("got").Uint64()}, vars...)
	}
	if len(od.reqConds) > 0 {
		vars = append(vars, jen.Var().Id("have").Uint64())
	}
	if top {
		f.Commentf("decode reads the members of a %s after its '{', or after the members got", name)
		f.Comment("names (v and type, read by Parse's header) when they led the object.")
	} else {
		f.Commentf("decode reads the members of a %s after its '{'.", name)
	}
	f.Func().Params(jen.Id("f").Op("*").Id(name)).Id("decode").Params(params...).BlockFunc(func(b *jen.Group) {
		for _, v := range vars {
			b.Add(v)
		}
		b.For(jen.Id("first").Op(":=").Add(firstIs), jen.Id("d").Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(
			jen.List(jen.Id("key"), jen.Id("ok")).Op(":=").Id("d").Dot("Key").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return()),
			jen.Switch(jen.Id("key")).Block(cases...),
		)
		for _, a := range after {
			b.Add(a)
		}
	})
}

// objDecode is the layout of an object's decoder: each field's bit in got
// and have, and the conditions whose fields it records in have.
type objDecode struct {
	o         *model.Object
	fieldBit  map[string]int
	condField map[string]bool
	reqConds  []model.Cond // the conditions the shape stage checks
}

func newObjDecode(o *model.Object) *objDecode {
	const first = 2 // bits 0 and 1 are v and type on a frame
	od := &objDecode{o: o, fieldBit: map[string]int{}, condField: map[string]bool{}}
	for i, fl := range o.Fields {
		od.fieldBit[fl.Name] = first + i
	}
	for _, c := range o.Conds {
		if len(c.Require) > 0 {
			for _, w := range c.When {
				od.condField[w.Field] = true
			}
			od.reqConds = append(od.reqConds, c)
		}
	}
	return od
}

// markSeen marks member bit b seen in got.
func markSeen(b int) jen.Code { return jen.Id("seen").Call(dID, jen.Op("&").Id("got"), jen.Lit(b)) }

// fieldCase is the decoder's case for field fl.
func (g *gen) fieldCase(od *objDecode, fl *model.Field) jen.Code {
	b := od.fieldBit[fl.Name]
	target := jen.Id("f").Dot(goName(fl.Name))
	scalar := fl.Type.Kind == model.String || fl.Type.Kind == model.Integer || fl.Type.Kind == model.Number || fl.Type.Kind == model.Boolean
	optPtr := !fl.Required && scalar
	out := sink{assign: func(x jen.Code) jen.Code {
		var st []jen.Code
		switch {
		case optPtr:
			st = append(st, target.Clone().Op("=").Op("&").Add(x))
		case fl.Type.Kind == model.Struct && fl.Required:
			st = append(st, target.Clone().Op("=").Op("*").Add(x))
		default:
			st = append(st, target.Clone().Op("=").Add(x))
		}
		if od.condField[fl.Name] {
			st = append(st, jen.Id("have").Op("|=").Add(bit(b)))
		}
		out := jen.Add(st[0])
		for _, x := range st[1:] {
			out.Line().Add(x)
		}
		return out
	}}
	if !optPtr && !od.condField[fl.Name] && fl.Type.Kind != model.Struct {
		out.direct = target.Clone()
	}
	body := []jen.Code{markSeen(b)}
	body = append(body, g.decodeValue(fl.Type, out, jen.Lit(fl.Name), 0)...)
	return jen.Case(jen.Lit(fl.Name)).Block(body...)
}

// requiredChecks are the checks after the members: required fields, and
// the fields a condition requires.
func (g *gen) requiredChecks(od *objDecode) []jen.Code {
	var after []jen.Code
	for _, fl := range od.o.Fields {
		if fl.Required {
			after = append(after, jen.Id("required").Call(cID, jen.Id("got"), jen.Lit(od.fieldBit[fl.Name]), jen.Lit(fl.Name)))
		}
	}
	for _, c := range od.reqConds {
		// A field of the condition counts once decoded with the value
		// (have), not merely seen (got): a mistyped one does not hold.
		var cond *jen.Statement
		for _, w := range c.When {
			val := jen.Id("f").Dot(goName(w.Field))
			if !fieldByName(od.o, w.Field).Required {
				val = jen.Op("*").Add(val)
			}
			term := jen.Id("have").Op("&").Add(bit(od.fieldBit[w.Field])).Op("!=").Lit(0).Op("&&").Add(val).Op("==").Lit(w.Equals)
			if cond == nil {
				cond = term
			} else {
				cond = cond.Op("&&").Add(term)
			}
		}
		var reqs []jen.Code
		for _, r := range c.Require {
			reqs = append(reqs, jen.If(jen.Id("got").Op("&").Add(bit(od.fieldBit[r])).Op("==").Lit(0)).Block(
				cAdd(jen.Lit(r), ruleConst("schema-required"), g.m.Rules.Message("requiredWhen", map[string]string{"when": g.m.Rules.When(c.When)})),
			))
		}
		after = append(after, jen.If(cond).Block(reqs...))
	}
	return after
}

// jsonLit is v (a string or a bool) as JSON text, as JSON.stringify writes it.
func jsonLit(v any) string { return model.JSONText(v) }

// limitMsg fills the {limit} of a keyword's message.
func (g *gen) limitMsg(key string, n any) string {
	return g.m.Rules.Message(key, map[string]string{"limit": fmt.Sprint(n)})
}

// constrained reports whether a value of type t has value-stage checks.
func (g *gen) constrained(t *model.Type) bool {
	switch t.Kind {
	case model.String:
		return t.MinLength != nil || t.MaxLength != nil || t.Enum != nil || t.Const != nil || t.Pattern != ""
	case model.Integer, model.Number:
		return t.Minimum != nil || t.Maximum != nil
	case model.Array:
		return t.MinItems != nil || t.MaxItems != nil || g.constrained(t.Elem)
	case model.Map:
		return t.MaxProperties != nil || t.KeyMinLength != nil || t.KeyMaxLength != nil || g.constrained(t.Elem)
	case model.Struct:
		return g.objConstrained(t.Object)
	}
	return false
}

func (g *gen) objConstrained(o *model.Object) bool {
	for _, c := range o.Conds {
		if len(c.Pins) > 0 {
			return true
		}
	}
	for _, fl := range o.Fields {
		if g.constrained(fl.Type) {
			return true
		}
	}
	return false
}

func stringChecks(minL, maxL *int, v jen.Code, s seg) []jen.Code {
	var out []jen.Code
	if minL != nil {
		out = append(out, jen.Id("minLen").Call(cID, s.code, v, jen.Lit(*minL)))
	}
	if maxL != nil {
		out = append(out, jen.Id("maxLen").Call(cID, s.code, v, jen.Lit(*maxL)))
	}
	return out
}

// checkValue emits the value-stage checks of v (a Go expression of type t).
func (g *gen) checkValue(t *model.Type, v jen.Code, s seg, depth int) []jen.Code {
	var out []jen.Code
	switch t.Kind {
	case model.String:
		out = append(out, stringChecks(t.MinLength, t.MaxLength, v, s)...)
		if t.Enum != nil {
			out = append(out, jen.Switch(v).Block(
				jen.Case(lits(t.Enum)...),
				jen.Default().Block(cAdd(s.code, ruleConst("schema-enum"), g.m.Rules.Message("enum", map[string]string{"values": strings.Join(t.Enum, ", ")}))),
			))
		}
		if t.Const != nil {
			out = append(out, jen.If(jen.Add(v).Op("!=").Lit(*t.Const)).Block(cAdd(s.code, ruleConst("schema-const"), g.m.Rules.Message("const", map[string]string{"value": jsonLit(*t.Const)}))))
		}
		if t.Pattern != "" {
			out = append(out, jen.If(jen.Op("!").Id(g.patterns[t]).Call().Dot("MatchString").Call(v)).Block(cAdd(s.code, ruleConst("schema-pattern"), g.m.Rules.Message("pattern", map[string]string{"pattern": t.Pattern}))))
		}
	case model.Integer, model.Number:
		if t.Minimum != nil {
			out = append(out, jen.If(jen.Add(v).Op("<").Lit(int(*t.Minimum))).Block(cAdd(s.code, ruleConst("schema-minimum"), g.limitMsg("minimum", *t.Minimum))))
		}
		if t.Maximum != nil {
			out = append(out, jen.If(jen.Add(v).Op(">").Lit(int(*t.Maximum))).Block(cAdd(s.code, ruleConst("schema-maximum"), g.limitMsg("maximum", *t.Maximum))))
		}
	case model.Array:
		if t.MinItems != nil {
			out = append(out, jen.If(jen.Len(v).Op("<").Lit(*t.MinItems)).Block(cAdd(s.code, ruleConst("schema-minItems"), g.limitMsg("minItems", *t.MinItems))))
		}
		if t.MaxItems != nil {
			out = append(out, jen.If(jen.Len(v).Op(">").Lit(*t.MaxItems)).Block(cAdd(s.code, ruleConst("schema-maxItems"), g.limitMsg("maxItems", *t.MaxItems))))
		}
		if g.constrained(t.Elem) {
			i, e := fmt.Sprintf("i%d", depth), fmt.Sprintf("e%d", depth)
			body := []jen.Code{jen.Id("c").Dot("PushIndex").Call(jen.Id(i))}
			body = append(body, g.checkValue(t.Elem, jen.Id(e), emptySeg(), depth+1)...)
			body = append(body, jen.Id("c").Dot("Pop").Call())
			out = append(out, s.push(), jen.For(jen.List(jen.Id(i), jen.Id(e)).Op(":=").Range().Add(v)).Block(body...), s.pop())
		}
	case model.Map:
		if t.MaxProperties != nil {
			out = append(out, jen.If(jen.Len(v).Op(">").Lit(*t.MaxProperties)).Block(cAdd(s.code, ruleConst("schema-maxProperties"), g.limitMsg("maxProperties", *t.MaxProperties))))
		}
		keyChecks := t.KeyMinLength != nil || t.KeyMaxLength != nil
		scan, collecting := g.collectKeys[t]
		if keyChecks || g.constrained(t.Elem) || collecting {
			k, e := fmt.Sprintf("k%d", depth), fmt.Sprintf("e%d", depth)
			var body []jen.Code
			if collecting {
				body = append(body, scan.perKey(jen.Id(k))...)
			}
			if keyChecks {
				lo, hi := -1, -1
				if t.KeyMinLength != nil {
					lo = *t.KeyMinLength
				}
				if t.KeyMaxLength != nil {
					hi = *t.KeyMaxLength
				}
				body = append(body, jen.Id("keyLen").Call(cID, jen.Id(k), jen.Lit(lo), jen.Lit(hi)))
			}
			if g.constrained(t.Elem) {
				// The entry's own path: a key may be "" (its pointer ends in "/").
				body = append(body, jen.Id("c").Dot("Push").Call(jen.Id(k)))
				body = append(body, g.checkValue(t.Elem, jen.Id(e), emptySeg(), depth+1)...)
				body = append(body, jen.Id("c").Dot("Pop").Call())
			}
			ev := jen.Id(e)
			if !g.constrained(t.Elem) {
				ev = jen.Id("_")
			}
			out = append(out, s.push(), jen.For(jen.List(jen.Id(k), ev).Op(":=").Range().Add(v)).Block(body...), s.pop())
		}
	case model.Struct:
		if g.objConstrained(t.Object) {
			out = append(out, s.push(), jen.Add(v).Dot("validate").Call(cID), s.pop())
		}
	}
	return out
}

// validateObject emits (*Name).validate: the value stage of a nested object.
func (g *gen) validateObject(f *jen.File, name string, o *model.Object) {
	f.Commentf("validate checks the values of a decoded %s (lengths, ranges, enums).", name)
	f.Func().Params(jen.Id("f").Op("*").Id(name)).Id("validate").Params(jen.Id("c").Op("*").Qual(violationPkg, "Collector")).Block(g.valueStmts(o)...)
}

// valueStmts are the value-stage checks of the fields of f, an *o, then
// the pins of its conditions.
func (g *gen) valueStmts(o *model.Object) []jen.Code {
	out := g.fieldValueStmts(o)
	for _, c := range o.Conds {
		for _, p := range c.Pins {
			out = append(out, jen.If(jen.Add(holds(o, c.When)).Op("&&").Add(compare(fieldByName(o, p.Field), "!=", p.Equals))).Block(
				cAdd(jen.Lit(p.Field), ruleConst("schema-const"), g.m.Rules.Message("constWhen", map[string]string{"value": jsonLit(p.Equals), "when": g.m.Rules.When(c.When)})),
			))
		}
	}
	return out
}

// holds is the Go condition "every field of when is present with its
// value" on f, an *o.
func holds(o *model.Object, when []model.Pin) *jen.Statement {
	var out *jen.Statement
	for _, w := range when {
		term := compare(fieldByName(o, w.Field), "==", w.Equals)
		if out == nil {
			out = jen.Add(term)
		} else {
			out = out.Op("&&").Add(term)
		}
	}
	return out
}

// compare is the Go condition "field fl of f is present and op (== or !=)
// v" (a string or a bool).
func compare(fl *model.Field, op string, v any) jen.Code {
	val := jen.Id("f").Dot(goName(fl.Name))
	if fl.Required {
		return val.Op(op).Lit(v)
	}
	return jen.Parens(val.Clone().Op("!=").Nil().Op("&&").Op("*").Add(val).Op(op).Lit(v))
}

// fieldValueStmts are the value-stage checks of the fields of f, an *o.
func (g *gen) fieldValueStmts(o *model.Object) []jen.Code {
	var out []jen.Code
	for _, fl := range o.Fields {
		if scan := g.collectKeys[fl.Type]; !g.constrained(fl.Type) && (scan == nil || scan.empty()) {
			continue
		}
		field := jen.Id("f").Dot(goName(fl.Name))
		isPtr := !fl.Required && (fl.Type.Kind == model.String || fl.Type.Kind == model.Integer || fl.Type.Kind == model.Number || fl.Type.Kind == model.Boolean || fl.Type.Kind == model.Struct)
		switch {
		case isPtr && fl.Type.Kind == model.Struct:
			out = append(out, jen.If(field.Clone().Op("!=").Nil()).Block(g.checkValue(fl.Type, field.Clone(), litSeg(fl.Name), 0)...))
		case isPtr:
			out = append(out, jen.If(jen.Id("p").Op(":=").Add(field), jen.Id("p").Op("!=").Nil()).Block(g.checkValue(fl.Type, jen.Op("*").Id("p"), litSeg(fl.Name), 0)...))
		case !fl.Required && (fl.Type.Kind == model.Array || fl.Type.Kind == model.Map):
			out = append(out, jen.If(field.Clone().Op("!=").Nil()).Block(g.checkValue(fl.Type, field.Clone(), litSeg(fl.Name), 0)...))
		case fl.Type.Kind == model.Struct:
			out = append(out, jen.Block(g.checkValue(fl.Type, jen.Parens(jen.Op("&").Add(field)), litSeg(fl.Name), 0)...))
		default:
			out = append(out, g.checkValue(fl.Type, field.Clone(), litSeg(fl.Name), 0)...)
		}
	}
	return out
}

func fieldByName(o *model.Object, name string) *model.Field {
	for _, fl := range o.Fields {
		if fl.Name == name {
			return fl
		}
	}
	return nil
}

// present is the Go condition "field is present" for a decoded field.
func present(fl *model.Field) jen.Code {
	if fl.Required {
		return jen.True()
	}
	return jen.Id("f").Dot(goName(fl.Name)).Op("!=").Nil()
}

// keyScan is what the value stage's walk over one map's keys records for the
// refinements on its keys, so that a valid frame walks the map once: whether
// a key may be in each listed set (an ASCII key through a length switch, the
// JS-exact lowercase only for other keys), and whether two keys may collide
// case-insensitively (a non-ASCII key, or two ASCII keys with the same
// jsonscan.FoldMark). The refinement stage walks the map again only when a
// flag is set, to name the keys; its verdict is the exact one.
type keyScan struct {
	field string
	notIn []model.Refinement // mapKeyNotInList
	fold  bool               // mapKeysUnique, case-insensitively
}

func (s *keyScan) empty() bool { return len(s.notIn) == 0 && !s.fold }

func (s *keyScan) inVar(x model.Refinement) string { return s.field + "In" + goName(x.List) }
func (s *keyScan) marksVar() string                { return s.field + "Marks" }
func (s *keyScan) foldVar() string                 { return s.field + "Fold" }

// decls declares the flags before the value stage.
func (s *keyScan) decls() []jen.Code {
	var out []jen.Code
	for _, x := range s.notIn {
		out = append(out, jen.Id(s.inVar(x)).Op(":=").False())
	}
	if s.fold {
		out = append(out, jen.List(jen.Id(s.marksVar()), jen.Id(s.foldVar())).Op(":=").List(jen.Uint64().Call(jen.Lit(0)), jen.False()))
	}
	return out
}

// perKey sets the flags for key k inside the value stage's loop.
func (s *keyScan) perKey(k jen.Code) []jen.Code {
	set := func(x model.Refinement, test jen.Code) jen.Code {
		return jen.Id(s.inVar(x)).Op("=").Id(s.inVar(x)).Op("||").Add(test)
	}
	var ascii, other, always []jen.Code
	for _, x := range s.notIn {
		if !x.CaseInsensitive {
			always = append(always, set(x, jen.Qual("slices", "Contains").Call(jen.Id(goName(x.List)), k)))
			continue
		}
		ascii = append(ascii, set(x, jen.Id(lowerInASCII(x.List)).Call(k)))
		other = append(other, set(x, jen.Qual(jsonscanPkg, "InLowerJS").Call(jen.Id(goName(x.List)), k)))
	}
	if s.fold {
		ascii = append(ascii,
			jen.Id("mark").Op(":=").Qual(jsonscanPkg, "FoldMark").Call(k),
			jen.Id(s.foldVar()).Op("=").Id(s.foldVar()).Op("||").Id(s.marksVar()).Op("&").Id("mark").Op("!=").Lit(0),
			jen.Id(s.marksVar()).Op("|=").Id("mark"))
		other = append(other, jen.Id(s.foldVar()).Op("=").True())
	}
	var out []jen.Code
	if len(ascii) > 0 {
		out = append(out, jen.If(jen.Qual(jsonscanPkg, "IsASCII").Call(k)).Block(ascii...).Else().Block(other...))
	}
	return append(out, always...)
}

// lowerInASCIIFuncs emits lowerInASCII(list) for every list a case-insensitive
// mapKeyNotInList refinement names: a switch on the length, then one ASCII
// case-folding comparison per entry of that length (check made sure the
// entries are lower-case ASCII).
func (g *gen) lowerInASCIIFuncs(f *jen.File) {
	done := map[string]bool{}
	for _, x := range g.m.Rules.Refinements {
		if x.Kind != model.MapKeyNotInList || !x.CaseInsensitive || done[x.List] {
			continue
		}
		done[x.List] = true
		byLen := map[int][]string{}
		var lens []int
		for _, v := range g.m.Rules.List(x.List) {
			if byLen[len(v)] == nil {
				lens = append(lens, len(v))
			}
			byLen[len(v)] = append(byLen[len(v)], v)
		}
		sort.Ints(lens)
		var cases []jen.Code
		for _, n := range lens {
			var or []jen.Code
			for i, v := range byLen[n] {
				if i > 0 {
					or = append(or, jen.Op("||"))
				}
				or = append(or, jen.Qual(asciiPkg, "EqualFold").Call(jen.Id("s"), jen.Lit(v)))
			}
			cases = append(cases, jen.Case(jen.Lit(n)).Block(jen.Return(jen.Add(or...))))
		}
		f.Commentf("%s is jsonscan.InLowerJS(%s, s) for an ASCII s.", lowerInASCII(x.List), goName(x.List))
		f.Func().Id(lowerInASCII(x.List)).Params(jen.Id("s").String()).Bool().Block(
			jen.Switch(jen.Len(jen.Id("s"))).Block(cases...),
			jen.Return(jen.False()),
		)
	}
}

// lowerInASCII names the function that reports whether an ASCII key,
// lowercased, is in list.
func lowerInASCII(list string) string { return "lowerIn" + goName(list) + "ASCII" }

func (g *gen) urlFuncName(x model.Refinement) string {
	return "urlRule" + goName(x.Frame) + goName(x.Field)
}

// checkFrame emits (*Frame).check: the value stage and, when it found
// nothing, the refinements stage. The keys of a map that refinements look at
// are collected during the value stage's loop, so the map is walked once.
func (g *gen) checkFrame(f *jen.File, fr *model.Frame) {
	refs := g.m.Rules.RefinementsFor(fr.Type)
	g.urlReadFuncs(f, refs)
	scans := g.keyScans(fr, refs)
	var decls []jen.Code
	for _, scan := range scans {
		decls = append(decls, scan.decls()...)
	}
	values := g.valueStmts(fr.Body)
	g.collectKeys = nil
	f.Commentf("check runs the value stage on a decoded %s and, when it found nothing, the", fr.Title)
	f.Comment("refinements of rules.json.")
	f.Func().Params(jen.Id("f").Op("*").Id(fr.Title)).Id("check").Params(jen.Id("c").Op("*").Qual(violationPkg, "Collector")).BlockFunc(func(b *jen.Group) {
		for _, d := range decls {
			b.Add(d)
		}
		for _, v := range values {
			b.Add(v)
		}
		if len(refs) == 0 {
			return
		}
		b.If(jen.Id("c").Dot("Len").Call().Op(">").Lit(0)).Block(jen.Return())
		for _, x := range refs {
			g.refinement(b, fr, x, scans)
		}
	})
}

// urlReadFuncs emits, for each open-url reading refinement, the function
// that maps a failed check to its rule id and message.
func (g *gen) urlReadFuncs(f *jen.File, refs []model.Refinement) {
	for _, x := range refs {
		if x.Kind != model.URLReadIdentically {
			continue
		}
		var cases []jen.Code
		for _, c := range x.Checks {
			word := goName(c.ID[strings.LastIndexByte(c.ID, '.')+1:])
			cases = append(cases, jen.Case(jen.Qual(urlreadPkg, word)).Block(jen.Return(jen.Id(ruleConst(c.ID)), jen.Lit(c.Message))))
		}
		cases = append(cases, jen.Default().Block(jen.Return(jen.Id(ruleConst(x.ID)), jen.Lit(x.Message))))
		f.Commentf("%s maps a failed open-url reading check to its rule id and message.", g.urlFuncName(x))
		f.Func().Id(g.urlFuncName(x)).Params(jen.Id("r").Qual(urlreadPkg, "Result")).Params(jen.String(), jen.String()).Block(jen.Switch(jen.Id("r")).Block(cases...))
	}
}

// keyScans are the scans of map keys fr's refinements need, one per map
// field; g.collectKeys holds them while the value stage is emitted.
func (g *gen) keyScans(fr *model.Frame, refs []model.Refinement) []*keyScan {
	g.collectKeys = map[*model.Type]*keyScan{}
	var scans []*keyScan
	for _, x := range refs {
		if x.Kind != model.MapKeyNotInList && x.Kind != model.MapKeysUnique {
			continue
		}
		fl := fieldByName(fr.Body, x.Field)
		scan := g.collectKeys[fl.Type]
		if scan == nil {
			scan = &keyScan{field: fl.Name}
			g.collectKeys[fl.Type] = scan
			scans = append(scans, scan)
		}
		switch {
		case x.Kind == model.MapKeyNotInList:
			scan.notIn = append(scan.notIn, x)
		case x.CaseInsensitive:
			scan.fold = true
		}
	}
	return scans
}

// refinement emits the check of refinement x of frame fr.
func (g *gen) refinement(b *jen.Group, fr *model.Frame, x model.Refinement, scans []*keyScan) {
	fl := fieldByName(fr.Body, x.Field)
	val := jen.Id("f").Dot(goName(fl.Name))
	switch x.Kind {
	case model.ForbidFieldWhen:
		wf := fieldByName(fr.Body, x.WhenField)
		wv := jen.Id("f").Dot(goName(wf.Name))
		var ors []jen.Code
		for i, in := range x.WhenIn {
			if i > 0 {
				ors = append(ors, jen.Op("||"))
			}
			if wf.Required {
				ors = append(ors, wv.Clone().Op("==").Lit(in))
			} else {
				ors = append(ors, wv.Clone().Op("!=").Nil().Op("&&").Op("*").Add(wv.Clone()).Op("==").Lit(in))
			}
		}
		b.If(jen.Add(present(fl)).Op("&&").Parens(jen.Add(ors...))).Block(cAdd(jen.Lit(fl.Name), ruleConst(x.ID), x.Message))
	case model.MapKeyNotInList:
		scan := scanOf(scans, fl.Name)
		test := jen.Qual("slices", "Contains").Call(jen.Id(goName(x.List)), jen.Id("k"))
		if x.CaseInsensitive {
			test = jen.Qual(jsonscanPkg, "InLowerJS").Call(jen.Id(goName(x.List)), jen.Id("k"))
		}
		b.If(jen.Id(scan.inVar(x))).Block(
			jen.For(jen.Id("k").Op(":=").Range().Add(val.Clone())).Block(
				jen.If(test).Block(
					jen.Id("c").Dot("Push").Call(jen.Lit(fl.Name)),
					jen.Id("c").Dot("AddKey").Call(jen.Id("k"), jen.Id(ruleConst(x.ID)), jen.Lit(x.Message)),
					jen.Id("c").Dot("Pop").Call(),
				),
			),
		)
	case model.MapKeysUnique:
		// Case-sensitively, the keys of a Go map are unique already
		// (a JSON text naming one twice is frame.duplicate-key).
		if !x.CaseInsensitive {
			return
		}
		b.If(jen.Id(scanOf(scans, fl.Name).foldVar())).Block(
			jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("foldCollisions").Call(val.Clone())).Block(
				jen.Id("c").Dot("Push").Call(jen.Lit(fl.Name)),
				jen.Id("c").Dot("AddKey").Call(jen.Id("k"), jen.Id(ruleConst(x.ID)), jen.Lit(x.Message)),
				jen.Id("c").Dot("Pop").Call(),
			),
		)
	case model.URLReadIdentically:
		v := val
		if !fl.Required {
			v = jen.Op("*").Add(val)
		}
		check := jen.If(jen.Id("r").Op(":=").Qual(urlreadPkg, "Check").Call(v), jen.Id("r").Op("!=").Qual(urlreadPkg, "OK")).Block(
			jen.List(jen.Id("rule"), jen.Id("msg")).Op(":=").Id(g.urlFuncName(x)).Call(jen.Id("r")),
			jen.Id("c").Dot("Add").Call(jen.Lit(fl.Name), jen.Id("rule"), jen.Id("msg")),
		)
		if fl.Required {
			b.Add(check)
		} else {
			b.If(jen.Add(present(fl))).Block(check)
		}
	}
}

func scanOf(scans []*keyScan, field string) *keyScan {
	for _, s := range scans {
		if s.field == field {
			return s
		}
	}
	return nil
}

func (g *gen) sizeLimit(fr *model.Frame) string {
	for _, sc := range g.m.Rules.SizeClasses {
		if sc.Name == fr.SizeClass {
			return sc.Limit
		}
	}
	return ""
}

func hasRequestID(fr *model.Frame) bool { return fieldByName(fr.Body, "requestId") != nil }

// parse emits what Parse looks up per frame type (newBody), the answer
// pairing (AnswerType, errorAnswer), the per-frame accessors the broker uses
// (RequestIDOf, SetRequestID, ErrorOf), and the decoders and checks of every
// frame and nested object. The stages themselves are hand-written
// (frame/parse.go, frame/read.go).
func (g *gen) parse(f *jen.File) {
	g.newBody(f)
	g.answerPairing(f)
	refCases := g.accessors(f)
	g.newEventData(f)
	g.refusalOf(f, refCases)
	g.lowerInASCIIFuncs(f)
	g.decoders(f)
}

// newBody emits newBody: an empty frame of a type and its size class.
func (g *gen) newBody(f *jen.File) {
	var cases []jen.Code
	for _, x := range g.m.Frames {
		cases = append(cases, jen.Case(jen.Id(typeConst(x.Type))).Block(jen.Return(jen.New(jen.Id(x.Title)), jen.Id(goName(g.sizeLimit(x))))))
	}
	f.Comment("newBody returns an empty frame of type typ and the frame's size class in")
	f.Comment("bytes (R6); nil for a type this version does not know.")
	f.Func().Id("newBody").Params(jen.Id("typ").String()).Params(jen.Id("body"), jen.Int()).Block(
		jen.Switch(jen.Id("typ")).Block(cases...),
		jen.Return(jen.Nil(), jen.Lit(0)),
	)

}

// answerPairing emits AnswerType and errorAnswer.
func (g *gen) answerPairing(f *jen.File) {
	r := g.m.Rules
	var cases []jen.Code
	answers := map[string][]jen.Code{}
	var order []string
	for _, fr := range g.m.Frames {
		if fr.Answer == "" || fr.Answer == r.DefaultAnswer {
			continue
		}
		if _, ok := answers[fr.Answer]; !ok {
			order = append(order, fr.Answer)
		}
		answers[fr.Answer] = append(answers[fr.Answer], jen.Id(typeConst(fr.Type)))
	}
	for _, a := range order {
		cases = append(cases, jen.Case(answers[a]...).Block(jen.Return(jen.Id(typeConst(a)))))
	}
	f.Comment("AnswerType is the type of the frame that answers a frame of type reqType:")
	f.Commentf("its pairing in rules.json, %s for any other type.", r.DefaultAnswer)
	f.Func().Id("AnswerType").Params(jen.Id("reqType").String()).String().Block(
		jen.Switch(jen.Id("reqType")).Block(cases...),
		jen.Return(jen.Id(typeConst(r.DefaultAnswer))),
	)
	cases = nil
	seenAnswer := map[string]bool{}
	for _, a := range append(order, r.DefaultAnswer) {
		if seenAnswer[a] {
			continue
		}
		seenAnswer[a] = true
		cases = append(cases, jen.Case(jen.Id(typeConst(a))).Block(jen.Return(g.answerFrame(g.frameOf(a)))))
	}
	f.Comment("errorAnswer is the terminal answer of type answerType to requestId rid carrying")
	f.Comment("e; an answer type without an error object refuses (rules.json refusal) with")
	f.Comment("reason, cut to its maxLength. Nil for a type that answers nothing.")
	f.Func().Id("errorAnswer").Params(jen.List(jen.Id("answerType"), jen.Id("rid")).String(), jen.Id("e").Op("*").Id(g.m.Error.Name), jen.Id("reason").String()).Id("Frame").Block(
		jen.Switch(jen.Id("answerType")).Block(cases...),
		jen.Return(jen.Nil()),
	)

}

// accessors emits RequestIDOf, SetRequestID and ErrorOf, and returns the
// cases of RefusalOf.
func (g *gen) accessors(f *jen.File) []jen.Code {
	r := g.m.Rules
	var ridCases, setCases, errCases, refCases []jen.Code
	ref := r.Refusal
	for _, x := range g.m.Frames {
		if st, rs := fieldByName(x.Body, ref.Field), fieldByName(x.Body, ref.ReasonField); x.Direction == model.HostToApp && st != nil && rs != nil && slices.Contains(st.Type.Enum, ref.Value) {
			refused := jen.Id("f").Dot(goName(ref.Field)).Op("==").Lit(ref.Value)
			field := jen.Id("f").Dot(goName(ref.ReasonField))
			if rs.Required {
				refCases = append(refCases, jen.Case(jen.Op("*").Id(x.Title)).Block(jen.Return(field, refused)))
				continue
			}
			refCases = append(refCases, jen.Case(jen.Op("*").Id(x.Title)).Block(
				jen.If(field.Clone().Op("!=").Nil()).Block(jen.Id("reason").Op("=").Op("*").Add(field.Clone())),
				jen.Return(jen.Id("reason"), refused)))
		}
		if fl := fieldByName(x.Body, r.RecoverField); fl != nil && fl.Required && fl.Type.Kind == model.String {
			ridCases = append(ridCases, jen.Case(jen.Op("*").Id(x.Title)).Block(jen.Return(jen.Id("f").Dot(goName(r.RecoverField)))))
			setCases = append(setCases, jen.Case(jen.Op("*").Id(x.Title)).Block(jen.Id("f").Dot(goName(r.RecoverField)).Op("=").Id("id")))
		}
		if fl := fieldByName(x.Body, "error"); fl != nil && fl.Type.Kind == model.Struct && fl.Type.Object.Name == g.m.Error.Name {
			errCases = append(errCases, jen.Case(jen.Op("*").Id(x.Title)).Block(jen.Return(jen.Id("f").Dot("Error"))))
		}
	}
	f.Commentf("RequestIDOf returns the %s of a frame that carries one, \"\" for others.", r.RecoverField)
	f.Func().Id("RequestIDOf").Params(jen.Id("f").Id("Frame")).String().Block(
		jen.Switch(jen.Id("f").Op(":=").Id("f").Assert(jen.Type())).Block(ridCases...),
		jen.Return(jen.Lit("")),
	)
	f.Commentf("SetRequestID sets the %s of a frame that carries one; others are left alone.", r.RecoverField)
	f.Func().Id("SetRequestID").Params(jen.Id("f").Id("Frame"), jen.Id("id").String()).Block(
		jen.Switch(jen.Id("f").Op(":=").Id("f").Assert(jen.Type())).Block(setCases...),
	)
	f.Comment("ErrorOf returns the error object a frame carries, nil when none (an answer")
	f.Comment("that refuses by status has none).")
	f.Func().Id("ErrorOf").Params(jen.Id("f").Id("Frame")).Op("*").Id(g.m.Error.Name).Block(
		jen.Switch(jen.Id("f").Op(":=").Id("f").Assert(jen.Type())).Block(errCases...),
		jen.Return(jen.Nil()),
	)

	return refCases
}

// newEventData emits newEventData: an empty data object of a known event.
func (g *gen) newEventData(f *jen.File) {
	r := g.m.Rules
	var cases []jen.Code
	for _, e := range r.Events {
		if e.Object == nil {
			continue
		}
		carrier := typeConst("snug:host-event")
		if e.Direction == model.AppToHost {
			carrier = typeConst("snug:app-event")
		}
		cases = append(cases, jen.Case(jen.Id(eventConst(e.Name))).Block(jen.Return(jen.New(jen.Id(e.Object.Name)), jen.Id(carrier))))
	}
	f.Comment("newEventData returns an empty data object of a known event (rules.json events)")
	f.Comment("and the type of the frame that carries it; nil for an event the table does not")
	f.Comment("know.")
	f.Func().Id("newEventData").Params(jen.Id("event").String()).Params(jen.Id("EventData"), jen.String()).Block(
		jen.Switch(jen.Id("event")).Block(cases...),
		jen.Return(jen.Nil(), jen.Lit("")),
	)

}

// refusalOf emits RefusalOf, of the cases accessors found.
func (g *gen) refusalOf(f *jen.File, refCases []jen.Code) {
	ref := g.m.Rules.Refusal
	f.Commentf("RefusalOf reports whether f is an answer that refuses by its %s (%q, rules.json", ref.Field, ref.Value)
	f.Commentf("refusal), with its %s (\"\" when it has none).", ref.ReasonField)
	f.Func().Id("RefusalOf").Params(jen.Id("f").Id("Frame")).Params(jen.Id("reason").String(), jen.Id("refused").Bool()).Block(
		jen.Switch(jen.Id("f").Op(":=").Id("f").Assert(jen.Type())).Block(refCases...),
		jen.Return(jen.Lit(""), jen.False()),
	)

}

// decoders emits each frame's decoder, check and Validate, then the
// objects' and the envelope's.
func (g *gen) decoders(f *jen.File) {
	for _, x := range g.m.Frames {
		g.decodeObject(f, x.Title, x.Body, true)
		g.checkFrame(f, x)
		rid := jen.Lit("")
		if hasRequestID(x) {
			rid = jen.Id("f").Dot("RequestID")
		}
		f.Commentf("Validate checks a %s's values and refinements, as Parse does after decoding;", x.Title)
		f.Comment("a host can call it on a frame it built. It does not allocate when f is valid.")
		f.Func().Params(jen.Id("f").Op("*").Id(x.Title)).Id("Validate").Params().Error().Block(
			jen.Var().Id("c").Qual(violationPkg, "Collector"),
			jen.Id("f").Dot("check").Call(jen.Op("&").Id("c")),
			jen.Return(jen.Id("validated").Call(jen.Op("&").Id("c"), jen.Id(typeConst(x.Type)), rid)),
		)
	}
	for _, name := range g.order {
		o := g.structs[name]
		g.decodeObject(f, name, o, false)
		g.validateObject(f, name, o)
	}
	// The chat envelope's JSON, read by ParseEnvelope (frame/envelope.go)
	// like a frame's objects; its marker is read there.
	if env := g.m.Envelope; env != nil {
		g.decodeObject(f, "Envelope", env, false)
		g.validateObject(f, "Envelope", env)
	}
}

// answerFrame is the expression of the answer frame a carrying e (and reason
// for a refusal by status).
func (g *gen) answerFrame(a *model.Frame) jen.Code {
	dict := jen.Dict{jen.Id("RequestID"): jen.Id("rid")}
	ref := g.m.Rules.Refusal
	switch {
	case fieldByName(a.Body, "error") != nil:
		dict[jen.Id(goName("error"))] = jen.Id("e")
		if ok := fieldByName(a.Body, "ok"); ok != nil {
			dict[jen.Id(goName("ok"))] = jen.False()
		}
	case fieldByName(a.Body, ref.Field) != nil:
		dict[jen.Id(goName(ref.Field))] = jen.Lit(ref.Value)
		if fl := fieldByName(a.Body, ref.ReasonField); fl != nil {
			reason := jen.Id("reason")
			if fl.Type.MaxLength != nil {
				reason = jen.Id("Truncate").Call(jen.Id("reason"), jen.Lit(*fl.Type.MaxLength))
			}
			if fl.Required {
				dict[jen.Id(goName(ref.ReasonField))] = reason
			} else {
				dict[jen.Id(goName(ref.ReasonField))] = jen.Id("optional").Call(reason)
			}
		}
	}
	return jen.Op("&").Id(a.Title).Values(dict)
}
