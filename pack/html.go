package pack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/internal/csscolor"
	"github.com/snuggen/snuggen/internal/linkhint"
)

// part is one piece of the output: literal text, or a slot filled once the
// bundler has run.
type part struct {
	text string
	slot *slot
}

// slot is an element whose content comes from esbuild: a <script> or a
// <style>.
type slot struct {
	open    string // start tag, e.g. `<script type="module">`
	close   string // "</script>" or "</style>"
	content string // filled after bundling
	script  bool
	skip    bool // emit nothing (e.g. a module output that came out empty)
	// raw marks text kept as the page wrote it (an import map): it parsed
	// as one element in the page, so it does the same in the output.
	raw bool
}

// scriptUnit is one classic script (inline or a local src file).
type scriptUnit struct {
	key    string // "s0", ...
	file   string // read path for a src script, "" inline
	code   []byte
	offset int // byte offset of inline content in the page, -1 for a file
	slot   *slot
}

// cssUnit is one stylesheet: an inline <style> or a local <link rel=stylesheet>.
type cssUnit struct {
	key    string // "c0", ...
	file   string
	code   []byte
	offset int
	slot   *slot
}

// moduleUnit is one module script: inline or a local src file.
type moduleUnit struct {
	key    string // "m0", ...
	file   string
	code   []byte
	offset int
}

type metaValue struct {
	value  string
	offset int
}

type builder struct {
	opts     Options
	src      source
	page     string // read path of the page
	pageName string // page name relative to its directory (diagnostics)
	html     []byte
	lines    []int
	maxAsset int64

	mu     sync.Mutex
	diags  []Diagnostic
	inputs map[string]bool
	// sources of local (non node_modules) script files by read path, for
	// the sandbox checks and cycle locations.
	sources map[string][]byte

	parts        []part
	headAt       int // index in parts where the injected head goes; -1 unset
	bodyEnd      int // index in parts of </body>, -1 unset
	tail         []part
	classic      []*scriptUnit
	styles       []*cssUnit
	modules      []*moduleUnit
	modSlot      *slot
	modCSS       *slot
	importMap    []string // bare specifiers an import map sends to a CDN
	meta         map[string]metaValue
	handlers     bool
	title        string
	afterDoctype int
	firstElem    int
	headOffset   int // byte offset of <head>, where missing metadata belongs
	// hintsDropped holds the offsets of the resource-hint <link> tags the
	// scan dropped, true for one to a local file.
	hintsDropped map[int]bool
}

func newBuilder(opts Options) (*builder, error) {
	b := &builder{opts: opts, headAt: -1, bodyEnd: -1, firstElem: -1, inputs: map[string]bool{}, sources: map[string][]byte{}, meta: map[string]metaValue{}, hintsDropped: map[int]bool{}}
	b.maxAsset = opts.MaxAssetBytes
	if b.maxAsset <= 0 {
		b.maxAsset = DefaultMaxAssetBytes
	}
	switch {
	case opts.HTML != nil && opts.FS == nil:
		// A page given alone has no local files: never read the disk
		// around it (hostkit packages untrusted HTML this way).
		b.pageName = filepath.Base(opts.Path)
		b.src = source{fsys: emptyFS{}, root: "."}
		b.page = b.pageName
	case opts.FS != nil:
		p := cleanFS(filepath.ToSlash(opts.Path))
		if !fs.ValidPath(p) {
			return nil, fmt.Errorf("pack: %q is not a valid path inside the FS", opts.Path)
		}
		b.src = source{fsys: opts.FS, root: path.Dir(p)}
		b.page = p
		b.pageName = path.Base(p)
	default:
		src, name, err := openDisk(opts.Path)
		if err != nil {
			return nil, err
		}
		b.src = src
		b.page = name
		b.pageName = name
	}
	if opts.HTML != nil {
		b.html = opts.HTML
	} else {
		data, err := b.src.read(b.page, b.pageName, maxSourceBytes)
		if err != nil {
			b.src.close()
			return nil, fmt.Errorf("pack: reading the page %s: %w", opts.Path, err)
		}
		b.html = data
		b.inputs[b.page] = true
	}
	b.lines = lineStarts(b.html)
	return b, nil
}

func lineStarts(src []byte) []int {
	ls := []int{0}
	for i, c := range src {
		if c == '\n' {
			ls = append(ls, i+1)
		}
	}
	return ls
}

