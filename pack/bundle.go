package pack

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/internal/jsstring"
)

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

const (
	nsInline = "snug-inline" // a <script> or <style> body of the page
	nsFS     = "snug-fs"     // a file inside Options.FS
	outDir   = "/snug-out"   // virtual: nothing is written
)

// loaderFor returns the esbuild loader that reads the file p: by its
// extension (a switch, not a map built in every process's start), or
// data-URL for an asset.
func loaderFor(p string) (api.Loader, bool) {
	switch strings.ToLower(path.Ext(p)) {
	case ".js", ".mjs", ".cjs":
		return api.LoaderJS, true
	case ".jsx":
		return api.LoaderJSX, true
	case ".ts", ".mts", ".cts":
		return api.LoaderTS, true
	case ".tsx":
		return api.LoaderTSX, true
	case ".css":
		return api.LoaderCSS, true
	case ".json":
		return api.LoaderJSON, true
	case ".txt":
		return api.LoaderText, true
	}
	if isAsset(p) {
		return api.LoaderDataURL, true
	}
	return api.LoaderNone, false
}

// esbuild options shared by every call: minified, modern, deterministic.
const target = api.ES2022

// Every esbuild call of a build (the bundle, the classic scripts, the
// sandbox checks, the check after escaping) uses the same target and
// syntax/identifier minification: esbuild parses its own runtime helpers
// once per distinct (target, MinifySyntax, MinifyIdentifiers) in a process
// and keeps them, so one set of options means one parse per build instead of
// three (bench/all measures the build against the bare esbuild CLI).
const (
	minifySyntax      = true
	minifyIdentifiers = true
)

// bundle runs esbuild: one build for the module scripts (as one ES module)
// and every stylesheet, one transform per classic script, and the sandbox
// checks on the app's own code, all in parallel.
func (b *builder) bundle(ctx context.Context) {
	var wg sync.WaitGroup
	if len(b.modules) > 0 || len(b.styles) > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); b.buildModulesAndStyles() }()
	}
	for _, u := range b.classic {
		if u.offset == -2 {
			continue // an import map, kept as written
		}
		wg.Add(1)
		go func(u *scriptUnit) { defer wg.Done(); b.transformClassic(u) }(u)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	b.lint()
}

func (b *builder) transformClassic(u *scriptUnit) {
	r := api.Transform(string(u.code), api.TransformOptions{
		Loader:            api.LoaderJS,
		Sourcefile:        u.key,
		MinifyWhitespace:  true,
		MinifyIdentifiers: minifyIdentifiers,
		MinifySyntax:      minifySyntax,
		Target:            target,
		Platform:          api.PlatformBrowser,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		LogLevel:          api.LogLevelSilent,
	})
	for _, m := range r.Errors {
		b.esbuildDiag(m, SeverityError, func(string) (string, []byte, int, bool) { return u.locate() })
	}
	u.slot.content = string(r.Code)
}

// locate names where a classic script's text lives.
func (u *scriptUnit) locate() (file string, src []byte, offset int, inPage bool) {
	if u.file == "" {
		return "", nil, u.offset, true
	}
	return u.file, u.code, 0, false
}

// pluginMsgs carries the diagnostics the plugin raised, by the unique text
// it handed esbuild, so they come back with esbuild's location attached.
type pluginMsgs struct {
	mu sync.Mutex
	m  map[string]Diagnostic
}

func (p *pluginMsgs) put(d Diagnostic) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.m == nil {
		p.m = map[string]Diagnostic{}
	}
	key := fmt.Sprintf("snug#%d: %s", len(p.m), d.Message)
	p.m[key] = d
	return key
}

func (p *pluginMsgs) get(text string) (Diagnostic, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	d, ok := p.m[text]
	return d, ok
}

// importGraph is the app's import graph as esbuild resolves it through the
// plugin: for each module (named as esbuild's metafile names it), the
// modules its imports resolved to, in the order of its imports, with the
// specifier as written. The cycle check reads it instead of esbuild's
// metafile, whose making and decoding cost 0.6M instructions per build of
// bench/build-app.
type importGraph struct {
	mu      sync.Mutex
	imports map[string][]graphEdge
}

