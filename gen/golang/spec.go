package golang

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/snuggen/snuggen/gen/model"
)

func lits[T any](vs []T) []jen.Code {
	out := make([]jen.Code, len(vs))
	for i, v := range vs {
		out[i] = jen.Lit(v)
	}
	return out
}

// spec emits constants, codes, limits, lists and their helpers, in this
// order.
func (g *gen) spec(f *jen.File) {
	for _, emit := range []func(*jen.File){
		g.versionAndTypes, g.codes, g.enums, g.limits, g.sizeClass, g.lists,
		g.events, g.eventFields, g.sandbox, g.ruleIDs,
		g.fieldLimits, g.patternVars, g.messages, g.announceFields,
	} {
		emit(f)
	}
}

// versionAndTypes emits the protocol versions and the frame types.
func (g *gen) versionAndTypes(f *jen.File) {
	m := g.m
	f.Comment("Version is the protocol version every frame carries in v.")
	f.Const().Id("Version").Op("=").Lit(m.Version)
	f.Comment("ProtocolVersions lists the versions this package speaks (advertised in host-ready).")
	f.Var().Id("ProtocolVersions").Op("=").Index().Int().Values(lits(m.ProtocolVersions)...)

	var defs []jen.Code
	for _, fr := range m.Frames {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s is %s (%s).", typeConst(fr.Type), fr.Type, fr.Direction)),
			jen.Id(typeConst(fr.Type)).Op("=").Lit(fr.Type))
	}
	f.Comment("Frame types.")
	f.Const().Defs(defs...)
	var types []jen.Code
	for _, fr := range m.Frames {
		types = append(types, jen.Id(typeConst(fr.Type)))
	}
	f.Comment("Types lists every frame type Parse knows, in the rules file's order; it")
	f.Comment("ignores a frame of any other type that has a valid v (R2).")
	f.Var().Id("Types").Op("=").Index().String().Values(types...)
}

// codes emits the error codes, Retryable and Known.
func (g *gen) codes(f *jen.File) {
	r := g.m.Rules
	var defs []jen.Code
	for _, e := range r.Errors {
		doc := fmt.Sprintf("%s: %s.", codeConst(e.Code), strings.TrimSuffix(e.When, "."))
		defs = append(defs, jen.Comment(doc), jen.Id(codeConst(e.Code)).Op("=").Lit(e.Code))
	}
	f.Comment("Error codes: Part I R5, Appendix A and the db extension codes.")
	f.Const().Defs(defs...)

	f.Comment("Retryable reports the registry's retryable column for code; false for a code")
	f.Comment("not in it. PARSE_FAILED is retryable while attempts remain, so true here.")
	f.Func().Id("Retryable").Params(jen.Id("code").String()).Bool().BlockFunc(func(b *jen.Group) {
		var yes []jen.Code
		for _, e := range r.Errors {
			if e.Retryable != model.RetryNo {
				yes = append(yes, jen.Id(codeConst(e.Code)))
			}
		}
		b.Switch(jen.Id("code")).Block(
			jen.Case(yes...).Block(jen.Return(jen.True())),
		)
		b.Return(jen.False())
	})
	f.Comment("Known reports whether code is in the error registry. Receivers render an")
	f.Comment("unknown code as HOST_ERROR and treat it per its retryable field.")
	f.Func().Id("Known").Params(jen.Id("code").String()).Bool().BlockFunc(func(b *jen.Group) {
		var all []jen.Code
		for _, e := range r.Errors {
			all = append(all, jen.Id(codeConst(e.Code)))
		}
		b.Switch(jen.Id("code")).Block(jen.Case(all...).Block(jen.Return(jen.True())))
		b.Return(jen.False())
	})
}

// limits emits the limits, the recovered id's bounds and the backoff.
func (g *gen) limits(f *jen.File) {
	r := g.m.Rules
	var defs []jen.Code
	for _, l := range r.Limits {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s is %s. %s", goName(l.Name), l.Name, l.Doc)), jen.Id(goName(l.Name)).Op("=").Lit(l.Value))
	}
	f.Comment("Limits (R6 and the rules file).")
	f.Const().Defs(defs...)
	f.Comment("RecoverMinCodePoints and RecoverMaxCodePoints bound the requestId")
	f.Comment("recovered from a frame that fails (R1): only such an id is answered.")
	f.Const().Defs(
		jen.Id("RecoverMinCodePoints").Op("=").Lit(r.RecoverMinLength),
		jen.Id("RecoverMaxCodePoints").Op("=").Lit(r.RecoverMaxLength),
	)

	f.Comment("ThreadConflictBackoff is the agent-thread backoff before THREAD_CONFLICT.")
	var bo []jen.Code
	for _, ms := range r.ThreadConflictMs {
		bo = append(bo, jen.Lit(ms).Op("*").Qual("time", "Millisecond"))
	}
	f.Var().Id("ThreadConflictBackoff").Op("=").Index().Qual("time", "Duration").Values(bo...)
}

