package golang

import (
	"github.com/dave/jennifer/jen"

	"github.com/snuggen/snuggen/gen/model"
)

// dispatch emits Handlers and Dispatch.
func (g *gen) dispatch(f *jen.File) {
	var methods, cases, funcs []jen.Code
	for _, fr := range g.m.Frames {
		if fr.Direction != model.AppToHost {
			continue
		}
		methods = append(methods, jen.Commentf("%s handles an accepted %s.", fr.Title, fr.Type),
			jen.Id(fr.Title).Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("f").Op("*").Id(fr.Title)))
		cases = append(cases, jen.Case(jen.Op("*").Id(fr.Title)).Block(jen.Id("h").Dot(fr.Title).Call(jen.Id("ctx"), jen.Id("f"))))
		funcs = append(funcs, jen.Commentf("%s calls h.", fr.Title).Line().
			Func().Params(jen.Id("h").Id("HandlerFunc")).Id(fr.Title).
			Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("f").Op("*").Id(fr.Title)).
			Block(jen.Id("h").Call(jen.Id("ctx"), jen.Id("f"))))
	}
	f.Comment("Handlers has one method per app→host frame; Dispatch calls the one that matches.")
	f.Type().Id("Handlers").Interface(methods...)
	f.Comment("HandlerFunc is a Handlers that gives every accepted app→host frame to one")
	f.Comment("function, whatever its type (a recorder, a proxy, a logger).")
	f.Type().Id("HandlerFunc").Func().Params(jen.Id("ctx").Qual("context", "Context"), jen.Id("f").Id("Frame"))
	for _, c := range funcs {
		f.Add(c)
	}
	f.Comment("Dispatch parses raw as a frame from an app. A rejected frame with a recovered")
	f.Comment("requestId is answered through reply (R1) and its *RejectError returned; an")
	f.Comment("ignored frame does nothing; a host→app frame arriving from an app is ignored;")
	f.Comment("an accepted app→host frame goes to its handler.")
	f.Func().Id("Dispatch").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("raw").Index().Byte(), jen.Id("h").Id("Handlers"), jen.Id("reply").Func().Params(jen.Id("Frame")),
	).Error().Block(
		jen.List(jen.Id("fr"), jen.Err()).Op(":=").Id("Parse").Call(jen.Id("raw")),
		jen.Return(jen.Id("Handle").Call(jen.Id("ctx"), jen.Id("fr"), jen.Err(), jen.Id("h"), jen.Id("reply"))),
	)
	f.Comment("Handle is Dispatch after the parse: fr and err are what Parse")
	f.Comment("returned for the frame.")
	f.Func().Id("Handle").Params(
		jen.Id("ctx").Qual("context", "Context"), jen.Id("fr").Id("Frame"), jen.Err().Error(), jen.Id("h").Id("Handlers"), jen.Id("reply").Func().Params(jen.Id("Frame")),
	).Error().Block(
		jen.If(jen.Err().Op("!=").Nil()).Block(
			jen.If(jen.List(jen.Id("re"), jen.Id("ok")).Op(":=").Err().Assert(jen.Op("*").Id("RejectError")), jen.Id("ok").Op("&&").Id("reply").Op("!=").Nil()).Block(
				jen.If(jen.Id("a").Op(":=").Id("re").Dot("Answer").Call(), jen.Id("a").Op("!=").Nil()).Block(jen.Id("reply").Call(jen.Id("a"))),
			),
			jen.Return(jen.Err()),
		),
		jen.Switch(jen.Id("f").Op(":=").Id("fr").Assert(jen.Type())).Block(cases...),
		jen.Return(jen.Nil()),
	)
}
