package golang

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/snuggen/snuggen/gen/model"
)

// goType is the Go type of a value; optional scalars and structs are
// pointers so a missing field differs from a zero value.
func (g *gen) goType(t *model.Type, optional bool) *jen.Statement {
	ptr := func(s *jen.Statement) *jen.Statement {
		if optional {
			return jen.Op("*").Add(s)
		}
		return s
	}
	switch t.Kind {
	case model.String:
		return ptr(jen.String())
	case model.Integer:
		return ptr(jen.Int())
	case model.Number:
		return ptr(jen.Float64())
	case model.Boolean:
		return ptr(jen.Bool())
	case model.Struct:
		return ptr(jen.Id(t.Object.Name))
	case model.RawObject, model.Any:
		return jen.Qual(encJSON, "RawMessage")
	case model.Map:
		return jen.Map(jen.String()).Add(g.goType(t.Elem, false))
	case model.Array:
		return jen.Index().Add(g.goType(t.Elem, false))
	case model.Scalar:
		return jen.Any()
	}
	panic(fmt.Sprintf("golang: unknown kind %v", t.Kind))
}

// fieldDoc describes a field's shape and constraints for its doc comment.
func fieldDoc(f *model.Field) string {
	var parts []string
	t := f.Type
	if f.Doc != "" {
		parts = append(parts, strings.TrimSuffix(f.Doc, "."))
	}
	if !f.Required {
		parts = append(parts, "optional")
	}
	switch {
	case t.MinLength != nil && t.MaxLength != nil:
		parts = append(parts, fmt.Sprintf("%d–%d code points", *t.MinLength, *t.MaxLength))
	case t.MaxLength != nil:
		parts = append(parts, fmt.Sprintf("≤%d code points", *t.MaxLength))
	case t.MinLength != nil:
		parts = append(parts, fmt.Sprintf("≥%d code points", *t.MinLength))
	}
	if t.Minimum != nil || t.Maximum != nil {
		lo, hi := "", ""
		if t.Minimum != nil {
			lo = fmt.Sprint(*t.Minimum)
		}
		if t.Maximum != nil {
			hi = fmt.Sprint(*t.Maximum)
		}
		parts = append(parts, fmt.Sprintf("range [%s, %s]", lo, hi))
	}
	if t.Enum != nil {
		parts = append(parts, "one of "+strings.Join(t.Enum, ", "))
	}
	if t.Const != nil {
		parts = append(parts, "always "+*t.Const)
	}
	if t.MaxItems != nil {
		parts = append(parts, fmt.Sprintf("≤%d items", *t.MaxItems))
	}
	if t.MinItems != nil {
		parts = append(parts, fmt.Sprintf("≥%d items", *t.MinItems))
	}
	if t.MaxProperties != nil {
		parts = append(parts, fmt.Sprintf("≤%d entries", *t.MaxProperties))
	}
	if t.Kind == model.Any || t.Kind == model.RawObject {
		parts = append(parts, "raw JSON, nil when absent")
	}
	return strings.Join(parts, "; ")
}

func (g *gen) structFields(o *model.Object) []jen.Code {
	var fs []jen.Code
	for _, fl := range o.Fields {
		tag := fl.Name
		switch {
		case fl.Required:
		case fl.Type.Kind == model.Array || fl.Type.Kind == model.Map:
			// omitzero drops only a nil slice or map: an optional field that
			// is present but empty (an exec result with no rows) stays on
			// the wire as [] or {}.
			tag += ",omitzero"
		default:
			tag += ",omitempty"
		}
		fs = append(fs, jen.Id(goName(fl.Name)).Add(g.goType(fl.Type, !fl.Required)).Tag(map[string]string{"json": tag}).Comment(fieldDoc(fl)))
	}
	return fs
}

func docLine(s string) string {
	s = strings.TrimSpace(s)
	if s != "" && !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// frames emits the Frame interface, one struct per frame and per nested
// object, FrameType methods and the chat envelope struct.
func (g *gen) frames(f *jen.File) {
	f.Comment("Frame is any of the frames of rules.json. Structs hold every field but v and type,")
	f.Comment("which Marshal sets from FrameType.")
	f.Type().Id("Frame").Interface(jen.Id("FrameType").Params().String())

	for _, fr := range g.m.Frames {
		f.Commentf("%s is %s (%s). %s", fr.Title, fr.Type, fr.Direction, docLine(fr.Doc))
		f.Type().Id(fr.Title).Struct(g.structFields(fr.Body)...)
		f.Commentf("FrameType returns %s.", fr.Type)
		f.Func().Params(jen.Op("*").Id(fr.Title)).Id("FrameType").Params().String().Block(jen.Return(jen.Id(typeConst(fr.Type))))
	}
	for _, name := range g.order {
		o := g.structs[name]
		doc := docLine(o.Doc)
		if doc == "" {
			doc = "is an object of the frame schemas."
			if o == g.m.Error {
				doc = "is the error object."
			}
			f.Commentf("%s %s", name, doc)
		} else {
			f.Commentf("%s: %s", name, doc)
		}
		f.Type().Id(name).Struct(g.structFields(o)...)
	}
	if env := g.m.Envelope; env != nil {
		f.Comment("Envelope is the chat envelope's JSON without its version marker; the wire form")
		f.Comment("is EnvelopeTag, a newline, then the JSON with EnvelopeMarker: EnvelopeVersion first.")
		f.Type().Id("Envelope").Struct(g.structFields(env)...)
	}

}