type graphEdge struct{ to, original string }

// add records that a's import resolved to the module named to. esbuild
// resolves the imports of one module in order, in one goroutine, asking
// once for each distinct specifier and kind.
func (g *importGraph) add(a api.OnResolveArgs, to string) {
	if a.Importer == "" || a.Kind == api.ResolveEntryPoint {
		return
	}
	from := moduleName(a.Namespace, a.Importer)
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.imports == nil {
		g.imports = map[string][]graphEdge{}
	}
	g.imports[from] = append(g.imports[from], graphEdge{to: to, original: a.Path})
}

// moduleName names a module as esbuild's metafile does: namespace:path,
// and a data: URL (esbuild's own namespace, "dataurl") as <the URL>, cut
// after 64 bytes.
func moduleName(ns, p string) string {
	if ns == "dataurl" {
		if len(p) > 65 {
			p = p[:65]
		}
		p = strings.ReplaceAll(p, "\n", "\\n")
		if len(p) > 64 {
			p = p[:64] + "..."
		}
		return "<" + p + ">"
	}
	return ns + ":" + p
}

// buildModulesAndStyles bundles the page's modules (into one main.js and
// main.css) and each stylesheet with esbuild, through the snug plugin,
// reports esbuild's errors and import cycles, and fills the slots.
func (b *builder) buildModulesAndStyles() {
	in := b.bundleInputs()
	var msgs pluginMsgs
	var graph importGraph
	r := api.Build(api.BuildOptions{
		EntryPointsAdvanced: in.entries,
		Bundle:              true,
		Write:               false,
		Outdir:              outDir,
		AbsWorkingDir:       outDir,
		Format:              api.FormatESModule,
		Platform:            api.PlatformBrowser,
		Target:              target,
		MinifyWhitespace:    true,
		MinifyIdentifiers:   minifyIdentifiers,
		MinifySyntax:        minifySyntax,
		Charset:             api.CharsetUTF8,
		LegalComments:       api.LegalCommentsNone,
		LogLevel:            api.LogLevelSilent,
		Plugins:             []api.Plugin{b.plugin(in, &msgs, &graph)},
	})
	for _, m := range r.Errors {
		if d, ok := msgs.get(m.Text); ok {
			b.esbuildDiagAs(m, d, in.locate)
			continue
		}
		b.esbuildDiag(m, SeverityError, in.locate)
	}
	if len(r.Errors) > 0 {
		return
	}
	b.checkCycles(&graph)
	b.takeOutputs(r.OutputFiles)
}

// bundleInput is what esbuild is given: its entry points and the inline
// modules and styles (by key), served from the inline namespace.
type bundleInput struct {
	entries []api.EntryPoint
	code    map[string]string     // key -> content
	offset  map[string]int        // key -> offset in the page
	loader  map[string]api.Loader // key -> how esbuild reads it
}

// inline adds an inline module or style, and returns its specifier.
func (in *bundleInput) inline(key, code string, offset int, loader api.Loader) string {
	in.code[key] = code
	in.offset[key] = offset
	in.loader[key] = loader
	return nsInline + ":" + key
}

// locate maps a file esbuild names to the app's file, or for an inline
// module to its offset in the page.
func (in *bundleInput) locate(file string) (string, []byte, int, bool) {
	if strings.HasPrefix(file, nsInline+":") {
		return "", nil, in.offset[strings.TrimPrefix(file, nsInline+":")], true
	}
	return strings.TrimPrefix(file, nsFS+":"), nil, 0, false
}

// bundleInputs is the entry points: a main module importing every module
// of the page in order, and each stylesheet.
func (b *builder) bundleInputs() *bundleInput {
	in := &bundleInput{code: map[string]string{}, offset: map[string]int{}, loader: map[string]api.Loader{}}
	if len(b.modules) > 0 {
		var main strings.Builder
		for _, m := range b.modules {
			s := nsFS + ":" + m.file
			if m.file == "" {
				s = in.inline(m.key, string(m.code), m.offset, api.LoaderJS)
			}
			main.WriteString("import " + jsstring.Quote(s) + ";\n")
		}
		in.entries = append(in.entries, api.EntryPoint{InputPath: in.inline("main", main.String(), -1, api.LoaderJS), OutputPath: "main"})
	}
	for _, c := range b.styles {
		s := nsFS + ":" + c.file
		if c.file == "" {
			s = in.inline(c.key, string(c.code), c.offset, api.LoaderCSS)
		}
		in.entries = append(in.entries, api.EntryPoint{InputPath: s, OutputPath: c.key})
	}
	return in
}

