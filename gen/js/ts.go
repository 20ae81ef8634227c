package js

import (
	"fmt"
	"strings"

	"github.com/snuggen/snuggen/gen/model"
)

// tsReserved are names a generated interface must not take in a module
// that app code reads next to the DOM's globals.
var tsReserved = map[string]bool{"Error": true, "Event": true, "Response": true, "Headers": true}

func tsName(n string) string {
	if tsReserved[n] {
		return n + "Object"
	}
	return n
}

// tsDecls renders one interface per frame and per titled object, in frame
// and field order.
func tsDecls(m *model.Model) []string {
	var decls []string
	done := map[string]bool{}
	var pending []*model.Object
	typ := func(t *model.Type) string { return tsType(t, &pending) }
	for _, f := range m.Frames {
		var b strings.Builder
		doc(&b, f.Doc, "")
		fmt.Fprintf(&b, "export interface %s {\n  v: %d;\n  type: %s;\n", f.Title, m.Version, jsonText(f.Type))
		fields(&b, f.Body, typ)
		b.WriteString("}")
		decls = append(decls, b.String())
		done[f.Title] = true
	}
	for len(pending) > 0 {
		o := pending[0]
		pending = pending[1:]
		if done[o.Name] {
			continue
		}
		done[o.Name] = true
		var b strings.Builder
		doc(&b, o.Doc, "")
		fmt.Fprintf(&b, "export interface %s {\n", tsName(o.Name))
		fields(&b, o, typ)
		b.WriteString("}")
		decls = append(decls, b.String())
	}
	return decls
}

func fields(b *strings.Builder, o *model.Object, typ func(*model.Type) string) {
	for _, f := range o.Fields {
		doc(b, f.Doc, "  ")
		opt := "?"
		if f.Required {
			opt = ""
		}
		fmt.Fprintf(b, "  %s%s: %s;\n", f.Name, opt, typ(f.Type))
	}
}

func doc(b *strings.Builder, text, indent string) {
	if text = strings.TrimSpace(text); text != "" {
		fmt.Fprintf(b, "%s/** %s */\n", indent, strings.ReplaceAll(text, "*/", "* /"))
	}
}

// tsType is t as a TypeScript type; titled objects are named and queued.
func tsType(t *model.Type, pending *[]*model.Object) string {
	switch t.Kind {
	case model.String:
		if t.Const != nil {
			return jsonText(*t.Const)
		}
		if len(t.Enum) > 0 {
			var alts []string
			for _, e := range t.Enum {
				alts = append(alts, jsonText(e))
			}
			return strings.Join(alts, " | ")
		}
		return "string"
	case model.Integer, model.Number:
		return "number"
	case model.Boolean:
		return "boolean"
	case model.Struct:
		if t.Object == nil {
			return "Record<string, unknown>"
		}
		if t.Object.Name != "" {
			*pending = append(*pending, t.Object)
			return tsName(t.Object.Name)
		}
		var b strings.Builder
		b.WriteString("{ ")
		for _, f := range t.Object.Fields {
			opt := "?"
			if f.Required {
				opt = ""
			}
			fmt.Fprintf(&b, "%s%s: %s; ", f.Name, opt, tsType(f.Type, pending))
		}
		b.WriteString("}")
		return b.String()
	case model.RawObject:
		return "Record<string, unknown>"
	case model.Map:
		elem := "unknown"
		if t.Elem != nil {
			elem = tsType(t.Elem, pending)
		}
		return "Record<string, " + elem + ">"
	case model.Array:
		elem := "unknown"
		if t.Elem != nil {
			elem = tsType(t.Elem, pending)
		}
		if strings.ContainsAny(elem, "|&") {
			elem = "(" + elem + ")"
		}
		return elem + "[]"
	case model.Scalar:
		return "string | number | boolean | null"
	}
	return "unknown"
}