// position turns a byte offset in src (with line starts ls) into a 1-based
// line, a 1-based byte column and the line's text.
func position(src []byte, ls []int, off int) (line, col int, text string) {
	i := sort.Search(len(ls), func(i int) bool { return ls[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	end := len(src)
	if i+1 < len(ls) {
		end = ls[i+1] - 1
	}
	t := string(src[ls[i]:end])
	return i + 1, off - ls[i] + 1, strings.TrimRight(t, "\r")
}

// diag records a diagnostic at a byte offset in the page.
func (b *builder) diagAt(off int, sev Severity, code, msg, why, fix string) {
	d := Diagnostic{Severity: sev, Code: code, File: b.pageName, Message: msg, Why: why, Fix: fix}
	if off >= 0 {
		d.Line, d.Column, d.LineText = position(b.html, b.lines, off)
	}
	b.add(d)
}

func (b *builder) add(d Diagnostic) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.diags {
		if e.Code == d.Code && e.File == d.File && e.Line == d.Line && e.Column == d.Column && e.Message == d.Message {
			return
		}
	}
	b.diags = append(b.diags, d)
}

func (b *builder) hasErrors() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, d := range b.diags {
		if d.Severity == SeverityError {
			return true
		}
	}
	return false
}

func (b *builder) addInput(p string) {
	b.mu.Lock()
	b.inputs[p] = true
	b.mu.Unlock()
}

func (b *builder) run(ctx context.Context) *Result {
	res := &Result{}
	if off, ok := invalidUTF8(b.html); !ok {
		b.diagAt(off, SeverityError, "utf8.invalid", "the page is not valid UTF-8", "a Snug app is one UTF-8 HTML file",
			"save the file as UTF-8")
	} else {
		b.scan()
		b.checkHints()
		b.checkMeta()
		b.bundle(ctx)
	}
	if !b.hasErrors() {
		out, err := b.assemble()
		if err != nil {
			b.add(Diagnostic{Severity: SeverityError, Code: "internal", File: b.pageName, Message: err.Error()})
		} else {
			res.HTML = out
		}
	}
	res.Diagnostics = b.diags
	for p := range b.inputs {
		res.Inputs = append(res.Inputs, b.src.input(p))
	}
	sort.Strings(res.Inputs)
	res.Manifest = b.manifest()
	return res
}

// invalidUTF8 returns the offset of the first invalid byte. utf8.Valid
// answers for a valid text (most of it eight ASCII bytes at a time); only
// an invalid one is decoded rune by rune to find the place.
func invalidUTF8(p []byte) (int, bool) {
	if utf8.Valid(p) {
		return 0, true
	}
	for i := 0; i < len(p); {
		r, n := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && n <= 1 {
			return i, false
		}
		i += n
	}
	return 0, true
}

// attrOffset finds attribute key in a raw start tag; it returns the offset
// of the key within raw, or 0.
func attrOffset(raw []byte, key string) int {
	low := bytes.ToLower(raw)
	k := []byte(key)
	for i := 1; i+len(k) <= len(low); i++ {
		j := bytes.Index(low[i:], k)
		if j < 0 {
			return 0
		}
		i += j
		before := low[i-1]
		after := byte('>')
		if i+len(k) < len(low) {
			after = low[i+len(k)]
		}
		if (before == ' ' || before == '\t' || before == '\n' || before == '\r' || before == '/' || before == '\f') &&
			(after == '=' || after == ' ' || after == '>' || after == '/' || after == '\t' || after == '\n' || after == '\r') {
			return i
		}
	}
	return 0
}

func getAttr(t html.Token, key string) (string, bool) {
	for _, a := range t.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func dropAttrs(t *html.Token, keys ...string) {
	out := t.Attr[:0]
	for _, a := range t.Attr {
		keep := true
		for _, k := range keys {
			if a.Key == k {
				keep = false
			}
		}
		if keep {
			out = append(out, a)
		}
	}
	t.Attr = out
}

// startTag serializes a start tag with its attributes escaped.
func startTag(t html.Token) string {
	var b strings.Builder
	b.WriteString("<")
	b.WriteString(t.Data)
	for _, a := range t.Attr {
		b.WriteString(" ")
		if a.Namespace != "" {
			b.WriteString(a.Namespace + ":")
		}
		b.WriteString(a.Key)
		b.WriteString(`="`)
		b.WriteString(escapeAttr(a.Val))
		b.WriteString(`"`)
	}
	if t.Type == html.SelfClosingTagToken {
		b.WriteString("/")
	}
	b.WriteString(">")
	return b.String()
}

var attrEscaper = strings.NewReplacer("&", "&amp;", `"`, "&quot;")

func escapeAttr(s string) string { return attrEscaper.Replace(s) }

func relTokens(v string) map[string]bool {
	m := map[string]bool{}
	for _, f := range strings.Fields(strings.ToLower(v)) {
		m[f] = true
	}
	return m
}

// scan walks the page's tokens once: it copies what stays, rewrites what
// changes, collects scripts and styles for the bundler, and checks the
// sandbox rules that live in markup.
func (b *builder) scan() {
	s := &htmlScan{z: html.NewTokenizer(bytes.NewReader(b.html))}
	for {
		tt := s.z.Next()
		if tt == html.ErrorToken {
			return
		}
		raw := string(s.z.Raw())
		start := s.off
		s.off += len(raw)
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			b.nonElement(s, tt, raw)
			continue
		}
		if !b.element(s, tt, raw, start) {
			return
		}
	}
}

// htmlScan is scan's place in the page: the tokenizer, the offset of the
// next token, the scripts, styles and modules numbered so far, and the
// depth of <svg>/<math>.
type htmlScan struct {
	z                     *html.Tokenizer
	off                   int
	scriptN, styleN, modN int
	foreign               int
}

// emit appends text kept as written.
func (b *builder) emit(s string) { b.parts = append(b.parts, part{text: s}) }

// nonElement copies a token that is not a start tag, noting where the
// doctype, </head> and </body> or </html> are and leaving <svg>/<math>.
func (b *builder) nonElement(s *htmlScan, tt html.TokenType, raw string) {
	if tt == html.DoctypeToken {
		b.emit(raw)
		b.afterDoctype = len(b.parts)
		return
	}
	if tt == html.EndTagToken {
		name, _ := s.z.TagName()
		if (string(name) == "svg" || string(name) == "math") && s.foreign > 0 {
			s.foreign--
		}
		switch string(name) {
		case "head":
			if b.headAt < 0 {
				b.headAt = len(b.parts)
			}
		case "body", "html":
			if b.bodyEnd < 0 {
				b.bodyEnd = len(b.parts)
			}
		}
	}
	b.emit(raw)
}

// element handles a start tag at start, a step per element kind, and
// reports whether the scan goes on (not after an unclosed script or
// style).
func (b *builder) element(s *htmlScan, tt html.TokenType, raw string, start int) bool {
	t := s.z.Token()
	if b.firstElem < 0 && t.Data != "html" && t.Data != "head" {
		// The injected head must precede it, even in a page that
		// puts content before <html> or <head>.
		b.firstElem = len(b.parts)
	}
	attrAt := func(key string) int { return start + attrOffset([]byte(raw), key) }
	b.checkHandlers(t, raw, start)
	switch t.Data {
	case "html":
		b.emit(raw)
		if b.headAt < 0 {
			b.headAt = len(b.parts)
		}
		return true
	case "head":
		b.emit(raw)
		b.headAt = len(b.parts)
		b.headOffset = start
		return true
	case "title":
		b.titleElement(s, raw)
		return true
	case "svg", "math":
		if tt == html.StartTagToken {
			s.foreign++
		}
	case "script":
		return b.scriptElement(s, t, raw, start, attrAt)
	case "style":
		return b.styleElement(s, raw, start)
	case "link":
		b.link(t, raw, start, &s.styleN, attrAt)
		return true
	case "meta":
		if b.metaTag(t, start, attrAt) {
			b.emit(raw)
		}
		return true
	case "a", "area":
		b.anchor(t, start, attrAt)
	case "form":
		b.formAction(t, attrAt)
	case "base":
		b.diagAt(start, SeverityError, "html.base", "<base> is not allowed", "the sandbox's CSP has base-uri 'none'", "remove it and write each reference relative to the page")
		return true
	}
	if nt, changed := b.assets(t, raw, start, attrAt); changed {
		b.emit(startTag(nt))
	} else {
		b.emit(raw)
	}
	return true
}

// titleElement copies <title> and its text, keeping the text as the
// page's title.
func (b *builder) titleElement(s *htmlScan, raw string) {
	b.emit(raw)
	if s.z.Next() == html.TextToken {
		text := string(s.z.Raw())
		s.off += len(text)
		b.title = strings.TrimSpace(html.UnescapeString(text))
		b.emit(text)
	} else {
		end := string(s.z.Raw())
		s.off += len(end)
		b.emit(end)
	}
}

// scriptElement reads a <script>'s content and hands it to script; it
// refuses one never closed (and reports false) or inside <svg>/<math>.
func (b *builder) scriptElement(s *htmlScan, t html.Token, raw string, start int, attrAt func(string) int) bool {
	content, contentAt, end, ok := b.rawContent(s.z, &s.off)
	if !ok {
		b.diagAt(start, SeverityError, "html.unclosed", "<script> is never closed", "the rest of the page would be script", "add </script>")
		return false
	}
	if s.foreign > 0 {
		// Inside <svg> a script's text is markup (entities
		// decoded, "<" opens a tag), so bundled code cannot be
		// inlined there safely.
		b.diagAt(start, SeverityError, "html.svg-script", "<script> inside <svg> or <math>",
			"there its text is parsed as markup, so inlined code could break out of it",
			"move the script after the </svg> and reach the SVG with document.querySelector")
		return true
	}
	b.script(t, raw, start, content, contentAt, end, &s.scriptN, &s.modN, attrAt)
	return true
}

// styleElement makes a <style> a stylesheet slot for the bundler; it
// refuses one never closed (and reports false).
func (b *builder) styleElement(s *htmlScan, raw string, start int) bool {
	content, contentAt, _, ok := b.rawContent(s.z, &s.off)
	if !ok {
		b.diagAt(start, SeverityError, "html.unclosed", "<style> is never closed", "the rest of the page would be CSS", "add </style>")
		return false
	}
	u := &cssUnit{key: fmt.Sprintf("c%d", s.styleN), code: []byte(content), offset: contentAt}
	s.styleN++
	u.slot = &slot{open: raw, close: "</style>"}
	b.styles = append(b.styles, u)
	b.parts = append(b.parts, part{slot: u.slot})
	return true
}

// formAction warns of a <form action>, which the sandbox never submits.
func (b *builder) formAction(t html.Token, attrAt func(string) int) {
	if v, ok := getAttr(t, "action"); ok {
		b.diagAt(attrAt("action"), SeverityWarning, "html.form-action",
			fmt.Sprintf("<form action=%s> cannot submit", quote(v)),
			"the sandbox has no allow-forms and its CSP has form-action 'none'",
			"handle the submit event (e.preventDefault()) and send the data with snug.net.fetch or keep it with snug.db")
	}
}

// checkHints refuses every resource hint (frame.BlockedLinkRels, and
// <meta http-equiv=Link>) that the browser's HTML parser would build from
// the page, in any namespace, inside <template>, <noscript> or an
// <iframe srcdoc> too: Chromium opens a connection for a hint whatever the
// CSP says, so a host name the app chose would leave the machine. The
// token scan drops the hints it sees; one it took for text (a <link> after
// a breakout tag inside <svg><style>, say) would reach the output as
// written, so it is an error wherever it points.
func (b *builder) checkHints() {
	for _, h := range linkhint.Find(b.html) {
		if local, seen := b.hintsDropped[h.Start]; seen && local && !h.InSrcdoc {
			continue
		}
		var msg string
		switch h.Tag {
		case "meta":
			msg = fmt.Sprintf("<meta http-equiv=Link content=%s>", quote(h.Href))
		default:
			msg = fmt.Sprintf("<link rel=%s> to %s", h.Rel, quote(h.Href))
		}
		if h.InSrcdoc {
			msg += " inside <iframe srcdoc>"
		} else if _, seen := b.hintsDropped[h.Start]; !seen {
			msg += ", which the HTML parser builds from inside other markup (foreign content, <template> or <noscript>)"
		}
		b.diagAt(h.Start, SeverityError, "html.resource-hint", msg,
			"Chromium opens a connection and resolves the name for a hint whatever the CSP says, so the hint leaks that the app ran",
			"remove the link; the build inlines what the app needs")
	}
}

// rawContent reads the text of a raw-text element after its start tag.
func (b *builder) rawContent(z *html.Tokenizer, off *int) (content string, contentAt int, end string, ok bool) {
	contentAt = *off
	tt := z.Next()
	if tt == html.TextToken {
		content = string(z.Raw())
		*off += len(content)
		tt = z.Next()
	}
	if tt != html.EndTagToken {
		return "", 0, "", false
	}
	end = string(z.Raw())
	*off += len(end)
	return content, contentAt, end, true
}

func (b *builder) checkHandlers(t html.Token, raw string, start int) {
	for _, a := range t.Attr {
		if len(a.Key) > 2 && strings.HasPrefix(a.Key, "on") {
			b.handlers = true
			b.diagAt(start+attrOffset([]byte(raw), a.Key), SeverityWarning, "html.inline-handler",
				fmt.Sprintf("inline event handler %s on <%s>", a.Key, t.Data),
				"inline handlers force 'unsafe-inline' into the CSP, so injected markup could run script",
				fmt.Sprintf("remove %s=\"…\" and call el.addEventListener(%q, …) from a script", a.Key, strings.TrimPrefix(a.Key, "on")))
		}
	}
}

// jsType reports whether a script's type attribute makes it JavaScript.
func jsType(typ string) bool {
	switch typ {
	case "", "text/javascript", "application/javascript", "module", "text/ecmascript", "application/ecmascript", "application/x-javascript":
		return true
	}
	return false
}

func (b *builder) script(t html.Token, raw string, start int, content string, contentAt int, end string, scriptN, modN *int, attrAt func(string) int) {
	typ, _ := getAttr(t, "type")
	typ = strings.ToLower(strings.TrimSpace(typ))
	if _, nomodule := getAttr(t, "nomodule"); nomodule {
		return // a module-capable browser never runs it
	}
	if typ == "importmap" {
		b.importMapScript(content, contentAt)
		u := &scriptUnit{key: fmt.Sprintf("s%d", *scriptN), code: []byte(content), offset: -2}
		*scriptN++
		u.slot = &slot{open: raw, close: end, content: content, script: true, raw: true}
		b.parts = append(b.parts, part{slot: u.slot})
		return
	}
	if !jsType(typ) {
		// A data block (JSON, a template): not run, kept as written.
		b.parts = append(b.parts, part{text: raw + content + end})
		return
	}
	module := typ == "module"
	if src, hasSrc := getAttr(t, "src"); hasSrc {
		b.srcScript(t, raw, end, src, module, scriptN, modN, attrAt)
		return
	}
	if module {
		b.addModule(&moduleUnit{key: fmt.Sprintf("m%d", *modN), code: []byte(content), offset: contentAt})
		*modN++
		return
	}
	u := &scriptUnit{key: fmt.Sprintf("s%d", *scriptN), code: []byte(content), offset: contentAt}
	*scriptN++
	u.slot = &slot{open: raw, close: "</script>", script: true}
	b.classic = append(b.classic, u)
	b.parts = append(b.parts, part{slot: u.slot})
}

// srcScript handles a <script src>: a remote one is checked against the
// CDN allowlist and kept (see remoteScript), a local one is read and
// becomes a module or an inlined classic script, anything else is an
// error.
func (b *builder) srcScript(t html.Token, raw, end, src string, module bool, scriptN, modN *int, attrAt func(string) int) {
	switch classifyRef(src) {
	case refRemote:
		b.remoteScript(t, raw, end, src, module, attrAt)
		return
	case refLocal:
	default:
		b.diagAt(attrAt("src"), SeverityError, "ref.unsupported", fmt.Sprintf("cannot inline script src=%s", quote(src)),
			"a script must be a local file or an https URL on the CDN allowlist", "save the script next to the page and reference it by a relative path")
		return
	}
	p, data, ok := b.readLocal(src, "script", attrAt("src"), maxSourceBytes)
	if !ok {
		return
	}
	if !b.checkUTF8(p, data, "scripts are inlined into a UTF-8 page") {
		return
	}
	if !strings.Contains(p, "node_modules") {
		b.mu.Lock()
		b.sources[p] = data
		b.mu.Unlock()
	}
	if module {
		b.addModule(&moduleUnit{key: fmt.Sprintf("m%d", *modN), file: p, offset: -1})
		*modN++
		return
	}
	u := &scriptUnit{key: fmt.Sprintf("s%d", *scriptN), file: p, code: data, offset: -1}
	*scriptN++
	nt := t
	dropAttrs(&nt, "src", "async", "defer", "integrity", "crossorigin", "charset", "referrerpolicy", "fetchpriority")
	u.slot = &slot{open: startTag(nt), close: "</script>", script: true}
	b.classic = append(b.classic, u)
	_, async := getAttr(t, "async")
	_, deferred := getAttr(t, "defer")
	if async || deferred {
		// An inline script runs at once; a deferred one ran after
		// parsing, so it moves to the end of the body.
		b.tail = append(b.tail, part{slot: u.slot})
	} else {
		b.parts = append(b.parts, part{slot: u.slot})
	}
}

// remoteScript keeps a <script src> of a URL, reporting one off the CDN
// allowlist; a deferred classic one moves to the end of the body, in
// order with the local deferred scripts.
func (b *builder) remoteScript(t html.Token, raw, end, src string, module bool, attrAt func(string) int) {
	if msg, why, fix, ok := remoteCheck(src, "script"); !ok {
		b.diagAt(attrAt("src"), SeverityError, "cdn.not-allowed", msg, why, fix)
	}
	_, deferred := getAttr(t, "defer")
	_, async := getAttr(t, "async")
	if deferred && !async && !module {
		// Deferred scripts run in order after parsing; the local
		// ones move to the end of the body (they are inlined), so
		// a deferred CDN script moves with them, in order.
		nt := t
		dropAttrs(&nt, "defer")
		b.tail = append(b.tail, part{text: startTag(nt) + end})
		return
	}
	b.parts = append(b.parts, part{text: raw + end})
}

// addModule records a module script; all of a page's modules are bundled
// into one module placed where the first one was, so modules they share are
// instantiated once, as in the browser.
func (b *builder) addModule(m *moduleUnit) {
	if b.modSlot == nil {
		b.modCSS = &slot{open: "<style>", close: "</style>", skip: true}
		b.modSlot = &slot{open: `<script type="module">`, close: "</script>", script: true}
		b.parts = append(b.parts, part{slot: b.modCSS}, part{slot: b.modSlot})
	}
	b.modules = append(b.modules, m)
}

func (b *builder) importMapScript(content string, at int) {
	var m struct {
		Imports map[string]string `json:"imports"`
	}
	if err := jsonUnmarshal([]byte(content), &m); err != nil {
		b.diagAt(at, SeverityError, "html.importmap", "the import map is not valid JSON: "+err.Error(), "", "fix the JSON")
		return
	}
	specs := make([]string, 0, len(m.Imports))
	for spec := range m.Imports {
		specs = append(specs, spec)
	}
	sort.Strings(specs)
	for _, spec := range specs {
		target := m.Imports[spec]
		if classifyRef(target) != refRemote {
			b.diagAt(at, SeverityError, "html.importmap", fmt.Sprintf("import map entry %q points at %s", spec, quote(target)),
				"only CDN URLs can stay mapped; local modules are bundled", "import the local file by its relative path instead")
			continue
		}
		if msg, why, fix, ok := remoteCheck(target, "module"); !ok {
			b.diagAt(at, SeverityError, "cdn.not-allowed", msg, why, fix)
			continue
		}
		b.importMap = append(b.importMap, spec)
	}
	sort.Strings(b.importMap)
}

func (b *builder) link(t html.Token, raw string, start int, styleN *int, attrAt func(string) int) {
	rel, _ := getAttr(t, "rel")
	rels := relTokens(rel)
	href, _ := getAttr(t, "href")
	kind := classifyRef(href)
	if _, ok := linkhint.BlockedRel(rel); ok {
		// A hint never reaches the output. One to a local file is
		// useless (the file is inlined) and dropped quietly; any other is
		// reported by checkHints, which sees the page as the browser's
		// parser does.
		b.hintsDropped[start] = kind == refLocal
		return
	}
	switch {
	case rels["stylesheet"]:
		switch kind {
		case refRemote:
			if msg, why, fix, ok := remoteCheck(href, "stylesheet"); !ok {
				b.diagAt(attrAt("href"), SeverityError, "cdn.not-allowed", msg, why, fix)
			}
			b.parts = append(b.parts, part{text: raw})
		case refLocal:
			p, data, ok := b.readLocal(href, "stylesheet", attrAt("href"), maxSourceBytes)
			if !ok {
				return
			}
			if !b.checkUTF8(p, data, "styles are inlined into a UTF-8 page") {
				return
			}
			u := &cssUnit{key: fmt.Sprintf("c%d", *styleN), file: p, offset: -1}
			*styleN++
			open := "<style>"
			if media, ok := getAttr(t, "media"); ok {
				open = `<style media="` + escapeAttr(media) + `">`
			}
			u.slot = &slot{open: open, close: "</style>"}
			b.styles = append(b.styles, u)
			b.parts = append(b.parts, part{slot: u.slot})
		case refData:
			b.parts = append(b.parts, part{text: raw})
		default:
			b.diagAt(attrAt("href"), SeverityError, "ref.unsupported", fmt.Sprintf("cannot inline stylesheet %s", quote(href)),
				"a stylesheet must be a local file or an https URL on the CDN allowlist", "save it next to the page")
		}
	case rels["icon"] || rels["apple-touch-icon"] || rels["mask-icon"]:
		if nt, changed := b.assets(t, raw, start, attrAt); changed {
			b.parts = append(b.parts, part{text: startTag(nt)})
		} else {
			b.parts = append(b.parts, part{text: raw})
		}
	case rels["manifest"]:
		b.diagAt(start, SeverityWarning, "html.manifest", "<link rel=manifest> is dropped",
			"a sandboxed app is not installable on its own; the host lists it", "describe the app with <meta name=\"snug:…\"> tags")
	default:
		if kind == refLocal {
			b.diagAt(attrAt("href"), SeverityWarning, "ref.local-link", fmt.Sprintf("<link rel=%s> to local file %s is dropped", rel, quote(href)),
				"the built app is one file; nothing else travels with it", "remove the link")
			return
		}
		b.parts = append(b.parts, part{text: raw})
	}
}

// anchor checks a link. An https link works as written, whatever its
// target: the runtime takes the click (a modifier or middle click too) to
// snug.openUrl, so the host confirms and opens it in the user's browser; an
// in-page #link scrolls. A link the runtime cannot follow is a warning.
func (b *builder) anchor(t html.Token, start int, attrAt func(string) int) {
	href, _ := getAttr(t, "href")
	kind := classifyRef(href)
	if kind == refScheme && strings.HasPrefix(strings.ToLower(strings.TrimSpace(href)), "javascript:") {
		b.handlers = true
		b.diagAt(attrAt("href"), SeverityWarning, "html.inline-handler",
			fmt.Sprintf("javascript: URL in <%s href>", t.Data),
			"a javascript: URL is inline script: it forces 'unsafe-inline' into the CSP, so injected markup could run script",
			"use a <button type=\"button\"> and el.addEventListener(\"click\", …) from a script")
		return
	}
	switch lower := strings.ToLower(strings.TrimSpace(href)); {
	case kind == refRemote && strings.HasPrefix(lower, "//"):
		b.diagAt(attrAt("href"), SeverityWarning, "sandbox.navigation",
			fmt.Sprintf("link to %s has no scheme", quote(href)),
			"the app's page has no address of its own to take one from, so the link is not opened",
			"write the full https:// URL")
	case kind == refRemote && !strings.HasPrefix(lower, "https:"):
		b.diagAt(attrAt("href"), SeverityWarning, "sandbox.navigation",
			fmt.Sprintf("link to %s is not opened", quote(href)),
			"the host opens https:// links only",
			"link to the https:// address")
	case kind == refLocal:
		b.diagAt(attrAt("href"), SeverityWarning, "ref.local-link",
			fmt.Sprintf("link to local file %s leaves the app", quote(href)),
			"the built app is one file; other pages do not travel with it",
			"show the other view inside this page (hide and show sections)")
	}
}

// metaTag reads snug:* metadata and drops tags the build replaces; it
// reports whether to keep the tag.
func (b *builder) metaTag(t html.Token, start int, attrAt func(string) int) bool {
	if _, ok := getAttr(t, "charset"); ok {
		return false // the build writes its own, first
	}
	if eq, ok := getAttr(t, "http-equiv"); ok {
		switch strings.ToLower(strings.TrimSpace(eq)) {
		case "content-type":
			return false
		case "content-security-policy":
			b.diagAt(start, SeverityWarning, "html.csp-replaced", "the page's own Content-Security-Policy meta is replaced",
				"the build writes the policy that matches the sandbox, with hashes of the inlined code",
				"remove the tag")
			return false
		case "refresh":
			b.diagAt(start, SeverityWarning, "sandbox.navigation", "<meta http-equiv=refresh> navigates the app's frame away",
				"the host treats a frame that navigates as gone", "update the page from a timer instead")
			return true
		}
	}
	name, _ := getAttr(t, "name")
	if strings.HasPrefix(strings.ToLower(name), "snug:") {
		known := false
		for _, f := range announceFields() {
			if strings.EqualFold(f.Meta, name) {
				known = true
				content, _ := getAttr(t, "content")
				if _, dup := b.meta[f.Prop]; !dup {
					b.meta[f.Prop] = metaValue{value: content, offset: attrAt("content")}
				}
			}
		}
		if !known {
			var names []string
			for _, f := range announceFields() {
				names = append(names, f.Meta)
			}
			b.diagAt(start, SeverityWarning, "meta.unknown", fmt.Sprintf("unknown metadata %s", quote(name)),
				"the runtime announces only the app-announce fields", "use one of "+strings.Join(names, ", "))
		}
	}
	return true
}

// checkMeta checks snug:* metadata against the app-announce schema and
// fills defaults for what is missing.
func (b *builder) checkMeta() {
	for _, f := range announceFields() {
		v, ok := b.meta[f.Prop]
		if !ok {
			if !f.Required {
				continue
			}
			def := b.defaultMeta(f.Prop)
			b.diagAt(b.headOffset, SeverityWarning, "meta.missing", fmt.Sprintf("no <meta name=%q>; using %q", f.Meta, def),
				"the runtime announces the app to the host with it",
				fmt.Sprintf("add <meta name=%q content=\"…\"> to <head>", f.Meta))
			continue
		}
		n := runeLen(v.value)
		switch {
		case f.Required && strings.TrimSpace(v.value) == "":
			b.diagAt(v.offset, SeverityError, "meta.empty", fmt.Sprintf("%s is empty", f.Meta),
				"the host rejects an announce without "+f.Prop, "give it a value")
		case f.Max > 0 && n > f.Max:
			b.diagAt(v.offset, SeverityError, "meta.too-long", fmt.Sprintf("%s is %d characters, more than %d", f.Meta, n, f.Max),
				"the host rejects an app-announce whose "+f.Prop+" is longer", fmt.Sprintf("shorten it to %d characters", f.Max))
		case f.Prop == "iconColor" && !csscolor.Valid(v.value):
			b.diagAt(v.offset, SeverityWarning, "meta.icon-color", fmt.Sprintf("%s %s is not a colour", f.Meta, quote(v.value)),
				"the host shows only a colour there, never var(), a gradient or url(): this one is dropped",
				"use a hex colour such as #2e7d32, rgb(…), hsl(…) or a named colour")
		}
	}
}

var slugRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9.-]+`) })

func (b *builder) defaultMeta(prop string) string {
	base := strings.TrimSuffix(b.pageName, path.Ext(b.pageName))
	if base == "index" || base == "app" {
		if d := b.folderName(); d != "." && d != "/" && d != "" {
			base = d
		}
	}
	switch prop {
	case "appId":
		s := strings.Trim(slugRE().ReplaceAllString(strings.ToLower(base), "-"), "-")
		if s == "" {
			s = "app"
		}
		return s
	case "displayName":
		if b.title != "" {
			return b.title
		}
		return base
	}
	return ""
}

// folderName is the name of the folder holding the page.
func (b *builder) folderName() string {
	if b.src.disk != "" {
		return filepath.Base(b.src.disk)
	}
	return path.Base(b.src.root)
}

func (b *builder) metaValue(prop string) string {
	if v, ok := b.meta[prop]; ok {
		return v.value
	}
	for _, f := range announceFields() {
		if f.Prop == prop && f.Required {
			return b.defaultMeta(prop)
		}
	}
	return ""
}

// fileDiag records a diagnostic at a byte offset in a local file.
func (b *builder) fileDiag(p string, data []byte, off int, sev Severity, code, msg, why, fix string) {
	d := Diagnostic{Severity: sev, Code: code, File: b.src.rel(p), Message: msg, Why: why, Fix: fix}
	d.Line, d.Column, d.LineText = position(data, lineStarts(data), off)
	b.add(d)
}

var cssURLRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`url\(\s*(['"]?)([^'")]*)(['"]?)\s*\)`) })

// assets inlines the local files an element loads (images, media, icons)
// and checks remote ones against the allowlist.
func (b *builder) assets(t html.Token, raw string, start int, attrAt func(string) int) (html.Token, bool) {
	changed := false
	one := func(key, ref string) (string, bool) {
		switch classifyRef(ref) {
		case refLocal:
			return b.inlineAsset(ref, attrAt(key))
		case refRemote:
			if msg, why, fix, ok := remoteCheck(ref, "<"+t.Data+"> "+key); !ok {
				b.diagAt(attrAt(key), SeverityError, "cdn.not-allowed", msg, why, fix)
			}
		case refScheme:
			if hasScheme(strings.TrimSpace(ref), "file") {
				d := outside(ref, "a file: URL names a file of the machine, not of the app").diag()
				b.diagAt(attrAt(key), d.Severity, d.Code, d.Message, d.Why, d.Fix)
			}
		}
		return ref, false
	}
	for i, a := range t.Attr {
		if a.Namespace != "" && !(a.Namespace == "xlink" && a.Key == "href") {
			continue
		}
		var load bool
		name := a.Key
		if name == "xlink:href" {
			name = "href" // the tokenizer keeps the prefix in the name
		}
		switch name {
		case "src":
			load = t.Data == "img" || t.Data == "source" || t.Data == "video" || t.Data == "audio" || t.Data == "track" || t.Data == "embed" || t.Data == "iframe" ||
				(t.Data == "input" && strings.EqualFold(attrVal(t, "type"), "image"))
		case "poster":
			load = t.Data == "video"
		case "href":
			load = t.Data == "link" || t.Data == "image" || t.Data == "use" || t.Data == "feimage"
		case "data":
			load = t.Data == "object"
		case "srcset":
			if t.Data == "img" || t.Data == "source" {
				if v, ok := b.srcset(a.Val, func(ref string) (string, bool) { return one("srcset", ref) }); ok {
					t.Attr[i].Val = v
					changed = true
				}
			}
			continue
		case "style":
			if v, ok := b.styleAttr(a.Val, attrAt("style")); ok {
				t.Attr[i].Val = v
				changed = true
			}
			continue
		}
		if !load {
			continue
		}
		if t.Data == "iframe" {
			b.diagAt(attrAt(a.Key), SeverityError, "html.embed", "<iframe src> cannot load in the sandbox",
				"the sandbox's CSP has frame-src 'none'", "put the content in the page itself; open other sites with await snug.openUrl(url)")
			continue
		}
		if t.Data == "embed" || t.Data == "object" {
			b.diagAt(attrAt(a.Key), SeverityError, "html.embed", fmt.Sprintf("<%s> cannot load in the sandbox", t.Data),
				"the sandbox's CSP has object-src 'none'", "show images with <img> and media with <video>/<audio>")
			continue
		}
		if v, ok := one(a.Key, a.Val); ok {
			t.Attr[i].Val = v
			changed = true
		}
	}
	return t, changed
}

func attrVal(t html.Token, key string) string {
	v, _ := getAttr(t, key)
	return v
}

func (b *builder) srcset(v string, one func(string) (string, bool)) (string, bool) {
	if strings.Contains(v, "data:") {
		return v, false
	}
	changed := false
	cands := strings.Split(v, ",")
	for i, c := range cands {
		f := strings.Fields(c)
		if len(f) == 0 {
			continue
		}
		if nv, ok := one(f[0]); ok {
			f[0] = nv
			changed = true
		}
		cands[i] = strings.Join(f, " ")
	}
	return strings.Join(cands, ", "), changed
}

func (b *builder) styleAttr(v string, at int) (string, bool) {
	changed := false
	re := cssURLRE()
	out := re.ReplaceAllStringFunc(v, func(m string) string {
		sm := re.FindStringSubmatch(m)
		ref := sm[2]
		switch classifyRef(ref) {
		case refLocal:
			if uri, ok := b.inlineAsset(ref, at); ok {
				changed = true
				return `url("` + uri + `")`
			}
		case refRemote:
			if msg, why, fix, ok := remoteCheck(ref, "style url()"); !ok {
				b.diagAt(at, SeverityError, "cdn.not-allowed", msg, why, fix)
			}
		}
		return m
	})
	return out, changed
}

// inlineAsset reads a local asset and returns its data URI.
func (b *builder) inlineAsset(ref string, at int) (string, bool) {
	p, data, ok := b.readLocal(ref, "file", at, b.maxAsset)
	if !ok {
		return "", false
	}
	return dataURI(p, data), true
}

// checkUTF8 reports whether the file p read as data is valid UTF-8; when
// it is not, it reports utf8.invalid at the first bad byte, why saying
// what needs it.
func (b *builder) checkUTF8(p string, data []byte, why string) bool {
	off, ok := invalidUTF8(data)
	if !ok {
		b.fileDiag(p, data, off, SeverityError, "utf8.invalid", "the file is not valid UTF-8", why, "save the file as UTF-8")
	}
	return ok
}

// readLocal reads the local file a reference in the page names, confined to
// the app's folder, and records it as an input. On failure it reports why
// at offset at and returns ok false. what names the reference in a
// missing-file message ("script", "stylesheet", "file").
func (b *builder) readLocal(ref, what string, at int, limit int64) (p string, data []byte, ok bool) {
	p, err := b.src.confine(ref, b.src.root, true)
	if err == nil {
		data, err = b.src.read(p, ref, limit)
	}
	if err != nil {
		d := b.refDiag(ref, what, err, limit)
		b.diagAt(at, d.Severity, d.Code, d.Message, d.Why, d.Fix)
		return "", nil, false
	}
	b.addInput(p)
	return p, data, true
}

// refDiag says why reading a reference failed, without a place.
func (b *builder) refDiag(ref, what string, err error, limit int64) Diagnostic {
	var re *refError
	var tl *tooLargeError
	switch {
	case errors.As(err, &re):
		return re.diag()
	case errors.As(err, &tl):
		if limit == b.maxAsset {
			return Diagnostic{Severity: SeverityError, Code: "asset.too-large", Message: fmt.Sprintf("%s is %d bytes, over the %d-byte limit for an inlined asset", quote(ref), tl.size, tl.limit),
				Why: "assets ride inside the app's one HTML file as data URIs", Fix: "shrink or compress it (or raise the limit with --max-asset)"}
		}
		return Diagnostic{Severity: SeverityError, Code: "asset.too-large", Message: fmt.Sprintf("%s is %d bytes, over the %d-byte limit for a file the build inlines", quote(ref), tl.size, tl.limit),
			Why: "the whole app travels as one HTML file", Fix: "split it, or load large data at run time through snug.db"}
	case errors.Is(err, fs.ErrNotExist):
		return Diagnostic{Severity: SeverityError, Code: "ref.missing", Message: fmt.Sprintf("%s %s not found", what, quote(ref)),
			Why: "every local file the page references is inlined at build time", Fix: "check the path; it is relative to " + b.pageName}
	}
	return Diagnostic{Severity: SeverityError, Code: "ref.missing", Message: fmt.Sprintf("cannot read %s: %v", quote(ref), err), Fix: "check the file"}
}
