package golang

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/snuggen/snuggen/gen/model"
)

// encode emits the host's encoders: for every host→app frame and every
// object inside one, appendMembers writes the members encoding/json would
// write for the struct (the same bytes, in field order, omitting what its
// tags omit), and encodeFrame picks a frame's. A value whose Go type admits
// only what its schema does (strings, integers, booleans, objects and
// arrays of them) is written by code that cannot write what Parse refuses;
// a raw JSON value is checked as Parse checks it (jsonscan, at its depth in
// the frame); anything else (numbers, scalars, maps, arrays of those) is
// written by encoding/json and leaves the frame unsure, for Parse to judge.
// A required value the struct leaves empty, or a required-when member
// missing, leaves it bad. Encode (hand-written, frame/encode.go) runs them.
func (g *gen) encode(f *jen.File) {
	objs := map[string]*model.Object{}
	var order []string
	var walk func(t *model.Type)
	walk = func(t *model.Type) {
		if t == nil {
			return
		}
		if t.Kind == model.Struct {
			if _, ok := objs[t.Object.Name]; !ok {
				objs[t.Object.Name] = t.Object
				order = append(order, t.Object.Name)
				for _, fl := range t.Object.Fields {
					walk(fl.Type)
				}
			}
		}
		walk(t.Elem)
	}
	var frames []*model.Frame
	for _, fr := range g.m.Frames {
		if fr.Direction != model.HostToApp {
			continue
		}
		frames = append(frames, fr)
		for _, fl := range fr.Body.Fields {
			walk(fl.Type)
		}
	}
	var cases []jen.Code
	for _, fr := range frames {
		cases = append(cases, jen.Case(jen.Op("*").Id(fr.Title)).Block(
			jen.Id("e").Dot("b").Op("=").Append(jen.Id("e").Dot("b"), jen.Lit(fmt.Sprintf(`{"v":%d,"type":%s`, g.m.Version, jsonLit(fr.Type))).Op("...")),
			jen.Id("f").Dot("appendMembers").Call(jen.Id("e"), jen.Lit(1)),
			jen.Id("e").Dot("b").Op("=").Append(jen.Id("e").Dot("b"), jen.LitRune('}')),
		))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.False())))
	f.Comment("encodeFrame appends f's wire form to e, the bytes Marshal writes, and reports")
	f.Comment("false for a frame the host never sends (an app→host frame), leaving e as it was.")
	f.Func().Id("encodeFrame").Params(jen.Id("e").Op("*").Id("encoder"), jen.Id("f").Id("Frame")).Bool().Block(
		jen.Switch(jen.Id("f").Op(":=").Id("f").Assert(jen.Type())).Block(cases...),
		jen.Return(jen.True()),
	)
	for _, fr := range frames {
		g.appendMembers(f, fr.Title, fr.Body)
	}
	for _, name := range order {
		g.appendMembers(f, name, objs[name])
	}
}

// appendMembers emits one object's appendMembers: each member as
// `,"name":value`, depth the object's own nesting in the frame (the frame is
// 1), then the checks of its required-when members.
func (g *gen) appendMembers(f *jen.File, name string, o *model.Object) {
	e := jen.Id("e")
	var body []jen.Code
	for _, fl := range o.Fields {
		v := jen.Id("f").Dot(goName(fl.Name))
		key := jen.Id("e").Dot("b").Op("=").Append(jen.Id("e").Dot("b"), jen.Lit(","+jsonLit(fl.Name)+":").Op("..."))
		scalarPtr := !fl.Required && (fl.Type.Kind == model.String || fl.Type.Kind == model.Integer || fl.Type.Kind == model.Number || fl.Type.Kind == model.Boolean || fl.Type.Kind == model.Struct)
		val := v.Clone()
		if scalarPtr {
			val = jen.Op("*").Add(v.Clone())
			if fl.Type.Kind == model.Struct {
				val = v.Clone() // appendMembers takes the pointer
			}
		}
		write := append([]jen.Code{key}, g.encodeValue(fl.Type, val, jen.Id("depth"), fl.Required)...)
		switch {
		case fl.Required:
			body = append(body, write...)
		case scalarPtr || fl.Type.Kind == model.Array || fl.Type.Kind == model.Map:
			// omitempty on a pointer, omitzero on a slice or map: nil only.
			body = append(body, jen.If(v.Clone().Op("!=").Nil()).Block(write...))
		default:
			// omitempty on json.RawMessage: empty.
			body = append(body, jen.If(jen.Len(v.Clone()).Op("!=").Lit(0)).Block(write...))
		}
	}
	for _, c := range o.Conds {
		if len(c.Require) == 0 {
			continue // pins are Validate's (the value stage)
		}
		cond := holds(o, c.When)
		var missing jen.Code
		for _, r := range c.Require {
			fl := fieldByName(o, r)
			if fl.Required {
				continue
			}
			var m *jen.Statement
			switch fl.Type.Kind {
			case model.Any, model.RawObject:
				m = jen.Len(jen.Id("f").Dot(goName(r))).Op("==").Lit(0)
			default:
				m = jen.Id("f").Dot(goName(r)).Op("==").Nil()
			}
			if missing == nil {
				missing = m
			} else {
				missing = jen.Add(missing).Op("||").Add(m)
			}
		}
		if missing != nil {
			body = append(body, jen.If(jen.Add(cond).Op("&&").Parens(missing)).Block(e.Clone().Dot("bad").Op("=").True()))
		}
	}
	f.Commentf("appendMembers appends f's members to e, each as `,\"name\":value`; depth is f's")
	f.Comment("nesting in its frame (the frame's own members: 1).")
	params := jen.Id("e").Op("*").Id("encoder")
	depthUsed := false
	for _, fl := range o.Fields {
		if g.usesDepth(fl.Type) {
			depthUsed = true
		}
	}
	depth := jen.Id("depth").Int()
	if !depthUsed {
		depth = jen.Id("_").Int()
	}
	f.Func().Params(jen.Id("f").Op("*").Id(name)).Id("appendMembers").Params(params, depth).Block(body...)
}