// sizeClass emits SizeClass.
func (g *gen) sizeClass(f *jen.File) {
	m, r := g.m, g.m.Rules
	f.Comment("SizeClass returns the largest frame in bytes for frameType (R6); the default")
	f.Comment("class for a type it does not know.")
	f.Func().Id("SizeClass").Params(jen.Id("frameType").String()).Int().BlockFunc(func(b *jen.Group) {
		byClass := map[string][]jen.Code{}
		var classes []string
		var def string
		for _, sc := range r.SizeClasses {
			if def == "" {
				def = sc.Limit
			}
		}
		for _, fr := range m.Frames {
			lim := ""
			for _, sc := range r.SizeClasses {
				if sc.Name == fr.SizeClass {
					lim = sc.Limit
				}
			}
			if lim == def {
				continue
			}
			if _, ok := byClass[lim]; !ok {
				classes = append(classes, lim)
			}
			byClass[lim] = append(byClass[lim], jen.Id(typeConst(fr.Type)))
		}
		var cases []jen.Code
		for _, c := range classes {
			cases = append(cases, jen.Case(byClass[c]...).Block(jen.Return(jen.Id(goName(c)))))
		}
		b.Switch(jen.Id("frameType")).Block(cases...)
		b.Return(jen.Id(goName(def)))
	})
}

// lists emits the lists and the envelope's constants.
func (g *gen) lists(f *jen.File) {
	r := g.m.Rules
	for _, l := range r.Lists {
		f.Comment(fmt.Sprintf("%s is %s from the rules file.", goName(l.Name), l.Name))
		f.Var().Id(goName(l.Name)).Op("=").Index().String().Values(lits(l.Values)...)
	}
	f.Comment("EnvelopeTag starts an app-originated chat turn: EnvelopeTag, a newline, the JSON.")
	f.Const().Id("EnvelopeTag").Op("=").Lit(r.EnvelopeTag)
	f.Comment("EnvelopeMarker is the envelope JSON's version key; it carries EnvelopeVersion.")
	f.Const().Id("EnvelopeMarker").Op("=").Lit(r.EnvelopeMarker)
	f.Comment("EnvelopeVersion is the value of the envelope's marker (snug: 1).")
	f.Const().Id("EnvelopeVersion").Op("=").Lit(r.EnvelopeVersion)
}

// events emits the event names and the host's and app's lists.
func (g *gen) events(f *jen.File) {
	r := g.m.Rules
	var defs []jen.Code
	var hostEv, appEv []jen.Code
	for _, e := range r.Events {
		var fields []string
		for _, d := range e.Data {
			fields = append(fields, d.Name)
		}
		defs = append(defs, jen.Comment(fmt.Sprintf("%s is the %s event (%s), data {%s}.", eventConst(e.Name), e.Name, e.Direction, strings.Join(fields, ", "))),
			jen.Id(eventConst(e.Name)).Op("=").Lit(e.Name))
		if e.Direction == model.HostToApp {
			hostEv = append(hostEv, jen.Id(eventConst(e.Name)))
		} else {
			appEv = append(appEv, jen.Id(eventConst(e.Name)))
		}
	}
	f.Comment("Events known in v1; others are ignored.")
	f.Const().Defs(defs...)
	f.Comment("HostEvents are the known host→app events.")
	f.Var().Id("HostEvents").Op("=").Index().String().Values(hostEv...)
	f.Comment("AppEvents are the known app→host events.")
	f.Var().Id("AppEvents").Op("=").Index().String().Values(appEv...)
}

