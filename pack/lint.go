package pack

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/frame"
)

// The sandbox checks find the app's references to browser APIs the sandbox
// takes away, and its uses of the snug runtime, with esbuild's own scope
// analysis: each name is "defined" to a marker identifier, which esbuild
// substitutes only where the name is global (a local variable or a property
// called fetch is left alone); the markers' places come back through the
// transform's source map.

type lintRule struct {
	code string
	sev  Severity
	// names are global names, without the window./globalThis./self.
	// forms. A name written "x =" counts only as an assignment's target
	// (location.href = url navigates; reading it does not), and not when
	// what is assigned is an in-page "#…".
	names []string
	why   string
	fix   string
}

var lintRules = append([]lintRule{
	{"sandbox.network", SeverityError, frame.RemovedGlobals,
		"the host deletes WebRTC before the app runs: it would send packets whatever the CSP says",
		"use snug.net.fetch(url) for HTTP; the sandbox has no peer-to-peer channel"},
	{"sandbox.worker", SeverityWarning, []string{"Worker", "SharedWorker", "navigator.serviceWorker"},
		"the sandbox's CSP has worker-src 'none'",
		"run the work in the page, in slices (await a timer between them) so the UI stays responsive"},
}, baseRules...)

var baseRules = []lintRule{
	{"sandbox.network", SeverityError, []string{"fetch", "XMLHttpRequest", "WebSocket", "EventSource", "navigator.sendBeacon"},
		"the sandbox has no network of its own (CSP connect-src 'none')",
		"use snug.net.fetch(url, {method, headers, body}): the host asks the user, then makes the request"},
	{"sandbox.storage", SeverityError, []string{"localStorage", "sessionStorage", "indexedDB", "document.cookie"},
		"the sandboxed frame has an opaque origin, so browser storage throws SecurityError",
		"use snug.db.get/snug.db.set for values or snug.db.exec for SQL: the host keeps them per app"},
	{"sandbox.navigation", SeverityError, []string{"top.location", "parent.location"},
		"the sandbox cannot navigate the host's page",
		"use await snug.openUrl(url): the host confirms and opens it in the user's browser"},
	{"sandbox.navigation", SeverityWarning, []string{"open"},
		"window.open returns null here, and the runtime hands the URL to snug.openUrl",
		"use await snug.openUrl(url): the host confirms, opens it in the user's browser and says whether it did"},
	{"sandbox.navigation", SeverityWarning, []string{"location =", "location.href =", "document.location =", "document.location.href ="},
		navigatesAway, openInstead},
	{"sandbox.navigation", SeverityWarning, []string{"location.assign", "location.replace", "document.location.assign", "document.location.replace"},
		navigatesAway, openInstead},
	{"sandbox.navigation", SeverityWarning, []string{"location.reload", "document.location.reload"},
		"the host treats a frame that navigates or reloads as gone and stops talking to it",
		"keep the app on one page: update the DOM instead, and open other sites with await snug.openUrl(url)"},
	// alert() needs no rule: the runtime shows its message in the page.
	{"sandbox.modal", SeverityWarning, []string{"confirm", "prompt"},
		"the sandbox has no allow-modals: it returns at once without asking (confirm() false, prompt() null), so the action behind it never runs",
		`ask in the page with a <dialog> and two buttons: <dialog id="ask"><form method="dialog"><p>Delete it?</p>` +
			`<button value="no">Cancel</button> <button value="yes">Delete</button></form></dialog>; call ask.showModal() ` +
			`and act in ask.addEventListener("close", …) when ask.returnValue === "yes" (for prompt, put an <input> in the form)`},
	{"sandbox.permission", SeverityWarning, []string{"navigator.geolocation"},
		"the host's Permissions-Policy denies geolocation to every app: the browser refuses at once (PERMISSION_DENIED) without asking",
		"ask the user for the place in the page (a city or coordinates in an <input>), keep it with snug.db.set, and look it up with snug.net.fetch"},
	{"sandbox.permission", SeverityWarning, []string{"navigator.mediaDevices"},
		"the host's Permissions-Policy denies camera, microphone and screen capture to every app: getUserMedia rejects at once",
		`let the user choose a file: <input type="file" accept="image/*" capture> (or accept="audio/*"), and read it with file.arrayBuffer()`},
	{"sandbox.permission", SeverityWarning, []string{"Notification"},
		"the sandboxed frame has an opaque origin, so notifications are denied without asking and none shows",
		`show the message in the page (an element with role="status", and document.title for a timer that finishes in the background)`},
	{"sandbox.clipboard", SeverityWarning, []string{"navigator.clipboard.readText"},
		"the host lets an app write the clipboard on a click but never read it",
		`let the user paste: listen for the paste event and read e.clipboardData.getData("text")`},
}