// plugin is the snug plugin: it resolves every import inside the app's
// folder (or to an import map's or an allowed remote URL), loads the
// inline and file namespaces, records the import graph, and puts its
// diagnostics in msgs.
func (b *builder) plugin(in *bundleInput, msgs *pluginMsgs, graph *importGraph) api.Plugin {
	return api.Plugin{Name: "snug", Setup: func(pb api.PluginBuild) {
		pb.OnResolve(api.OnResolveOptions{Filter: `^` + nsInline + `:`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			r := api.OnResolveResult{Path: strings.TrimPrefix(a.Path, nsInline+":"), Namespace: nsInline}
			graph.add(a, moduleName(r.Namespace, r.Path))
			return r, nil
		})
		pb.OnResolve(api.OnResolveOptions{Filter: `^` + nsFS + `:`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			r := api.OnResolveResult{Path: strings.TrimPrefix(a.Path, nsFS+":"), Namespace: nsFS}
			graph.add(a, moduleName(r.Namespace, r.Path))
			return r, nil
		})
		pb.OnResolve(api.OnResolveOptions{Filter: `^(https?:)?//`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			if msg, why, fix, ok := remoteCheck(a.Path, "import"); !ok {
				return api.OnResolveResult{Errors: []api.Message{{Text: msgs.put(Diagnostic{Code: "cdn.not-allowed", Message: msg, Why: why, Fix: fix})}}}, nil
			}
			return api.OnResolveResult{Path: a.Path, External: true}, nil
		})
		pb.OnResolve(api.OnResolveOptions{Filter: `.*`}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
			return b.resolve(a, msgs, graph)
		})
		pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: nsInline}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			c := in.code[a.Path]
			return api.OnLoadResult{Contents: &c, Loader: in.loader[a.Path], PluginData: b.src.root}, nil
		})
		pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: nsFS}, func(a api.OnLoadArgs) (api.OnLoadResult, error) { return b.load(a.Path, msgs) })
		// Nothing resolves to esbuild's file namespace; should anything
		// reach it, it is refused rather than read from disk.
		pb.OnLoad(api.OnLoadOptions{Filter: `.*`, Namespace: "file"}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
			return api.OnLoadResult{Errors: []api.Message{{Text: msgs.put(Diagnostic{Code: "ref.outside",
				Message: fmt.Sprintf("%s is not a file of the app", quote(a.Path)), Why: whyOutside, Fix: fixOutside})}}}, nil
		})
	}}
}

// resolve resolves a bare or relative import: a data: URL is esbuild's
// own, an import map's name stays external, and every other path resolves
// inside the app's folder.
func (b *builder) resolve(a api.OnResolveArgs, msgs *pluginMsgs, graph *importGraph) (api.OnResolveResult, error) {
	if strings.HasPrefix(a.Path, "data:") {
		graph.add(a, moduleName("dataurl", a.Path))
		return api.OnResolveResult{}, nil // esbuild reads a data: URL itself, no file
	}
	for _, s := range b.importMap {
		if a.Path == s || (strings.HasSuffix(s, "/") && strings.HasPrefix(a.Path, s)) {
			return api.OnResolveResult{Path: a.Path, External: true}, nil
		}
	}
	// Every other path resolves inside the app's folder: esbuild's own
	// resolver (which reads package.json and tsconfig.json up the tree and
	// follows symlinks) never runs.
	r, err := b.resolveFS(a, msgs)
	if err == nil && len(r.Errors) == 0 && !r.External && r.Path != "" {
		graph.add(a, moduleName(r.Namespace, r.Path))
	}
	return r, err
}