// sandbox emits the sandbox tokens and the CSPs.
func (g *gen) sandbox(f *jen.File) {
	r := g.m.Rules
	f.Comment("SandboxTokens is the app iframe's sandbox attribute: these tokens and nothing more.")
	f.Var().Id("SandboxTokens").Op("=").Index().String().Values(lits(r.SandboxTokens)...)
	var dirs []jen.Code
	for _, d := range r.CSP {
		dirs = append(dirs, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(d.Name), jen.Id("Sources"): jen.Index().String().Values(lits(d.Sources)...)}))
	}
	f.Comment("SandboxCSP is the app document's CSP, in order: script and style from inline and")
	f.Comment("CDN_ALLOWLIST, images and fonts from data:, blob: and the allowlist, no connect,")
	f.Comment("frame, form-action, object, worker or base-uri source.")
	f.Var().Id("SandboxCSP").Op("=").Index().Id("CSPDirective").Values(dirs...)
	dirs = nil
	for _, d := range r.HostCSP {
		dirs = append(dirs, jen.Values(jen.Dict{jen.Id("Name"): jen.Lit(d.Name), jen.Id("Sources"): jen.Index().String().Values(lits(d.Sources)...)}))
	}
	f.Comment("HostCSP are the directives a host that serves app documents adds after SandboxCSP,")
	f.Comment("and a packaged file's meta does not carry: Trusted Types, which hold only with the")
	f.Comment("host's prelude (its default policy is what every HTML and script sink goes through).")
	f.Var().Id("HostCSP").Op("=").Index().Id("CSPDirective").Values(dirs...)
}

// ruleIDs emits the rule ids, NormativeRules, frameRule and requestIDField.
func (g *gen) ruleIDs(f *jen.File) {
	r := g.m.Rules
	var defs []jen.Code
	var normative []jen.Code
	for _, nr := range r.NormativeRules {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s (%s): %s.", ruleConst(nr.ID), nr.Source, nr.Title)), jen.Id(ruleConst(nr.ID)).Op("=").Lit(nr.ID))
		normative = append(normative, jen.Values(jen.Dict{jen.Id("ID"): jen.Id(ruleConst(nr.ID)), jen.Id("Source"): jen.Lit(nr.Source), jen.Id("Title"): jen.Lit(nr.Title)}))
	}
	for _, fr := range r.FrameRules {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s: %s (%s).", ruleConst(fr.ID), fr.Message, fr.Code)), jen.Id(ruleConst(fr.ID)).Op("=").Lit(fr.ID))
	}
	for _, x := range r.Refinements {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s (%s): %s.", ruleConst(x.ID), x.Frame, x.Message)), jen.Id(ruleConst(x.ID)).Op("=").Lit(x.ID))
		for _, c := range x.Checks {
			defs = append(defs, jen.Comment(fmt.Sprintf("%s (%s): %s.", ruleConst(c.ID), x.Frame, c.Message)), jen.Id(ruleConst(c.ID)).Op("=").Lit(c.ID))
		}
	}
	var kws []string
	seen := map[string]bool{}
	for _, s := range r.Stages {
		for _, k := range s.Keywords {
			if !seen[k] {
				seen[k] = true
				kws = append(kws, k)
			}
		}
	}
	sort.Strings(kws)
	for _, k := range kws {
		defs = append(defs, jen.Comment(fmt.Sprintf("%s: the JSON Schema keyword %s failed.", ruleConst("schema-"+k), k)), jen.Id(ruleConst("schema-"+k)).Op("=").Lit(k))
	}
	f.Comment("Rule ids: the normative rules a host is held to (rules.json normativeRules,")
	f.Comment("named by snuggen conform's cases), and the ids of violations: frame-level")
	f.Comment("rules, refinements (rules.json) and the JSON Schema keywords, shared with the")
	f.Comment("JS validators.")
	f.Const().Defs(defs...)
	f.Comment("NormativeRules are the rules a host is held to, in the spec's order: what each")
	f.Comment("conformance case of snuggen conform is named by.")
	f.Var().Id("NormativeRules").Op("=").Index().Id("NormativeRule").Values(normative...)

	f.Comment("frameRule returns the code and message of a frame-level rule (rules.json frameRules).")
	f.Func().Id("frameRule").Params(jen.Id("id").String()).Params(jen.List(jen.Id("code"), jen.Id("message")).String()).BlockFunc(func(b *jen.Group) {
		var cases []jen.Code
		for _, fr := range r.FrameRules {
			cases = append(cases, jen.Case(jen.Id(ruleConst(fr.ID))).Block(jen.Return(jen.Id(codeConst(fr.Code)), jen.Lit(fr.Message))))
		}
		b.Switch(jen.Id("id")).Block(cases...)
		b.Return(jen.Id(codeConst("MALFORMED")), jen.Id("id"))
	})
	f.Comment("requestIDField is the top-level member R1 recovers from a rejected frame")
	f.Comment("(rules.json requestIdRecovery), of RecoverMinCodePoints to RecoverMaxCodePoints.")
	f.Const().Id("requestIDField").Op("=").Lit(r.RecoverField)
}