// What the rules on a navigation of the app's own document say.
const (
	navigatesAway = "it navigates the app's own frame away, and the host treats a frame that navigates as gone and stops talking to it"
	openInstead   = "open the site with await snug.openUrl(url): the host confirms and opens it in the user's browser; " +
		"to show another view, update this page (an app is one page; #id jumps within it)"
)

// capabilityNames maps a runtime entry point to the capability it uses;
// usedCapabilities finds them in the bundled code (the minifier never
// renames a global's properties).
var capabilityNames = []struct{ expr, name string }{
	{"snug.ask", "ask"}, {"snug.db", "db"}, {"snug.net", "net"}, {"snug.openUrl", "openUrl"}, {"snug.saveFile", "saveFile"},
}

// lintWords holds every name a rule looks for (the last part of a dotted
// name); code that mentions none of them needs no analysis. first and
// lengths are the first bytes and the lengths of the words, so that most
// identifiers are passed over without a map lookup.
var lintWords = sync.OnceValue(func() (w struct {
	words   map[string]bool
	first   [256]bool
	lengths [64]bool
}) {
	w.words = map[string]bool{}
	for _, r := range lintRules {
		for _, n := range r.names {
			n, _ = strings.CutSuffix(n, " =")
			word := n[strings.LastIndexByte(n, '.')+1:]
			w.words[word] = true
			w.first[word[0]] = true
			w.lengths[min(len(word), 63)] = true
		}
	}
	return w
})

// mentionsBlocked reports whether code has an identifier-like word that a
// rule looks for: one pass, no regexp.
func mentionsBlocked(code string) bool {
	w := lintWords()
	for i := 0; i < len(code); {
		if !isIdent(code[i]) {
			i++
			continue
		}
		j := i
		for j < len(code) && isIdent(code[j]) {
			j++
		}
		if w.first[code[i]] && w.lengths[min(j-i, 63)] && w.words[code[i:j]] {
			return true
		}
		i = j
	}
	return false
}

type marker struct {
	rule   int // index in lintRules
	name   string
	assign bool // only as an assignment's target
}

// lintMarkers returns the markers and the Define map that puts them in
// place of the names the rules look for.
var lintMarkers = sync.OnceValues(func() ([]marker, map[string]string) {
	var ms []marker
	def := map[string]string{}
	add := func(key string, m marker) {
		def[key] = fmt.Sprintf("__snug_lint_%d__", len(ms))
		ms = append(ms, m)
	}
	for i, r := range lintRules {
		for _, n := range r.names {
			n, assign := strings.CutSuffix(n, " =")
			m := marker{rule: i, name: n, assign: assign}
			if n == "open" {
				m.name = "window.open"
			}
			add(n, m)
			for _, g := range []string{"window.", "globalThis.", "self."} {
				add(g+n, marker{rule: i, name: g + n, assign: assign})
			}
		}
	}
	return ms, def
})

var markerRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`__snug_lint_(\d+)__`) })

// lintUnit is one piece of the app's own code to check.
type lintUnit struct {
	code   string
	loader api.Loader
	file   string // read path; "" for inline code in the page
	offset int    // inline: offset of the code in the page
}