// takeOutputs puts esbuild's outputs in their slots: main.js and main.css
// for the modules, <key>.css for each stylesheet. An empty output is
// skipped.
func (b *builder) takeOutputs(files []api.OutputFile) {
	for _, f := range files {
		name := strings.TrimPrefix(filepath.ToSlash(f.Path), outDir+"/")
		switch {
		case name == "main.js":
			b.modSlot.content = string(f.Contents)
		case name == "main.css":
			b.modCSS.content = string(f.Contents)
			b.modCSS.skip = len(strings.TrimSpace(b.modCSS.content)) == 0
		case strings.HasSuffix(name, ".css"):
			key := strings.TrimSuffix(name, ".css")
			for _, c := range b.styles {
				if c.key == key {
					c.slot.content = string(f.Contents)
				}
			}
		}
	}
	if b.modSlot != nil {
		b.modSlot.skip = strings.TrimSpace(b.modSlot.content) == ""
	}
}

// load reads one file for esbuild, confined to the app's folder, with the
// asset size limit for a data URL and the source limit for code; it checks
// code against UTF-8 and records what the build read.
func (b *builder) load(p string, msgs *pluginMsgs) (api.OnLoadResult, error) {
	fail := func(d Diagnostic) (api.OnLoadResult, error) {
		return api.OnLoadResult{Errors: []api.Message{{Text: msgs.put(d)}}}, nil
	}
	loader, ok := loaderFor(p)
	if !ok {
		return fail(Diagnostic{Code: "ref.unsupported", Message: fmt.Sprintf("cannot inline %s: unknown file type %q", b.src.rel(p), path.Ext(p)),
			Why: "the build inlines scripts, styles, JSON, text, images, fonts and media", Fix: "import a supported file, or load the data through snug.db"})
	}
	limit := int64(maxSourceBytes)
	if loader == api.LoaderDataURL {
		limit = b.maxAsset
	}
	data, err := b.src.read(p, b.src.rel(p), limit)
	if err != nil {
		d := b.refDiag(b.src.rel(p), "file", err, limit)
		if d.Code == "asset.too-large" {
			// The historic wording names the file without quotes.
			d.Message = strings.Replace(d.Message, quote(b.src.rel(p)), b.src.rel(p), 1)
		}
		return fail(d)
	}
	b.addInput(p)
	res := api.OnLoadResult{Loader: loader, PluginData: path.Dir(p)}
	if loader != api.LoaderDataURL {
		if !b.checkUTF8(p, data, "code is inlined into a UTF-8 page") {
			return api.OnLoadResult{Errors: []api.Message{{Text: msgs.put(Diagnostic{Code: "utf8.invalid", Message: "the file is not valid UTF-8"})}}}, nil
		}
		if !strings.Contains(p, "node_modules/") && loader != api.LoaderCSS && loader != api.LoaderJSON && loader != api.LoaderText {
			b.mu.Lock()
			b.sources[p] = data
			b.mu.Unlock()
		}
	}
	s := string(data)
	res.Contents = &s
	return res, nil
}

// esbuildDiag converts an esbuild message. locate maps the message's file
// to the page (inPage, with the offset of the inline source) or to a file.
func (b *builder) esbuildDiag(m api.Message, sev Severity, locate func(string) (string, []byte, int, bool)) {
	b.esbuildDiagAs(m, Diagnostic{Severity: sev, Code: "bundle", Message: m.Text}, locate)
}