// announceFields emits AnnounceFields: the string fields of the announce frame
// (the frame with an appId and a displayName that apps send first), which
// the packager reads from an app's snug:* meta tags.
func (g *gen) announceFields(f *jen.File) {
	fr := g.m.FrameByType("snug:app-announce")
	if fr == nil {
		return
	}
	var vals []jen.Code
	for _, fl := range fr.Body.Fields {
		if fl.Type.Kind != model.String {
			continue
		}
		d := jen.Dict{jen.Id("Name"): jen.Lit(fl.Name)}
		if fl.Required {
			d[jen.Id("Required")] = jen.True()
		}
		if fl.Type.MaxLength != nil {
			d[jen.Id("MaxLength")] = jen.Lit(*fl.Type.MaxLength)
		}
		vals = append(vals, jen.Values(d))
	}
	f.Commentf("AnnounceFields are the string fields of %s in schema order (an app's", fr.Type)
	f.Comment("snug:* metadata).")
	f.Var().Id("AnnounceFields").Op("=").Index().Id("StringField").Values(vals...)
}

// typeMessages are the type messages the hand-written readers use, by the
// Go name's suffix and the kind's name in rules.json messages.typeNames.
var typeMessages = []struct{ suffix, kind string }{
	{"String", "string"}, {"Boolean", "boolean"}, {"Integer", "integer"}, {"Number", "number"},
	{"Scalar", "scalar"}, {"Object", "object"}, {"Array", "array"},
}

// messages emits the messages of rules.json the hand-written readers
// (frame/read.go) say: constants, and a function for each template with a
// {limit}.
func (g *gen) messages(f *jen.File) {
	r := g.m.Rules
	defs := []jen.Code{
		jen.Id("msgRequired").Op("=").Lit(r.Message("required", nil)),
		jen.Id("msgAdditionalProperties").Op("=").Lit(r.Message("additionalProperties", nil)),
	}
	for _, t := range typeMessages {
		defs = append(defs, jen.Id("msgType"+t.suffix).Op("=").Lit(r.Message("type", map[string]string{"type": r.TypeNames[t.kind]})))
	}
	// The chat envelope's marker, which ParseEnvelope reads (its schema's
	// const, EnvelopeVersion).
	defs = append(defs, jen.Id("msgEnvelopeMarker").Op("=").Lit(r.Message("const", map[string]string{"value": strconv.Itoa(r.EnvelopeVersion)})))
	f.Comment("Messages of violations (rules.json messages), the same words as the JS validators'.")
	f.Const().Defs(defs...)
	f.Comment("msgMinLength is the message of a string (or key) shorter than n code points.")
	f.Func().Id("msgMinLength").Params(jen.Id("n").Int()).String().Block(
		jen.If(jen.Id("n").Op("==").Lit(1)).Block(jen.Return(jen.Lit(r.Message("minLength1", nil)))),
		jen.Return(limitMessage(r.Messages["minLength"], jen.Id("n"))),
	)
	f.Comment("msgMaxLength is the message of a string (or key) longer than n code points.")
	f.Func().Id("msgMaxLength").Params(jen.Id("n").Int()).String().Block(
		jen.Return(limitMessage(r.Messages["maxLength"], jen.Id("n"))),
	)
}

// limitMessage is the Go expression of a template with n in place of its
// {limit}.
func limitMessage(tmpl string, n jen.Code) jen.Code {
	parts := strings.Split(tmpl, "{limit}")
	out := jen.Lit(parts[0])
	for _, p := range parts[1:] {
		out = out.Op("+").Qual("strconv", "Itoa").Call(n)
		if p != "" {
			out = out.Op("+").Lit(p)
		}
	}
	return out
}

// patternVars declares the regexps of the string fields with a pattern.
func (g *gen) patternVars(f *jen.File) {
	if len(g.patternDecls) == 0 {
		return
	}
	f.Comment("Patterns: the regular expression of every string field with one, from the")
	f.Comment("schemas (a subset Go and JavaScript read alike), named <Struct><Field>Pattern.")
	f.Var().Defs(g.patternDecls...)
}