// lint runs the sandbox checks over the app's own scripts (not packages in
// node_modules) and records the capabilities it uses.
func (b *builder) lint() {
	var units []lintUnit
	for _, u := range b.classic {
		if u.offset == -2 {
			continue
		}
		if u.file == "" {
			units = append(units, lintUnit{code: string(u.code), loader: api.LoaderJS, offset: u.offset})
		}
	}
	for _, m := range b.modules {
		if m.file == "" {
			units = append(units, lintUnit{code: string(m.code), loader: api.LoaderJS, offset: m.offset})
		}
	}
	b.mu.Lock()
	var files []string
	for p := range b.sources {
		files = append(files, p)
	}
	sort.Strings(files)
	for _, p := range files {
		l, _ := loaderFor(p)
		units = append(units, lintUnit{code: string(b.sources[p]), loader: l, file: p})
	}
	b.mu.Unlock()

	var wg sync.WaitGroup
	for i := range units {
		if units[i].loader == api.LoaderJS || units[i].loader == api.LoaderTS {
			b.lintStringHandlers(units[i])
		}
		b.lintSnug(units[i])
		if !mentionsBlocked(units[i].code) {
			continue
		}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			b.lintOne(units[i])
		}(i)
	}
	wg.Wait()
}

// findStringHandlers finds each inline event handler attribute in the text
// of a string or template literal: markup an app builds to assign to
// innerHTML, outerHTML or insertAdjacentHTML. The name is one of the
// events a page handles (a plain "only=" in a query string is not one),
// after the start of the text, white space, a quote, / or \, and followed
// by = and a quote, an escaped quote or a template's ${. It returns what
// FindAllStringSubmatchIndex of the regexp TestStringHandlersAreTheRegexp
// holds it to returns (whose compilation alone cost 1M instructions per
// build): the match with its leading character, and the attribute's name.
func findStringHandlers(s string) [][]int {
	var out [][]int
	last := 0 // the end of the last match, which the next cannot overlap
	for i := 0; i+2 <= len(s); i++ {
		if s[i]|0x20 != 'o' || s[i+1]|0x20 != 'n' {
			continue
		}
		start := i
		if i > 0 {
			if c := s[i-1]; i-1 < last || !isSpace(c) && c != '"' && c != '\'' && c != '/' && c != '\\' {
				continue
			}
			start = i - 1
		}
		if j, end, ok := handlerAt(s, i); ok {
			out = append(out, []int{start, end, i, j})
			last = end
			i = end - 1
		}
	}
	return out
}

// mayHoldStringHandler reports whether code has an on… handler attribute
// anywhere, whatever precedes it: a literal with one holds one there, so
// code without needs no search for its literals.
func mayHoldStringHandler(code string) bool {
	for i := 0; i+2 <= len(code); i++ {
		if code[i]|0x20 == 'o' && code[i+1]|0x20 == 'n' {
			if _, _, ok := handlerAt(code, i); ok {
				return true
			}
		}
	}
	return false
}

// handlerAt matches, at s[i:] (which starts with "on" in any case), an
// event's name, then = and a quote, an escaped quote or ${; it returns the
// end of the name and of the match.
func handlerAt(s string, i int) (j, end int, ok bool) {
	// The name's letters, as the regexp's case-insensitive [a-z] reads
	// them: ASCII letters, and ſ and the Kelvin sign, which fold to s and k.
	var buf [24]byte
	name := buf[:0]
	for j = i + 2; j < len(s); {
		c := s[j]
		if 'a' <= c|0x20 && c|0x20 <= 'z' {
			name = append(name, c|0x20)
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[j:])
		if r == '\u017f' {
			name = append(name, 's')
		} else if r == '\u212a' {
			name = append(name, 'k')
		} else {
			break
		}
		j += size
	}
	if !handlerEvent(string(name)) {
		return 0, 0, false
	}
	k := skipSpaces(s, j)
	if k >= len(s) || s[k] != '=' {
		return 0, 0, false
	}
	switch k = skipSpaces(s, k+1); {
	case k < len(s) && isQuote(s[k]):
		return j, k + 1, true
	case k+1 < len(s) && s[k] == '\\' && isQuote(s[k+1]):
		return j, k + 2, true
	case strings.HasPrefix(s[k:], "${"):
		return j, k + 2, true
	}
	return 0, 0, false
}