// usesDepth reports whether writing a value of t needs its depth: a raw
// value is checked at its depth, an object passes it on.
func (g *gen) usesDepth(t *model.Type) bool {
	switch t.Kind {
	case model.Any, model.RawObject, model.Struct:
		return true
	case model.Array:
		return g.constructive(t.Elem) && g.usesDepth(t.Elem)
	}
	return false
}

// constructive reports whether a value of t is written by code that can
// only write what its schema's shape admits (its values are Validate's).
func (g *gen) constructive(t *model.Type) bool {
	switch t.Kind {
	case model.String, model.Integer, model.Boolean, model.Struct, model.Any, model.RawObject:
		return true
	case model.Array:
		return g.constructive(t.Elem)
	}
	return false
}

// encodeValue writes v, a value of t (a struct addressable or a pointer), at depth (of
// the object holding it; v's own nesting is depth+1).
func (g *gen) encodeValue(t *model.Type, v jen.Code, depth jen.Code, required bool) []jen.Code {
	e := jen.Id("e")
	inner := jen.Add(depth).Op("+").Lit(1)
	switch t.Kind {
	case model.String:
		return []jen.Code{e.Clone().Dot("str").Call(v)}
	case model.Integer:
		return []jen.Code{e.Clone().Dot("int").Call(v)}
	case model.Boolean:
		return []jen.Code{e.Clone().Dot("boolean").Call(v)}
	case model.Struct:
		return []jen.Code{jen.Block(
			jen.Id("n").Op(":=").Len(e.Clone().Dot("b")),
			jen.Add(v).Dot("appendMembers").Call(e, inner),
			e.Clone().Dot("close").Call(jen.Id("n")),
		)}
	case model.Any, model.RawObject:
		return []jen.Code{e.Clone().Dot("raw").Call(v, depth, jen.Lit(t.Kind == model.RawObject))}
	case model.Array:
		if g.constructive(t.Elem) {
			elem := jen.Id("x")
			if t.Elem.Kind == model.Struct {
				elem = jen.Id("v").Index(jen.Id("i")) // addressable: its method takes the pointer
			}
			var loop []jen.Code
			loop = append(loop, jen.If(jen.Id("i").Op(">").Lit(0)).Block(e.Clone().Dot("b").Op("=").Append(e.Clone().Dot("b"), jen.LitRune(','))))
			loop = append(loop, g.encodeValue(t.Elem, elem, inner, true)...)
			rng := jen.List(jen.Id("i"), jen.Id("x"))
			if t.Elem.Kind == model.Struct {
				rng = jen.Id("i")
			}
			out := []jen.Code{}
			if required {
				// encoding/json writes a nil slice as null, which no array
				// schema admits.
				out = append(out, jen.If(jen.Add(v).Op("==").Nil()).Block(e.Clone().Dot("bad").Op("=").True()))
			}
			return append(out, jen.Block(
				jen.Id("v").Op(":=").Add(v),
				e.Clone().Dot("b").Op("=").Append(e.Clone().Dot("b"), jen.LitRune('[')),
				jen.For(rng.Op(":=").Range().Id("v")).Block(loop...),
				e.Clone().Dot("b").Op("=").Append(e.Clone().Dot("b"), jen.LitRune(']')),
			))
		}
		return []jen.Code{e.Clone().Dot("marshal").Call(v)}
	case model.Number, model.Map, model.Scalar:
		return []jen.Code{e.Clone().Dot("marshal").Call(v)}
	}
	panic(fmt.Sprintf("golang: encode: unknown kind %v", t.Kind))
}