func (b *builder) esbuildDiagAs(m api.Message, d Diagnostic, locate func(string) (string, []byte, int, bool)) {
	if d.Severity == "" {
		d.Severity = SeverityError
	}
	if d.Code == "bundle" && len(m.Notes) > 0 && m.Notes[0].Location == nil {
		d.Fix = m.Notes[0].Text
	}
	if d.Code == "bundle" && strings.HasPrefix(m.Text, "Could not resolve") {
		d.Code = "ref.missing"
		d.Why = "every local file and package the app imports is bundled at build time"
		if d.Fix == "" {
			d.Fix = "check the path (relative to the importing file) or install the package into node_modules"
		}
	}
	if m.Location == nil {
		d.File = b.pageName
		b.add(d)
		return
	}
	file := m.Location.File
	if m.Location.Namespace != "" && m.Location.Namespace != "file" {
		file = m.Location.Namespace + ":" + strings.TrimPrefix(file, m.Location.Namespace+":")
	}
	p, _, offset, inPage := locate(file)
	if inPage {
		if offset < 0 {
			d.File = b.pageName
			b.add(d)
			return
		}
		d.File = b.pageName
		base := offset
		// esbuild's line/column are within the inline source.
		sl, sc, _ := position(b.html, b.lines, base)
		line := sl + m.Location.Line - 1
		col := m.Location.Column + 1
		if m.Location.Line == 1 {
			col = sc + m.Location.Column
		}
		d.Line, d.Column = line, col
		_, _, d.LineText = position(b.html, b.lines, b.lines[min(line-1, len(b.lines)-1)])
		b.add(d)
		return
	}
	d.File = b.src.rel(p)
	d.Line, d.Column, d.LineText = m.Location.Line, m.Location.Column+1, m.Location.LineText
	b.add(d)
}

// checkCycles reports an import cycle among the app's own modules: modules
// in a cycle see each other half-initialized, a bug esbuild accepts.
func (b *builder) checkCycles(g *importGraph) {
	found := g.firstCycle()
	if found == nil {
		return
	}
	pretty := func(n string) string {
		if strings.HasPrefix(n, nsInline+":") {
			return b.pageName
		}
		return b.src.rel(strings.TrimPrefix(n, nsFS+":"))
	}
	var chain []string
	for _, n := range found {
		chain = append(chain, pretty(n))
	}
	d := Diagnostic{Severity: SeverityError, Code: "import.cycle", Message: "import cycle: " + strings.Join(chain, " → "),
		Why: "modules in a cycle run before the ones they import are initialized",
		Fix: "move what both modules need into a third module that both import"}
	// Point at the import that closes the cycle.
	from, to := found[len(found)-2], found[len(found)-1]
	var spec string
	for _, imp := range g.imports[from] {
		if imp.to == to {
			spec = imp.original
		}
	}
	d.File = pretty(from)
	if !strings.HasPrefix(from, nsInline+":") {
		p := strings.TrimPrefix(from, nsFS+":")
		b.mu.Lock()
		src := b.sources[p]
		b.mu.Unlock()
		if i := findImport(src, spec); i >= 0 {
			d.Line, d.Column, d.LineText = position(src, lineStarts(src), i)
		}
	}
	b.add(d)
}

// firstCycle returns the first cycle among the app's own modules (not
// under node_modules/, not the generated main), visiting them in name
// order, as the modules around it ending with the first again; nil when
// there is none.
func (g *importGraph) firstCycle() []string {
	own := func(p string) bool {
		return !strings.Contains(p, "node_modules/") && !strings.HasPrefix(p, nsInline+":main")
	}
	// Every module that imports is a name; one that only is imported
	// has no way back to a cycle.
	var names []string
	for n := range g.imports {
		names = append(names, n)
	}
	sort.Strings(names)
	state := map[string]int{} // 0 new, 1 on stack, 2 done
	var stack []string
	var found []string
	var visit func(n string) bool
	visit = func(n string) bool {
		state[n] = 1
		stack = append(stack, n)
		for _, imp := range g.imports[n] {
			if !own(imp.to) {
				continue
			}
			switch state[imp.to] {
			case 1:
				i := len(stack) - 1
				for stack[i] != imp.to {
					i--
				}
				found = append(append([]string(nil), stack[i:]...), imp.to)
				return true
			case 0:
				if visit(imp.to) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[n] = 2
		return false
	}
	for _, n := range names {
		if own(n) && state[n] == 0 && visit(n) {
			break
		}
	}
	return found
}

func findImport(src []byte, spec string) int {
	if spec == "" {
		return -1
	}
	re := regexp.MustCompile(`['"]` + regexp.QuoteMeta(spec) + `['"]`)
	if loc := re.FindIndex(src); loc != nil {
		return loc[0]
	}
	return -1
}
