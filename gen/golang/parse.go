package golang

import (
	"fmt"
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

func skip() *jen.Statement { return jen.Id("d").Dot("SkipChecked").Call() }

func skipChecked() *jen.Statement { return jen.Id("d").Dot("SkipChecked").Call() }

func kindWord(t *model.Type) string {
	switch t.Kind {
	case model.String:
		return "a string"
	case model.Integer:
		return "an integer"
	case model.Number:
		return "a number"
	case model.Boolean:
		return "a boolean"
	case model.Struct, model.RawObject, model.Map:
		return "an object"
	case model.Array:
		return "an array"
	case model.Scalar:
		return "a string, number, boolean or null"
	}
	return "a JSON value"
}

var ruleTypeID = ruleConst("schema-type")

// seg is a path segment for violations: a literal key, an expression (a map
// key variable) or empty (the current path, inside an array element).
type seg struct {
	code  jen.Code
	empty bool
}

func litSeg(k string) seg { return seg{code: jen.Lit(k)} }
func idSeg(id string) seg { return seg{code: jen.Id(id)} }
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

// decodeValue emits statements that decode the next value as t, calling
// assign with the decoded Go value when it has the right type and adding a
// type violation (and skipping the value) when it does not.
func (g *gen) decodeValue(t *model.Type, assign func(v jen.Code) jen.Code, s seg, depth int) []jen.Code {
	v := fmt.Sprintf("v%d", depth)
	typeErr := cAdd(s.code, ruleTypeID, "must be "+kindWord(t))
	switch t.Kind {
	case model.String, model.Boolean:
		method := "String"
		if t.Kind == model.Boolean {
			method = "Bool"
		}
		return []jen.Code{jen.If(jen.List(jen.Id(v), jen.Id("ok")).Op(":=").Add(dID).Dot(method).Call(), jen.Id("ok")).Block(
			assign(jen.Id(v)),
		).Else().Block(typeErr, skip())}
	case model.Integer:
		return []jen.Code{jen.If(jen.List(jen.Id(v), jen.Id("isInt"), jen.Id("isNum")).Op(":=").Add(dID).Dot("Int").Call(), jen.Id("isInt")).Block(
			assign(jen.Int().Call(jen.Id(v))),
		).Else().Block(
			jen.If(jen.Op("!").Id("isNum")).Block(skip()),
			typeErr,
		)}
	case model.Number:
		return []jen.Code{jen.If(jen.List(jen.Id("raw"), jen.Id("ok")).Op(":=").Add(dID).Dot("Number").Call(), jen.Id("ok")).Block(
			jen.List(jen.Id(v), jen.Id("_")).Op(":=").Qual("strconv", "ParseFloat").Call(jen.Id("raw"), jen.Lit(64)),
			assign(jen.Id(v)),
		).Else().Block(typeErr, skip())}
	case model.Scalar:
		return []jen.Code{jen.If(jen.List(jen.Id(v), jen.Id("ok")).Op(":=").Add(dID).Dot("Scalar").Call(), jen.Id("ok")).Block(
			assign(jen.Id(v)),
		).Else().Block(typeErr, skip())}
	case model.Any:
		return []jen.Code{jen.If(jen.List(jen.Id("raw"), jen.Id("ok")).Op(":=").Add(dID).Dot("SkipChecked").Call(), jen.Id("ok")).Block(
			assign(jen.Qual(encJSON, "RawMessage").Call(jen.Id("raw"))),
		)}
	case model.RawObject:
		return []jen.Code{jen.If(dID.Clone().Dot("Peek").Call().Op("==").Qual(jsonscanPkg, "Object")).Block(
			jen.List(jen.Id("raw"), jen.Id("_")).Op(":=").Add(dID).Dot("SkipChecked").Call(),
			assign(jen.Qual(encJSON, "RawMessage").Call(jen.Id("raw"))),
		).Else().Block(typeErr, skip())}
	case model.Struct:
		return []jen.Code{jen.If(dID.Clone().Dot("BeginObject").Call()).Block(
			s.push(),
			jen.Id(v).Op(":=").New(jen.Id(t.Object.Name)),
			jen.Id("decode"+t.Object.Name).Call(dID, jen.Id(v), cID),
			s.pop(),
			assign(jen.Id(v)),
		).Else().Block(typeErr, skip())}
	case model.Map:
		m, k := fmt.Sprintf("m%d", depth), fmt.Sprintf("k%d", depth)
		body := []jen.Code{
			jen.List(jen.Id(k), jen.Id("ok")).Op(":=").Add(dID).Dot("Key").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Break()),
			jen.If(jen.List(jen.Id("_"), jen.Id("dup")).Op(":=").Id(m).Index(jen.Id(k)), jen.Id("dup")).Block(
				jen.Id("d").Dot("MarkDup").Call(),
			),
		}
		body = append(body, g.decodeValue(t.Elem, func(x jen.Code) jen.Code { return jen.Id(m).Index(jen.Id(k)).Op("=").Add(x) }, idSeg(k), depth+1)...)
		return []jen.Code{jen.If(dID.Clone().Dot("BeginObject").Call()).Block(
			s.push(),
			jen.Id(m).Op(":=").Map(jen.String()).Add(g.goType(t.Elem, false)).Values(),
			jen.For(jen.Id("first").Op(":=").True(), jen.Add(dID).Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(body...),
			s.pop(),
			assign(jen.Id(m)),
		).Else().Block(typeErr, skip())}
	case model.Array:
		sl, i := fmt.Sprintf("s%d", depth), fmt.Sprintf("i%d", depth)
		body := []jen.Code{jen.Id("c").Dot("PushIndex").Call(jen.Id(i))}
		body = append(body, g.decodeValue(t.Elem, func(x jen.Code) jen.Code { return jen.Id(sl).Op("=").Append(jen.Id(sl), x) }, emptySeg(), depth+1)...)
		body = append(body, jen.Id("c").Dot("Pop").Call())
		return []jen.Code{jen.If(dID.Clone().Dot("BeginArray").Call()).Block(
			s.push(),
			jen.Id(sl).Op(":=").Index().Add(g.goType(t.Elem, false)).Values(),
			jen.For(jen.Id(i).Op(":=").Lit(0), jen.Add(dID).Dot("ArrMore").Call(jen.Id(i).Op("==").Lit(0)), jen.Id(i).Op("++")).Block(body...),
			s.pop(),
			assign(jen.Id(sl)),
		).Else().Block(typeErr, skip())}
	}
	panic("golang: unknown kind")
}

func bit(i int) jen.Code { return jen.Parens(jen.Lit(1).Op("<<").Lit(i)) }

// decodeObject emits decode<Name>, which reads the members of an object whose
// '{' has been consumed: shape checks only (type, required, additional
// properties, duplicate keys, conditional requirements).
func (g *gen) decodeObject(f *jen.File, name string, o *model.Object, top bool) {
	const first = 2 // bits 0 and 1 are v and type on a frame
	fieldBit := map[string]int{}
	for i, fl := range o.Fields {
		fieldBit[fl.Name] = first + i
	}
	condField := map[string]bool{}
	for _, c := range o.Conds {
		condField[c.Field] = true
	}
	var cases []jen.Code
	dupCheck := func(b int) jen.Code {
		return jen.If(jen.Id("seen").Op("&").Add(bit(b)).Op("!=").Lit(0)).Block(
			jen.Id("d").Dot("MarkDup").Call(),
		).Line().Id("seen").Op("|=").Add(bit(b))
	}
	if top {
		cases = append(cases,
			jen.Case(jen.Lit("v")).Block(dupCheck(0), skipChecked()),
			jen.Case(jen.Lit("type")).Block(dupCheck(1), skipChecked()),
		)
	}
	for _, fl := range o.Fields {
		fl := fl
		b := fieldBit[fl.Name]
		target := jen.Id("f").Dot(goName(fl.Name))
		assign := func(x jen.Code) jen.Code {
			st := []jen.Code{}
			optPtr := !fl.Required && (fl.Type.Kind == model.String || fl.Type.Kind == model.Integer || fl.Type.Kind == model.Number || fl.Type.Kind == model.Boolean)
			if optPtr {
				st = append(st, jen.Id("x").Op(":=").Add(x), target.Clone().Op("=").Op("&").Id("x"))
			} else if fl.Type.Kind == model.Struct && fl.Required {
				st = append(st, target.Clone().Op("=").Op("*").Add(x))
			} else {
				st = append(st, target.Clone().Op("=").Add(x))
			}
			if condField[fl.Name] {
				st = append(st, jen.Id("have").Op("|=").Add(bit(b)))
			}
			out := jen.Add(st[0])
			for _, x := range st[1:] {
				out.Line().Add(x)
			}
			return out
		}
		body := []jen.Code{dupCheck(b)}
		body = append(body, g.decodeValue(fl.Type, assign, litSeg(fl.Name), 0)...)
		cases = append(cases, jen.Case(jen.Lit(fl.Name)).Block(body...))
	}
	def := []jen.Code{jen.If(jen.Id("unknown").Dot("Add").Call(jen.Id("key"))).Block(jen.Id("d").Dot("MarkDup").Call())}
	if o.Strict {
		def = append(def, cAdd(jen.Id("key"), ruleConst("schema-additionalProperties"), "unknown key: this frame is strict"))
	}
	def = append(def, skipChecked())
	cases = append(cases, jen.Default().Block(def...))

	var after []jen.Code
	for _, fl := range o.Fields {
		if fl.Required {
			after = append(after, jen.If(jen.Id("seen").Op("&").Add(bit(fieldBit[fl.Name])).Op("==").Lit(0)).Block(
				cAdd(jen.Lit(fl.Name), ruleConst("schema-required"), "missing required key"),
			))
		}
	}
	for _, c := range o.Conds {
		var disc *model.Field
		for _, fl := range o.Fields {
			if fl.Name == c.Field {
				disc = fl
			}
		}
		val := jen.Id("f").Dot(goName(c.Field))
		if !disc.Required {
			val = jen.Op("*").Add(val)
		}
		cond := jen.Id("have").Op("&").Add(bit(fieldBit[c.Field])).Op("!=").Lit(0).Op("&&").Add(val).Op("==").Lit(c.Equals)
		var reqs []jen.Code
		for _, r := range c.Require {
			reqs = append(reqs, jen.If(jen.Id("seen").Op("&").Add(bit(fieldBit[r])).Op("==").Lit(0)).Block(
				cAdd(jen.Lit(r), ruleConst("schema-required"), fmt.Sprintf("missing key, required when %s is %v", c.Field, jsonLit(c.Equals))),
			))
		}
		after = append(after, jen.If(cond).Block(reqs...))
	}
	vars := []jen.Code{jen.Var().Id("seen").Uint64(), jen.Var().Id("unknown").Qual(jsonscanPkg, "KeySet")}
	if len(o.Conds) > 0 {
		vars = append(vars, jen.Var().Id("have").Uint64())
	}
	f.Commentf("decode%s reads the members of a %s after its '{'.", name, name)
	f.Func().Id("decode"+name).Params(jen.Id("d").Op("*").Qual(jsonscanPkg, "Decoder"), jen.Id("f").Op("*").Id(name), jen.Id("c").Op("*").Qual(violationPkg, "Collector")).BlockFunc(func(b *jen.Group) {
		for _, v := range vars {
			b.Add(v)
		}
		b.For(jen.Id("first").Op(":=").True(), jen.Id("d").Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(
			jen.List(jen.Id("key"), jen.Id("ok")).Op(":=").Id("d").Dot("Key").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return()),
			jen.Switch(jen.Id("key")).Block(cases...),
		)
		for _, a := range after {
			b.Add(a)
		}
	})
}

func jsonLit(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

// constrained reports whether a value of type t has value-stage checks.
func (g *gen) constrained(t *model.Type) bool {
	switch t.Kind {
	case model.String:
		return t.MinLength != nil || t.MaxLength != nil || t.Enum != nil || t.Const != nil
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
	for _, fl := range o.Fields {
		if g.constrained(fl.Type) {
			return true
		}
	}
	return false
}

func stringChecks(minL, maxL *int, v jen.Code, s seg, minRule, maxRule string) []jen.Code {
	var out []jen.Code
	if minL != nil {
		msg := fmt.Sprintf("shorter than %d code points", *minL)
		if *minL == 1 {
			msg = "must not be empty"
		}
		out = append(out, jen.If(jen.Op("!").Qual(jsonscanPkg, "LenAtLeast").Call(v, jen.Lit(*minL))).Block(
			cAdd(s.code, minRule, msg)))
	}
	if maxL != nil {
		out = append(out, jen.If(jen.Op("!").Qual(jsonscanPkg, "LenAtMost").Call(v, jen.Lit(*maxL))).Block(
			cAdd(s.code, maxRule, fmt.Sprintf("longer than %d code points", *maxL))))
	}
	return out
}

// checkValue emits the value-stage checks of v (a Go expression of type t).
func (g *gen) checkValue(t *model.Type, v jen.Code, s seg, depth int) []jen.Code {
	var out []jen.Code
	switch t.Kind {
	case model.String:
		out = append(out, stringChecks(t.MinLength, t.MaxLength, v, s, ruleConst("schema-minLength"), ruleConst("schema-maxLength"))...)
		if t.Enum != nil {
			out = append(out, jen.Switch(v).Block(
				jen.Case(lits(t.Enum)...),
				jen.Default().Block(cAdd(s.code, ruleConst("schema-enum"), "must be one of "+strings.Join(t.Enum, ", "))),
			))
		}
		if t.Const != nil {
			out = append(out, jen.If(jen.Add(v).Op("!=").Lit(*t.Const)).Block(cAdd(s.code, ruleConst("schema-const"), fmt.Sprintf("must be %q", *t.Const))))
		}
	case model.Integer, model.Number:
		if t.Minimum != nil {
			out = append(out, jen.If(jen.Add(v).Op("<").Lit(int(*t.Minimum))).Block(cAdd(s.code, ruleConst("schema-minimum"), fmt.Sprintf("less than %d", *t.Minimum))))
		}
		if t.Maximum != nil {
			out = append(out, jen.If(jen.Add(v).Op(">").Lit(int(*t.Maximum))).Block(cAdd(s.code, ruleConst("schema-maximum"), fmt.Sprintf("greater than %d", *t.Maximum))))
		}
	case model.Array:
		if t.MinItems != nil {
			out = append(out, jen.If(jen.Len(v).Op("<").Lit(*t.MinItems)).Block(cAdd(s.code, ruleConst("schema-minItems"), fmt.Sprintf("fewer than %d items", *t.MinItems))))
		}
		if t.MaxItems != nil {
			out = append(out, jen.If(jen.Len(v).Op(">").Lit(*t.MaxItems)).Block(cAdd(s.code, ruleConst("schema-maxItems"), fmt.Sprintf("more than %d items", *t.MaxItems))))
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
			out = append(out, jen.If(jen.Len(v).Op(">").Lit(*t.MaxProperties)).Block(cAdd(s.code, ruleConst("schema-maxProperties"), fmt.Sprintf("more than %d entries", *t.MaxProperties))))
		}
		keyChecks := t.KeyMinLength != nil || t.KeyMaxLength != nil
		scan, collecting := g.collectKeys[t]
		if keyChecks || g.constrained(t.Elem) || collecting {
			k, e := fmt.Sprintf("k%d", depth), fmt.Sprintf("e%d", depth)
			var body []jen.Code
			if collecting {
				body = append(body, scan.perKey(jen.Id(k))...)
			}
			body = append(body, stringChecks(t.KeyMinLength, t.KeyMaxLength, jen.Id(k), idSeg(k), ruleConst("schema-propertyNames"), ruleConst("schema-propertyNames"))...)
			body = append(body, g.checkValue(t.Elem, jen.Id(e), idSeg(k), depth+1)...)
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

// valueStmts are the value-stage checks of the fields of f, an *o.
func (g *gen) valueStmts(o *model.Object) []jen.Code {
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
				or = append(or, jen.Qual(jsonscanPkg, "EqualFoldASCII").Call(jen.Id("s"), jen.Lit(v)))
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
							cAdd(jen.Id("k"), ruleConst(x.ID), x.Message),
							jen.Id("c").Dot("Pop").Call(),
						),
					),
				)
			case model.MapKeysUnique:
				// Case-sensitively, the keys of a Go map are unique already
				// (a JSON text naming one twice is frame.duplicate-key).
				if !x.CaseInsensitive {
					continue
				}
				b.If(jen.Id(scanOf(scans, fl.Name).foldVar())).Block(
					jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("foldCollisions").Call(val.Clone())).Block(
						jen.Id("c").Dot("Push").Call(jen.Lit(fl.Name)),
						cAdd(jen.Id("k"), ruleConst(x.ID), x.Message),
						jen.Id("c").Dot("Pop").Call(),
					),
				)
			case model.URLReadIdentically:
				v := val
				if !fl.Required {
					v = jen.Op("*").Add(val)
				}
				b.If(jen.Add(present(fl))).Block(
					jen.If(jen.Id("r").Op(":=").Qual(urlreadPkg, "Check").Call(v), jen.Id("r").Op("!=").Qual(urlreadPkg, "OK")).Block(
						jen.List(jen.Id("rule"), jen.Id("msg")).Op(":=").Id(g.urlFuncName(x)).Call(jen.Id("r")),
						jen.Id("c").Dot("Add").Call(jen.Lit(fl.Name), jen.Id("rule"), jen.Id("msg")),
					),
				)
			}
		}
	})
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