// handlerEvent reports whether an on… attribute (name is the rest, lower
// case) handles one of the events a page handles.
func handlerEvent(name string) bool {
	switch name {
	case "click", "dblclick", "auxclick", "contextmenu", "keydown", "keyup", "keypress", "input", "change", "submit", "reset",
		"focus", "focusin", "focusout", "blur", "load", "error", "scroll", "scrollend", "drop", "wheel", "select", "toggle",
		"play", "playing", "pause", "ended", "resize", "copy", "cut", "paste", "invalid", "search", "beforeinput", "close", "cancel":
		return true
	}
	for _, p := range []string{"mouse", "pointer", "touch", "drag", "animation", "transition", "canplay"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// lintStringHandlers warns, on its line, about each inline event handler
// written inside a string or template literal of u: the page's CSP runs
// only the build's own scripts, so the browser refuses such a handler when
// the markup is inserted, and the button does nothing.
func (b *builder) lintStringHandlers(u lintUnit) {
	if !mayHoldStringHandler(u.code) {
		return
	}
	var src []byte
	var srcLines []int
	s := jsScanner{src: u.code}
	s.lit = func(start, end int) {
		for _, m := range findStringHandlers(u.code[start:end]) {
			name := strings.ToLower(u.code[start+m[2] : start+m[3]])
			off := start + m[2]
			d := Diagnostic{Severity: SeverityWarning, Code: "html.inline-handler",
				Message: fmt.Sprintf("inline event handler %s in markup built from a string", name),
				Why:     "the page's CSP runs only the build's own scripts, so the browser refuses this handler when the markup is inserted: it never runs",
				Fix: fmt.Sprintf(`give the element a class or data- attribute and listen once on its container: `+
					`list.addEventListener(%q, (e) => { const el = e.target.closest("[data-id]"); if (el) … el.dataset.id … }), `+
					`or create the element with document.createElement and call el.addEventListener(%q, …)`, name[2:], name[2:])}
			if u.file == "" {
				d.File = b.pageName
				d.Line, d.Column, d.LineText = position(b.html, b.lines, u.offset+off)
			} else {
				if src == nil {
					src = []byte(u.code)
					srcLines = lineStarts(src)
				}
				d.File = b.src.rel(u.file)
				d.Line, d.Column, d.LineText = position(src, srcLines, off)
			}
			b.add(d)
		}
	}
	s.run()
}

// usedCapabilities lists the capabilities the bundled code calls.
func (b *builder) usedCapabilities() []string {
	seen := map[string]bool{}
	for _, p := range append(append([]part(nil), b.parts...), b.tail...) {
		if p.slot != nil && p.slot.script {
			c := p.slot.content
			for i := strings.Index(c, "snug."); i >= 0; {
				j := i + len("snug.")
				k := j
				for k < len(c) && isIdent(c[k]) {
					k++
				}
				if i == 0 || !isIdent(c[i-1]) && c[i-1] != '.' {
					seen[c[j:k]] = true
				}
				n := strings.Index(c[k:], "snug.")
				if n < 0 {
					break
				}
				i = k + n
			}
		}
	}
	caps := []string{}
	for _, c := range capabilityNames {
		if seen[c.name] {
			caps = append(caps, c.name)
		}
	}
	return caps
}

func (b *builder) lintOne(u lintUnit) {
	markers, lintDefine := lintMarkers()
	r := api.Transform(u.code, api.TransformOptions{
		Loader:     u.loader,
		Sourcefile: "x",
		Sourcemap:  api.SourceMapExternal,
		Define:     lintDefine,
		// The bundle's options (see target): the markers are globals, which
		// minification keeps, and their places come back by the source map.
		Target:            target,
		MinifySyntax:      minifySyntax,
		MinifyIdentifiers: minifyIdentifiers,
		LogLevel:          api.LogLevelSilent,
	})
	if len(r.Errors) > 0 {
		return // the build reported it already
	}
	out := string(r.Code)
	if !strings.Contains(out, "__snug_lint_") {
		return
	}
	sm, err := decodeSourceMap(r.Map)
	if err != nil {
		return
	}
	outLines := lineStarts(r.Code)
	src := []byte(u.code)
	srcLines := lineStarts(src)
	for _, loc := range markerRE().FindAllStringSubmatchIndex(out, -1) {
		idx, _ := strconv.Atoi(out[loc[2]:loc[3]])
		m := markers[idx]
		genLine, genCol := offsetToLineCol16(r.Code, outLines, loc[0])
		line, col16, ok := sm.lookup(genLine, genCol)
		if !ok {
			continue
		}
		rule := lintRules[m.rule]
		msg := m.name + " is not available in the sandbox"
		switch {
		case m.assign && !navigates(out[loc[1]:]):
			continue
		case m.assign:
			msg = m.name + " = … leaves the app's page"
		case rule.why == navigatesAway:
			msg = m.name + "(…) leaves the app's page"
		}
		d := Diagnostic{Severity: rule.sev, Code: rule.code, Message: msg, Why: rule.why, Fix: rule.fix}
		if line >= len(srcLines) {
			continue
		}
		off := srcLines[line] + col16ToBytes(src[srcLines[line]:], col16)
		if u.file == "" {
			d.File = b.pageName
			d.Line, d.Column, d.LineText = position(b.html, b.lines, u.offset+off)
		} else {
			d.File = b.src.rel(u.file)
			d.Line, d.Column, d.LineText = position(src, srcLines, off)
		}
		b.add(d)
	}
}

// navigates reports whether rest, the transformed code after a marker, makes
// it an assignment's target (= or a compound assignment such as +=) of
// anything but a string that starts with "#" (an in-page jump).
func navigates(rest string) bool {
	rest = strings.TrimLeft(rest, " \t\n")
	if len(rest) > 1 && rest[0] == '+' {
		rest = rest[1:]
	}
	if len(rest) < 2 || rest[0] != '=' || rest[1] == '=' || rest[1] == '>' {
		return false
	}
	v := strings.TrimLeft(rest[1:], " \t\n")
	return !(len(v) > 1 && isQuote(v[0]) && v[1] == '#')
}

func offsetToLineCol16(src []byte, ls []int, off int) (int, int) {
	line, _, _ := position(src, ls, off)
	start := ls[line-1]
	return line - 1, utf16Len(src[start:off])
}

func utf16Len(p []byte) int {
	n := 0
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		p = p[size:]
		n += len(utf16.Encode([]rune{r}))
	}
	return n
}

func col16ToBytes(line []byte, col16 int) int {
	n, i := 0, 0
	for i < len(line) && n < col16 {
		r, size := utf8.DecodeRune(line[i:])
		n += len(utf16.Encode([]rune{r}))
		i += size
	}
	return i
}

// sourceMap holds the decoded mappings of a one-source map: per generated
// line, segments of (generated column, source line, source column).
type sourceMap struct {
	lines [][][3]int
}

func decodeSourceMap(raw []byte) (*sourceMap, error) {
	var m struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	sm := &sourceMap{}
	srcLine, srcCol := 0, 0
	for _, lineText := range strings.Split(m.Mappings, ";") {
		var segs [][3]int
		genCol := 0
		for _, seg := range strings.Split(lineText, ",") {
			if seg == "" {
				continue
			}
			vals, err := decodeVLQ(seg)
			if err != nil {
				return nil, err
			}
			genCol += vals[0]
			if len(vals) >= 4 {
				srcLine += vals[2]
				srcCol += vals[3]
				segs = append(segs, [3]int{genCol, srcLine, srcCol})
			}
		}
		sm.lines = append(sm.lines, segs)
	}
	return sm, nil
}

// lookup finds the source place of a generated line and column (0-based).
func (sm *sourceMap) lookup(line, col int) (int, int, bool) {
	if line >= len(sm.lines) {
		return 0, 0, false
	}
	segs := sm.lines[line]
	i := sort.Search(len(segs), func(i int) bool { return segs[i][0] > col }) - 1
	if i < 0 {
		return 0, 0, false
	}
	return segs[i][1], segs[i][2], true
}

const b64chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

func decodeVLQ(s string) ([]int, error) {
	var out []int
	val, shift := 0, 0
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(b64chars, s[i])
		if d < 0 {
			return nil, fmt.Errorf("bad source map character %q", s[i])
		}
		val += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			continue
		}
		if val&1 != 0 {
			out = append(out, -(val >> 1))
		} else {
			out = append(out, val>>1)
		}
		val, shift = 0, 0
	}
	return out, nil
}