// fieldLimits emits one constant per string field with a maxLength, named
// <Struct><Field>MaxLength (OpenURLResultReasonMaxLength), so code that cuts
// or checks a field's text names the schema's bound instead of restating it.
func (g *gen) fieldLimits(f *jen.File) {
	var defs []jen.Code
	seen := map[string]string{}
	add := func(structName string, o *model.Object) {
		for _, fl := range o.Fields {
			if fl.Type.Kind != model.String || fl.Type.MaxLength == nil {
				continue
			}
			name := FieldLimitName(structName, fl.Name)
			if prev, ok := seen[name]; ok {
				if prev != fmt.Sprint(*fl.Type.MaxLength) {
					panic(fmt.Sprintf("golang: field limit %s has two values", name))
				}
				continue
			}
			seen[name] = fmt.Sprint(*fl.Type.MaxLength)
			defs = append(defs, jen.Comment(fmt.Sprintf("%s is the maxLength of %s.%s in code points.", name, structName, fl.Name)),
				jen.Id(name).Op("=").Lit(*fl.Type.MaxLength))
		}
	}
	for _, fr := range g.m.Frames {
		add(fr.Title, fr.Body)
	}
	for _, name := range g.order {
		add(name, g.structs[name])
	}
	if env := g.m.Envelope; env != nil {
		add("Envelope", env)
	}
	if len(defs) == 0 {
		return
	}
	f.Comment("Field limits: the maxLength of every string field, in code points, from the")
	f.Comment("schemas, named <Struct><Field>MaxLength.")
	f.Const().Defs(defs...)
}

// FieldLimitName is the name of a string field's maxLength constant:
// <Struct><Field>MaxLength with the field's Go name.
func FieldLimitName(structName, field string) string {
	return structName + goName(field) + "MaxLength"
}

// eventFields emits EventSpec values describing each known event's data.
func (g *gen) eventFields(f *jen.File) {
	var specs []jen.Code
	for _, e := range g.m.Rules.Events {
		var fields []jen.Code
		for _, d := range e.Data {
			dict := jen.Dict{jen.Id("Name"): jen.Lit(d.Name), jen.Id("Type"): jen.Lit(d.Type)}
			if d.MinLength != nil {
				dict[jen.Id("MinLength")] = jen.Lit(*d.MinLength)
			}
			if d.MaxLength != nil {
				dict[jen.Id("MaxLength")] = jen.Lit(*d.MaxLength)
			}
			if d.Minimum != nil {
				dict[jen.Id("Minimum")] = jen.Id("int64p").Call(jen.Lit(*d.Minimum))
			}
			if d.Maximum != nil {
				dict[jen.Id("Maximum")] = jen.Id("int64p").Call(jen.Lit(*d.Maximum))
			}
			if d.Enum != nil {
				dict[jen.Id("Enum")] = jen.Index().String().Values(lits(d.Enum)...)
			}
			fields = append(fields, jen.Values(dict))
		}
		specs = append(specs, jen.Values(jen.Dict{
			jen.Id("Name"):      jen.Id(eventConst(e.Name)),
			jen.Id("Direction"): jen.Lit(e.Direction),
			jen.Id("Data"):      jen.Index().Id("EventField").Values(fields...),
		}))
	}
	f.Comment("EventSpecs describes every known event's data.")
	f.Var().Id("EventSpecs").Op("=").Index().Id("EventSpec").Values(specs...)
}

// enums emits a constant per value of every string enum and const field:
// <Field><Value>, e.g. BodyEncodingUtf8 = "utf8".
func (g *gen) enums(f *jen.File) {
	seen := map[string]string{}
	var names []string
	var walkO func(o *model.Object)
	walkO = func(o *model.Object) {
		for _, fl := range o.Fields {
			vals := fl.Type.Enum
			if fl.Type.Const != nil {
				vals = []string{*fl.Type.Const}
			}
			for _, v := range vals {
				name := goName(fl.Name) + goName(v)
				if old, ok := seen[name]; ok && old != v {
					panic(fmt.Sprintf("golang: enum constant %s names both %q and %q", name, old, v))
				} else if !ok {
					seen[name] = v
					names = append(names, name)
				}
			}
			if fl.Type.Kind == model.Struct {
				walkO(fl.Type.Object)
			}
		}
	}
	for _, fr := range g.m.Frames {
		walkO(fr.Body)
	}
	walkO(g.m.Error)
	sort.Strings(names)
	var defs []jen.Code
	for _, n := range names {
		defs = append(defs, jen.Id(n).Op("=").Lit(seen[n]))
	}
	f.Comment("Values of the frames' enum and const fields.")
	f.Const().Defs(defs...)
}