// parse emits Parse, the decoders, validators, RejectError and helpers.
func (g *gen) parse(f *jen.File) {
	r := g.m.Rules
	f.Comment("Violation is one broken rule: a JSON pointer, a stable rule id, a message.")
	f.Type().Id("Violation").Op("=").Qual(violationPkg, "Violation")

	f.Comment("RejectError is a frame Parse or Validate refused. The host answers it (Answer)")
	f.Comment("only when HasRequestID: R1 forbids answering otherwise.")
	f.Type().Id("RejectError").Struct(
		jen.Id("Code").String().Comment("CodeMalformed or CodeUnsupportedVersion"),
		jen.Id("Type").String().Comment("the frame's type when it had a string one"),
		jen.Id("RequestID").String().Comment("the recovered requestId"),
		jen.Id("HasRequestID").Bool().Comment("a plausible requestId was recovered (R1)"),
		jen.Id("Violations").Index().Id("Violation").Comment("sorted by path, then rule"),
	)
	f.Func().Params(jen.Id("e").Op("*").Id("RejectError")).Id("Error").Params().String().Block(
		jen.Id("t").Op(":=").Id("e").Dot("Type"),
		jen.If(jen.Id("t").Op("==").Lit("")).Block(jen.Id("t").Op("=").Lit("frame")),
		jen.Return(jen.Lit("frame: ").Op("+").Id("t").Op("+").Lit(" rejected (").Op("+").Id("e").Dot("Code").Op("+").Lit("): ").Op("+").Id("e").Dot("summary").Call(jen.Lit(5))),
	)
	f.Comment("summary lists up to n violations.")
	f.Func().Params(jen.Id("e").Op("*").Id("RejectError")).Id("summary").Params(jen.Id("n").Int()).String().Block(
		jen.Var().Id("parts").Index().String(),
		jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id("e").Dot("Violations")).Block(
			jen.If(jen.Id("i").Op("==").Id("n")).Block(
				jen.Id("parts").Op("=").Append(jen.Id("parts"), jen.Qual("fmt", "Sprintf").Call(jen.Lit("and %d more"), jen.Len(jen.Id("e").Dot("Violations")).Op("-").Id("n"))),
				jen.Break(),
			),
			jen.Id("parts").Op("=").Append(jen.Id("parts"), jen.Id("v").Dot("String").Call()),
		),
		jen.Return(jen.Qual("strings", "Join").Call(jen.Id("parts"), jen.Lit("; "))),
	)
	// Answer.
	errMax := 0
	if fl := fieldByName(g.m.Error, "message"); fl != nil && fl.Type.MaxLength != nil {
		errMax = *fl.Type.MaxLength
	}
	f.Comment("Answer is the frame the host sends back for e: the response paired with the")
	f.Comment("request type, carrying e.Code; nil when no requestId was recovered (R1).")
	f.Func().Params(jen.Id("e").Op("*").Id("RejectError")).Id("Answer").Params().Id("Frame").BlockFunc(func(b *jen.Group) {
		b.If(jen.Op("!").Id("e").Dot("HasRequestID")).Block(jen.Return(jen.Nil()))
		b.Id("msg").Op(":=").Id("e").Dot("summary").Call(jen.Lit(3))
		if errMax > 0 {
			max := FieldLimitName(g.m.Error.Name, "message")
			b.Comment("Cut to the error schema's message maxLength, the last code point an ellipsis.")
			b.If(jen.Qual("unicode/utf8", "RuneCountInString").Call(jen.Id("msg")).Op(">").Id(max)).Block(
				jen.Id("msg").Op("=").String().Call(jen.Index().Rune().Call(jen.Id("msg")).Index(jen.Empty(), jen.Id(max).Op("-").Lit(1))).Op("+").Lit("…"),
			)
		}
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
		var cases []jen.Code
		for _, a := range order {
			cases = append(cases, jen.Case(answers[a]...).Block(jen.Return(g.answerFrame(g.frameOf(a)))))
		}
		cases = append(cases, jen.Default().Block(jen.Return(g.answerFrame(g.frameOf(r.DefaultAnswer)))))
		b.Switch(jen.Id("e").Dot("Type")).Block(cases...)
	})

	// header scan, recovery, helpers.
	f.Comment("header is what Parse needs before it picks a decoder: v, type.")
	f.Type().Id("header").Struct(
		jen.List(jen.Id("seenV"), jen.Id("vInt"), jen.Id("seenType"), jen.Id("hasType")).Bool(),
		jen.Id("v").Int64(),
		jen.Id("typ").String(),
	)
	f.Comment("scan reads top-level members until it has seen v and type; false when the")
	f.Comment("text is not a JSON object.")
	f.Func().Params(jen.Id("h").Op("*").Id("header")).Id("scan").Params(jen.Id("d").Op("*").Qual(jsonscanPkg, "Decoder")).Bool().Block(
		jen.If(jen.Op("!").Id("d").Dot("BeginObject").Call()).Block(jen.Return(jen.False())),
		jen.For(jen.Id("first").Op(":=").True(), jen.Id("d").Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(
			jen.List(jen.Id("k"), jen.Id("ok")).Op(":=").Id("d").Dot("Key").Call(),
			jen.If(jen.Op("!").Id("ok")).Block(jen.Return(jen.False())),
			jen.Switch().Block(
				jen.Case(jen.Id("k").Op("==").Lit("v").Op("&&").Op("!").Id("h").Dot("seenV")).Block(
					jen.Id("h").Dot("seenV").Op("=").True(),
					jen.List(jen.Id("v"), jen.Id("isInt"), jen.Id("isNum")).Op(":=").Id("d").Dot("Int").Call(),
					jen.If(jen.Op("!").Id("isNum")).Block(jen.Id("d").Dot("Skip").Call()),
					jen.List(jen.Id("h").Dot("v"), jen.Id("h").Dot("vInt")).Op("=").List(jen.Id("v"), jen.Id("isInt")),
				),
				jen.Case(jen.Id("k").Op("==").Lit("type").Op("&&").Op("!").Id("h").Dot("seenType")).Block(
					jen.Id("h").Dot("seenType").Op("=").True(),
					jen.If(jen.List(jen.Id("t"), jen.Id("ok")).Op(":=").Id("d").Dot("String").Call(), jen.Id("ok")).Block(
						jen.List(jen.Id("h").Dot("typ"), jen.Id("h").Dot("hasType")).Op("=").List(jen.Id("t"), jen.True()),
					).Else().Block(jen.Id("d").Dot("Skip").Call()),
				),
				jen.Default().Block(jen.Id("d").Dot("Skip").Call()),
			),
			jen.If(jen.Id("d").Dot("Err").Op("!=").Nil()).Block(jen.Return(jen.False())),
			jen.If(jen.Id("h").Dot("seenV").Op("&&").Id("h").Dot("seenType")).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.Id("d").Dot("End").Call()),
	)
	f.Comment("validJSON reports whether s is one JSON value.")
	f.Func().Id("validJSON").Params(jen.Id("s").String()).Bool().Block(
		jen.Var().Id("d").Qual(jsonscanPkg, "Decoder"),
		jen.Id("d").Dot("Reset").Call(jen.Id("s")),
		jen.List(jen.Id("_"), jen.Id("ok")).Op(":=").Id("d").Dot("Skip").Call(),
		jen.Return(jen.Id("ok").Op("&&").Id("d").Dot("End").Call()),
	)
	f.Comment("headerOnce reports whether s is one JSON object that names v and type at")
	f.Comment("most once at its top level.")
	f.Func().Id("headerOnce").Params(jen.Id("s").String()).Bool().Block(
		jen.If(jen.Op("!").Id("validJSON").Call(jen.Id("s"))).Block(jen.Return(jen.False())),
		jen.Var().Id("d").Qual(jsonscanPkg, "Decoder"),
		jen.Id("d").Dot("Reset").Call(jen.Id("s")),
		jen.If(jen.Op("!").Id("d").Dot("BeginObject").Call()).Block(jen.Return(jen.False())),
		jen.List(jen.Id("nv"), jen.Id("nt")).Op(":=").List(jen.Lit(0), jen.Lit(0)),
		jen.For(jen.Id("first").Op(":=").True(), jen.Id("d").Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(
			jen.List(jen.Id("k"), jen.Id("_")).Op(":=").Id("d").Dot("Key").Call(),
			jen.Switch(jen.Id("k")).Block(
				jen.Case(jen.Lit("v")).Block(jen.Id("nv").Op("++")),
				jen.Case(jen.Lit("type")).Block(jen.Id("nt").Op("++")),
			),
			jen.Id("d").Dot("Skip").Call(),
		),
		jen.Return(jen.Id("nv").Op("<=").Lit(1).Op("&&").Id("nt").Op("<=").Lit(1)),
	)
	f.Commentf("recoverRequestID finds a top-level string %s of %d–%d code points (R1) in", r.RecoverField, r.RecoverMinLength, r.RecoverMaxLength)
	f.Comment("a text that is a JSON object; ok is false otherwise.")
	f.Func().Id("recoverRequestID").Params(jen.Id("s").String()).Params(jen.Id("id").String(), jen.Id("ok").Bool()).Block(
		jen.If(jen.Op("!").Id("validJSON").Call(jen.Id("s"))).Block(jen.Return(jen.Lit(""), jen.False())),
		jen.Var().Id("d").Qual(jsonscanPkg, "Decoder"),
		jen.Id("d").Dot("Reset").Call(jen.Id("s")),
		jen.If(jen.Op("!").Id("d").Dot("BeginObject").Call()).Block(jen.Return(jen.Lit(""), jen.False())),
		jen.Comment("The last occurrence wins, as in JSON.parse."),
		jen.For(jen.Id("first").Op(":=").True(), jen.Id("d").Dot("ObjMore").Call(jen.Id("first")), jen.Id("first").Op("=").False()).Block(
			jen.List(jen.Id("k"), jen.Id("_")).Op(":=").Id("d").Dot("Key").Call(),
			jen.If(jen.Id("k").Op("==").Lit(r.RecoverField)).Block(
				jen.If(jen.List(jen.Id("v"), jen.Id("isStr")).Op(":=").Id("d").Dot("String").Call(), jen.Id("isStr")).Block(
					jen.List(jen.Id("id"), jen.Id("ok")).Op("=").List(jen.Id("v"), jen.Id("plausibleID").Call(jen.Id("v"))),
					jen.Continue(),
				),
				jen.List(jen.Id("id"), jen.Id("ok")).Op("=").List(jen.Lit(""), jen.False()),
			),
			jen.Id("d").Dot("Skip").Call(),
		),
		jen.Return(jen.Id("id"), jen.Id("ok")),
	)
	f.Func().Id("plausibleID").Params(jen.Id("s").String()).Bool().Block(
		jen.Return(jen.Qual(jsonscanPkg, "LenAtLeast").Call(jen.Id("s"), jen.Lit(r.RecoverMinLength)).Op("&&").Qual(jsonscanPkg, "LenAtMost").Call(jen.Id("s"), jen.Lit(r.RecoverMaxLength))),
	)
	f.Comment("frameReject builds the rejection of a frame-level rule, recovering the")
	f.Comment("requestId from s; a text that is no JSON object is always RuleFrameJSON.")
	f.Func().Id("frameReject").Params(jen.List(jen.Id("s"), jen.Id("typ"), jen.Id("code"), jen.Id("rule"), jen.Id("path"), jen.Id("msg")).String()).Op("*").Id("RejectError").Block(
		jen.Comment("A text that is no JSON is that first; a key twice comes next."),
		jen.If(jen.Id("rule").Op("!=").Id(ruleConst(ruleJSON))).Block(
			jen.List(jen.Id("dup"), jen.Id("valid")).Op(":=").Qual(jsonscanPkg, "DuplicateKeys").Call(jen.Id("s")),
			jen.Switch().Block(
				jen.Case(jen.Op("!").Id("valid")).Block(
					jen.List(jen.Id("typ"), jen.Id("code"), jen.Id("rule"), jen.Id("path"), jen.Id("msg")).Op("=").List(jen.Lit(""), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleJSON)), jen.Lit(""), jen.Lit(g.frameRule(ruleJSON).Message)),
				),
				jen.Case(jen.Id("dup")).Block(
					jen.List(jen.Id("code"), jen.Id("rule"), jen.Id("path"), jen.Id("msg")).Op("=").List(jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleDup)), jen.Lit(""), jen.Lit(g.frameRule(ruleDup).Message)),
				),
			),
		),
		jen.Id("e").Op(":=").Op("&").Id("RejectError").Values(jen.Dict{
			jen.Id("Code"):       jen.Id("code"),
			jen.Id("Type"):       jen.Id("typ"),
			jen.Id("Violations"): jen.Index().Id("Violation").Values(jen.Values(jen.Dict{jen.Id("Path"): jen.Id("path"), jen.Id("Rule"): jen.Id("rule"), jen.Id("Message"): jen.Id("msg")})),
		}),
		jen.If(jen.Id("rule").Op("!=").Id(ruleConst(ruleJSON))).Block(
			jen.List(jen.Id("e").Dot("RequestID"), jen.Id("e").Dot("HasRequestID")).Op("=").Id("recoverRequestID").Call(jen.Id("s")),
		),
		jen.Return(jen.Id("e")),
	)
	f.Comment("reject builds the rejection of a frame that failed its schema or refinements.")
	f.Func().Id("reject").Params(jen.List(jen.Id("s"), jen.Id("typ")).String(), jen.Id("c").Op("*").Qual(violationPkg, "Collector")).Op("*").Id("RejectError").Block(
		jen.Id("e").Op(":=").Op("&").Id("RejectError").Values(jen.Dict{jen.Id("Code"): jen.Id(codeConst("MALFORMED")), jen.Id("Type"): jen.Id("typ"), jen.Id("Violations"): jen.Id("c").Dot("List").Call()}),
		jen.List(jen.Id("e").Dot("RequestID"), jen.Id("e").Dot("HasRequestID")).Op("=").Id("recoverRequestID").Call(jen.Id("s")),
		jen.Return(jen.Id("e")),
	)
	f.Func().Id("supported").Params(jen.Id("v").Int64()).Bool().Block(
		jen.For(jen.List(jen.Id("_"), jen.Id("x")).Op(":=").Range().Id("ProtocolVersions")).Block(
			jen.If(jen.Int64().Call(jen.Id("x")).Op("==").Id("v")).Block(jen.Return(jen.True())),
		),
		jen.Return(jen.False()),
	)
	f.Comment("foldCollisions returns the keys of m that equal another key case-insensitively:")
	f.Comment("lowercased as JavaScript's toLowerCase does (jsonscan.LowerJS), so Go and JS agree.")
	f.Comment("A check calls it only when its walk over the keys saw a possible collision.")
	f.Func().Id("foldCollisions").Types(jen.Id("V").Any()).Params(jen.Id("m").Map(jen.String()).Id("V")).Index().String().Block(
		jen.Var().Id("out").Index().String(),
		jen.Var().Id("arr").Index(jen.Lit(16)).String(),
		jen.Id("keys").Op(":=").Id("arr").Index(jen.Empty(), jen.Lit(0)),
		jen.For(jen.Id("k").Op(":=").Range().Id("m")).Block(jen.Id("keys").Op("=").Append(jen.Id("keys"), jen.Id("k"))),
		jen.If(jen.Len(jen.Id("keys")).Op("<=").Lit(16)).Block(
			jen.Var().Id("ascii").Index(jen.Lit(16)).Bool(),
			jen.Var().Id("hit").Index(jen.Lit(16)).Bool(),
			jen.For(jen.List(jen.Id("i"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(jen.Id("ascii").Index(jen.Id("i")).Op("=").Qual(jsonscanPkg, "IsASCII").Call(jen.Id("k"))),
			jen.For(jen.Id("i").Op(":=").Range().Id("keys")).Block(
				jen.For(jen.Id("j").Op(":=").Id("i").Op("+").Lit(1), jen.Id("j").Op("<").Len(jen.Id("keys")), jen.Id("j").Op("++")).Block(
					jen.If(jen.Id("ascii").Index(jen.Id("i")).Op("&&").Id("ascii").Index(jen.Id("j")).Op("&&").Len(jen.Id("keys").Index(jen.Id("i"))).Op("!=").Len(jen.Id("keys").Index(jen.Id("j")))).Block(jen.Continue()),
					jen.If(jen.Qual(jsonscanPkg, "EqualLowerJS").Call(jen.Id("keys").Index(jen.Id("i")), jen.Id("keys").Index(jen.Id("j")))).Block(
						jen.List(jen.Id("hit").Index(jen.Id("i")), jen.Id("hit").Index(jen.Id("j"))).Op("=").List(jen.True(), jen.True()),
					),
				),
			),
			jen.For(jen.List(jen.Id("i"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(
				jen.If(jen.Id("hit").Index(jen.Id("i"))).Block(jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("k"))),
			),
			jen.Return(jen.Id("out")),
		),
		jen.Id("count").Op(":=").Make(jen.Map(jen.String()).Int(), jen.Len(jen.Id("keys"))),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(jen.Id("count").Index(jen.Qual(jsonscanPkg, "LowerJS").Call(jen.Id("k"))).Op("++")),
		jen.For(jen.List(jen.Id("_"), jen.Id("k")).Op(":=").Range().Id("keys")).Block(
			jen.If(jen.Id("count").Index(jen.Qual(jsonscanPkg, "LowerJS").Call(jen.Id("k"))).Op(">").Lit(1)).Block(jen.Id("out").Op("=").Append(jen.Id("out"), jen.Id("k"))),
		),
		jen.Return(jen.Id("out")),
	)
	g.lowerInASCIIFuncs(f)

	// Parse.
	fr := func(id string) *model.FrameRule { return g.frameRule(id) }
	var cases []jen.Code
	for _, x := range g.m.Frames {
		cases = append(cases, jen.Case(jen.Id(typeConst(x.Type))).Block(
			jen.If(jen.Len(jen.Id("raw")).Op(">").Id(goName(g.sizeLimit(x)))).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleSize)), jen.Lit(""), jen.Lit(fr(ruleSize).Message))),
			),
			jen.Id("f").Op(":=").New(jen.Id(x.Title)),
			jen.Id("d").Dot("Reset").Call(jen.Id("s")),
			jen.Id("d").Dot("BeginObject").Call(),
			jen.Id("decode"+x.Title).Call(jen.Op("&").Id("d"), jen.Id("f"), jen.Op("&").Id("c")),
			jen.If(jen.Op("!").Id("d").Dot("End").Call()).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Lit(""), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleJSON)), jen.Lit(""), jen.Id("d").Dot("Err").Dot("Error").Call())),
			),
			jen.If(jen.Id("d").Dot("Dup")).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleDup)), jen.Lit(""), jen.Lit(fr(ruleDup).Message))),
			),
			jen.If(jen.Id("c").Dot("Len").Call().Op("==").Lit(0)).Block(jen.Id("f").Dot("check").Call(jen.Op("&").Id("c"))),
			jen.If(jen.Id("c").Dot("Len").Call().Op(">").Lit(0)).Block(jen.Return(jen.Nil(), jen.Id("reject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Op("&").Id("c")))),
			jen.Return(jen.Id("f"), jen.Nil()),
		))
	}
	cases = append(cases, jen.Default().Block(
		jen.Comment("R2: a supported v with a type this version does not know is ignored"),
		jen.Comment("once the text is known to be JSON with one reading of v and type; a key"),
		jen.Comment("twice anywhere else is the unknown frame's business, not a reason to answer."),
		jen.If(jen.Op("!").Id("headerOnce").Call(jen.Id("s"))).Block(
			jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleDup)), jen.Lit(""), jen.Lit(fr(ruleDup).Message))),
		),
		jen.Return(jen.Nil(), jen.Nil()),
	))
	f.Comment("Parse applies R1, R2, R6, the schemas and the rules to one frame's JSON text.")
	f.Comment("")
	f.Comment("	accept: (frame, nil)")
	f.Comment("	ignore (R2, a type this version does not know, with a supported v): (nil, nil)")
	f.Comment("	reject: (nil, *RejectError)")
	f.Comment("")
	f.Comment("Checks run in stages (the shape: types, required and unknown keys; then values;")
	f.Comment("then refinements) and a rejection lists the violations of the first stage that")
	f.Comment("has any.")
	f.Func().Id("Parse").Params(jen.Id("raw").Index().Byte()).Params(jen.Id("Frame"), jen.Error()).Block(
		jen.Id("s").Op(":=").String().Call(jen.Id("raw")),
		jen.Var().Id("d").Qual(jsonscanPkg, "Decoder"),
		jen.Id("d").Dot("Reset").Call(jen.Id("s")),
		jen.Var().Id("h").Id("header"),
		jen.If(jen.Op("!").Id("h").Dot("scan").Call(jen.Op("&").Id("d"))).Block(
			jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Lit(""), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleJSON)), jen.Lit(""), jen.Lit(fr(ruleJSON).Message))),
		),
		jen.Switch().Block(
			jen.Case(jen.Op("!").Id("h").Dot("seenV").Op("||").Op("!").Id("h").Dot("vInt")).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleVersion)), jen.Lit("/v"), jen.Lit(fr(ruleVersion).Message))),
			),
			jen.Case(jen.Op("!").Id("supported").Call(jen.Id("h").Dot("v"))).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Id("h").Dot("typ"), jen.Id(codeConst("UNSUPPORTED_VERSION")), jen.Id(ruleConst(ruleUnsupported)), jen.Lit("/v"), jen.Lit(fr(ruleUnsupported).Message))),
			),
			jen.Case(jen.Op("!").Id("h").Dot("hasType")).Block(
				jen.Return(jen.Nil(), jen.Id("frameReject").Call(jen.Id("s"), jen.Lit(""), jen.Id(codeConst("MALFORMED")), jen.Id(ruleConst(ruleType)), jen.Lit("/type"), jen.Lit(fr(ruleType).Message))),
			),
		),
		jen.Var().Id("c").Qual(violationPkg, "Collector"),
		jen.Switch(jen.Id("h").Dot("typ")).Block(cases...),
	)

	// Decoders and validators.
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
			jen.If(jen.Id("c").Dot("Len").Call().Op("==").Lit(0)).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Id("validateReject").Call(jen.Id(typeConst(x.Type)), rid, jen.Op("&").Id("c"))),
		)
	}
	f.Func().Id("validateReject").Params(jen.List(jen.Id("typ"), jen.Id("rid")).String(), jen.Id("c").Op("*").Qual(violationPkg, "Collector")).Error().Block(
		jen.Return(jen.Op("&").Id("RejectError").Values(jen.Dict{
			jen.Id("Code"): jen.Id(codeConst("MALFORMED")), jen.Id("Type"): jen.Id("typ"),
			jen.Id("RequestID"): jen.Id("rid"), jen.Id("HasRequestID"): jen.Id("plausibleID").Call(jen.Id("rid")),
			jen.Id("Violations"): jen.Id("c").Dot("List").Call(),
		})),
	)
	for _, name := range g.order {
		o := g.structs[name]
		g.decodeObject(f, name, o, false)
		g.validateObject(f, name, o)
	}
}

// answerFrame is the expression of the answer frame a of a rejected request.
func (g *gen) answerFrame(a *model.Frame) jen.Code {
	dict := jen.Dict{jen.Id("RequestID"): jen.Id("e").Dot("RequestID")}
	ref := g.m.Rules.Refusal
	switch {
	case fieldByName(a.Body, "error") != nil:
		dict[jen.Id(goName("error"))] = jen.Id("NewError").Call(jen.Id("e").Dot("Code"), jen.Id("msg"))
		if ok := fieldByName(a.Body, "ok"); ok != nil {
			dict[jen.Id(goName("ok"))] = jen.False()
		}
	case fieldByName(a.Body, ref.Field) != nil:
		dict[jen.Id(goName(ref.Field))] = jen.Lit(ref.Value)
		if fl := fieldByName(a.Body, ref.ReasonField); fl != nil {
			if fl.Required {
				dict[jen.Id(goName(ref.ReasonField))] = jen.Id("e").Dot("Code")
			} else {
				dict[jen.Id(goName(ref.ReasonField))] = jen.Op("&").Id("e").Dot("Code")
			}
		}
	}
	return jen.Op("&").Id(a.Title).Values(dict)
}
