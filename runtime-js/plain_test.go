package runtimejs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The runtime is written for people and shrunk by esbuild (issue 27 item 4):
// the source keeps none of the tricks that save bytes by hand. plainLint
// reads JavaScript as tokens, with a bracket classifier good enough for the
// way this source is formatted (prettier-like, semicolons), and reports:
//
//   - a comma expression: a comma in a statement (other than a let, const or
//     var list), in parentheses that group, or in an if/while/switch head;
//   - a ternary inside another (one level reads; a chain is an if/else);
//   - a parameter default that computes (anything but one literal or name,
//     {} or []): a local in disguise;
//   - escape() and unescape();
//   - a one-letter name, unless it is bound in a for head (a loop index).
//
// Property names (after a dot, or a key in an object literal) are data, not
// names: the wire's v and the descriptors' kind letters stay.

type jsToken struct {
	kind string // ident, num, str, regex, punct
	text string
	line int
}

var jsPuncts = strings.Fields(`>>>= ... === !== **= <<= >>= >>> &&= ||= ??= => == != <= >= && || ?? ?. ++ -- += -= *= /= %= &= |= ^= ** << >>`)

var jsRegexAfter = map[string]bool{"return": true, "typeof": true, "case": true, "do": true, "else": true, "in": true, "of": true, "new": true, "delete": true, "void": true, "throw": true, "instanceof": true, "yield": true, "await": true}

// jsLexer splits JavaScript into tokens. A template literal's text parts
// are str tokens and each ${…} a pair of parentheses.
type jsLexer struct {
	src    string
	pos    int
	line   int
	toks   []jsToken
	braces []int // per open ${: the braces opened inside it
}

func jsTokens(src string) ([]jsToken, error) {
	l := &jsLexer{src: src, line: 1}
	for {
		l.skipSpace()
		if l.pos >= len(l.src) {
			return l.toks, nil
		}
		if err := l.next(); err != nil {
			return nil, fmt.Errorf("line %d: %w", l.line, err)
		}
	}
}

func (l *jsLexer) skipSpace() {
	for l.pos < len(l.src) {
		switch rest := l.src[l.pos:]; {
		case rest[0] == '\n':
			l.line++
			l.pos++
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r':
			l.pos++
		case strings.HasPrefix(rest, "//"):
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				end = len(rest)
			}
			l.pos += end
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest, "*/")
			if end < 0 {
				end = len(rest) - 2
			}
			l.line += strings.Count(rest[:end], "\n")
			l.pos += end + 2
		default:
			return
		}
	}
}

func (l *jsLexer) emit(kind string, start int) {
	l.toks = append(l.toks, jsToken{kind, l.src[start:l.pos], l.line})
}

var (
	jsIdent  = regexp.MustCompile(`^[A-Za-z_$#][\w$]*`)
	jsNumber = regexp.MustCompile(`^(0[xXoObB][\da-fA-F_]+n?|(\d[\d_]*)?\.?\d[\d_]*([eE][+-]?\d+)?n?)`)
)

func (l *jsLexer) next() error {
	rest, start := l.src[l.pos:], l.pos
	switch c := rest[0]; {
	case c == '"' || c == '\'':
		return l.quoted(c)
	case c == '`':
		l.pos++
		return l.template()
	case c == '}' && len(l.braces) > 0 && l.braces[len(l.braces)-1] == 0:
		l.braces = l.braces[:len(l.braces)-1]
		l.pos++
		l.toks = append(l.toks, jsToken{"punct", ")", l.line})
		return l.template()
	case c == '/' && l.regexAllowed():
		return l.regex()
	case jsIdent.MatchString(rest):
		l.pos += len(jsIdent.FindString(rest))
		l.emit("ident", start)
	case c >= '0' && c <= '9' || c == '.' && len(rest) > 1 && rest[1] >= '0' && rest[1] <= '9':
		l.pos += len(jsNumber.FindString(rest))
		l.emit("num", start)
	default:
		l.pos++
		for _, p := range jsPuncts {
			if strings.HasPrefix(rest, p) && !(p == "?." && len(rest) > 2 && rest[2] >= '0' && rest[2] <= '9') {
				l.pos = start + len(p)
				break
			}
		}
		if len(l.braces) > 0 && (c == '{' || c == '}') {
			l.braces[len(l.braces)-1] += map[byte]int{'{': 1, '}': -1}[c]
		}
		l.emit("punct", start)
	}
	return nil
}

func (l *jsLexer) quoted(q byte) error {
	start := l.pos
	for l.pos++; l.pos < len(l.src); l.pos++ {
		switch l.src[l.pos] {
		case '\\':
			l.pos++
		case '\n':
			return fmt.Errorf("a string runs past its line")
		case q:
			l.pos++
			l.emit("str", start)
			return nil
		}
	}
	return fmt.Errorf("an unterminated string")
}

// template reads a template literal's text up to its end or to a ${.
func (l *jsLexer) template() error {
	start := l.pos
	for ; l.pos < len(l.src); l.pos++ {
		switch l.src[l.pos] {
		case '\\':
			l.pos++
		case '\n':
			l.line++
		case '`':
			l.pos++
			l.emit("str", start)
			return nil
		case '$':
			if strings.HasPrefix(l.src[l.pos:], "${") {
				l.emit("str", start)
				l.pos += 2
				l.toks = append(l.toks, jsToken{"punct", "(", l.line})
				l.braces = append(l.braces, 0)
				return nil
			}
		}
	}
	return fmt.Errorf("an unterminated template literal")
}

func (l *jsLexer) regexAllowed() bool {
	if strings.HasPrefix(l.src[l.pos:], "/=") && len(l.toks) > 0 && l.toks[len(l.toks)-1].kind != "punct" {
		return false
	}
	if len(l.toks) == 0 {
		return true
	}
	switch prev := l.toks[len(l.toks)-1]; prev.kind {
	case "punct":
		return prev.text != ")" && prev.text != "]" && prev.text != "}"
	case "ident":
		return jsRegexAfter[prev.text]
	}
	return false
}

func (l *jsLexer) regex() error {
	start := l.pos
	class := false
	for l.pos++; l.pos < len(l.src); l.pos++ {
		switch c := l.src[l.pos]; {
		case c == '\\':
			l.pos++
		case c == '\n':
			return fmt.Errorf("a regular expression runs past its line")
		case c == '[':
			class = true
		case c == ']':
			class = false
		case c == '/' && !class:
			l.pos++
			l.pos += len(regexp.MustCompile(`^[a-z]*`).FindString(l.src[l.pos:]))
			l.emit("regex", start)
			return nil
		}
	}
	return fmt.Errorf("an unterminated regular expression")
}

var jsKeywords = map[string]bool{}

func init() {
	for _, k := range strings.Fields(`break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield await of async true false null undefined`) {
		jsKeywords[k] = true
	}
}

// jsFrame is one open bracket as the checks see it.
type jsFrame struct {
	kind      string // top, block, object, call, params, group, array, head (for), cond (if, while, switch)
	close     int    // the index of the closing token
	decl      bool   // a block's current statement is a let, const or var list
	inherited int    // ternaries open around this bracket
	ternaries int    // ternaries open in this bracket's current expression
	colons    int    // ternaries whose ":" is still to come
}

func matchBrackets(toks []jsToken) ([]int, error) {
	match := make([]int, len(toks))
	var open []int
	for i, t := range toks {
		match[i] = -1
		if t.kind != "punct" {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			open = append(open, i)
		case ")", "]", "}":
			if len(open) == 0 {
				return nil, fmt.Errorf("line %d: an unmatched %s", t.line, t.text)
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			match[o], match[i] = i, o
		}
	}
	if len(open) > 0 {
		return nil, fmt.Errorf("line %d: an unclosed %s", toks[open[0]].line, toks[open[0]].text)
	}
	return match, nil
}

func inList(list, word string) bool {
	for _, w := range strings.Fields(list) {
		if w == word {
			return true
		}
	}
	return false
}

// classify names what the bracket at i opens.
func classify(toks []jsToken, match []int, i int) string {
	text := func(k int) string {
		if k < 0 || k >= len(toks) {
			return ""
		}
		return toks[k].text
	}
	prev, after := toks[max(i-1, 0)], text(match[i]+1)
	if i == 0 {
		prev = jsToken{kind: "punct", text: ";"}
	}
	switch toks[i].text {
	case "[":
		return "array"
	case "{":
		if prev.kind == "punct" && !inList(") ] } ; =>", prev.text) || inList("return const let var export import", prev.text) {
			return "object"
		}
		return "block"
	}
	switch {
	case after == "=>" || prev.text == "function" || text(i-2) == "function":
		return "params"
	case prev.text == "for":
		return "head"
	case prev.text == "if" || prev.text == "while" || prev.text == "switch" || prev.text == "catch":
		return "cond"
	case prev.kind == "ident" && !jsKeywords[prev.text] && after == "{" && text(i-2) != ".":
		return "params" // a method, or a function declaration
	case prev.kind == "ident" && (!jsKeywords[prev.text] || prev.text == "import" || prev.text == "super"),
		prev.kind == "str", prev.text == ")", prev.text == "]", prev.text == "?.":
		return "call"
	}
	return "group"
}

// plainLint reports the golf in one file's JavaScript, as "line: what".
func plainLint(src string) ([]string, error) {
	toks, err := jsTokens(src)
	if err != nil {
		return nil, err
	}
	match, err := matchBrackets(toks)
	if err != nil {
		return nil, err
	}
	var found []string
	say := func(t jsToken, format string, args ...any) {
		found = append(found, fmt.Sprintf("%d: %s", t.line, fmt.Sprintf(format, args...)))
	}
	loopNames := forHeadNames(toks)
	frames := []*jsFrame{{kind: "top", close: len(toks)}}
	for i, t := range toks {
		f := frames[len(frames)-1]
		if t.kind == "ident" {
			checkName(toks, i, f, loopNames, say)
			if (f.kind == "top" || f.kind == "block") && (t.text == "let" || t.text == "const" || t.text == "var") {
				f.decl = true
			}
			continue
		}
		if t.kind != "punct" {
			continue
		}
		switch t.text {
		case "(", "[", "{":
			kind := classify(toks, match, i)
			inner := &jsFrame{kind: kind, close: match[i]}
			if kind != "block" && kind != "params" {
				inner.inherited = f.inherited + f.ternaries
			}
			if kind == "params" {
				checkDefaults(toks, match, i, say)
			}
			frames = append(frames, inner)
		case ")", "]", "}":
			frames = frames[:len(frames)-1]
		case ",":
			if f.kind == "group" || f.kind == "cond" || (f.kind == "top" || f.kind == "block") && !f.decl {
				say(t, "a comma expression: write one statement per step")
			}
			f.ternaries, f.colons = 0, 0
		case ";":
			f.ternaries, f.colons, f.decl = 0, 0, false
		case "?":
			f.ternaries++
			f.colons++
			if f.inherited+f.ternaries > 1 {
				say(t, "a ternary inside a ternary: write if/else")
			}
		case ":":
			if f.colons > 0 {
				f.colons--
			}
		}
	}
	return found, nil
}

// forHeadNames are the names a for head declares: for (let i = 0, n = 9; …)
// declares i and n, for (const key of keys) key.
func forHeadNames(toks []jsToken) map[string]bool {
	names := map[string]bool{}
	for i := 0; i+3 < len(toks); i++ {
		if toks[i].text != "for" || toks[i+1].text != "(" || !inList("let const var", toks[i+2].text) {
			continue
		}
		for k := i + 3; k < len(toks) && toks[k].text != ";" && toks[k].text != ")"; k++ {
			if toks[k].kind == "ident" && inList("let const var ,", toks[k-1].text) {
				names[toks[k].text] = true
			}
		}
	}
	return names
}

// checkName reports escape/unescape and a one-letter name that is not a
// loop index, a property name or an object key.
func checkName(toks []jsToken, i int, f *jsFrame, loopNames map[string]bool, say func(jsToken, string, ...any)) {
	t := toks[i]
	if i > 0 && (toks[i-1].text == "." || toks[i-1].text == "?.") {
		return
	}
	if t.text == "escape" || t.text == "unescape" {
		say(t, "%s(): deprecated; encode with encodeURIComponent or by hand", t.text)
	}
	key := i+1 < len(toks) && toks[i+1].text == ":" && f.kind == "object" && f.colons == 0
	if len(t.text) == 1 && !key && !loopNames[t.text] {
		say(t, "the one-letter name %q: name what it holds", t.text)
	}
}

// checkDefaults reports a parameter default that is more than one literal
// or name, {} or [].
func checkDefaults(toks []jsToken, match []int, open int, say func(jsToken, string, ...any)) {
	for k := open + 1; k < match[open]; k++ {
		if match[k] > k {
			k = match[k]
			continue
		}
		if toks[k].text != "=" {
			continue
		}
		end := k + 1
		for end < match[open] && toks[end].text != "," {
			if match[end] > end {
				end = match[end]
			}
			end++
		}
		value := toks[k+1 : end]
		simple := len(value) == 1 && value[0].kind != "punct" ||
			len(value) == 2 && (value[0].text == "{" || value[0].text == "[") ||
			len(value) == 2 && value[0].text == "-" && value[1].kind == "num"
		if !simple {
			say(toks[k], "a parameter default that computes: a local in disguise; declare it in the body")
		}
		k = end - 1
	}
}

// plainSources are the hand-written JavaScript the lint holds: the runtime's
// src/ and the hand-written parts of templates/js (each {{…}} read as 0).
func plainSources(t *testing.T) map[string]string {
	t.Helper()
	files, _ := filepath.Glob("src/*.js")
	templates, _ := filepath.Glob("../templates/js/*.mjs.tmpl")
	if len(files) < 10 || len(templates) < 3 {
		t.Fatalf("found %d sources and %d templates", len(files), len(templates))
	}
	action := regexp.MustCompile(`\{\{[^}]*\}\}`)
	out := map[string]string{}
	for _, name := range append(files, templates...) {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = action.ReplaceAllString(string(b), "0")
	}
	return out
}

// TestSourcesArePlain holds the hand-written runtime to plain JavaScript:
// esbuild shrinks it, so nothing is golfed by hand (see plainLint).
func TestSourcesArePlain(t *testing.T) {
	for name, src := range plainSources(t) {
		found, err := plainLint(src)
		if err != nil {
			t.Errorf("%s: cannot read it: %v", name, err)
		}
		for _, f := range found {
			t.Errorf("%s:%s", name, f)
		}
	}
}

// TestPlainLintCatchesGolf shows the lint what it must report and what it
// must let be.
func TestPlainLintCatchesGolf(t *testing.T) {
	for _, c := range []struct {
		src  string
		want string // "" when the source is plain
	}{
		{"if (ok) done(), reject(error);", "a comma expression"},
		{"const stop = () => (event.preventDefault(), event.stopPropagation());", "a comma expression"},
		{"const kind = type == 1 ? one : type == 2 ? two : other;", "a ternary inside a ternary"},
		{"const pick = (first) => (first ? (second ? one : two) : other);", "a ternary inside a ternary"},
		{"const post = (type, text = JSON.stringify(type)) => send(text);", "a parameter default that computes"},
		{"function route(link, href = link.getAttribute(\"href\")) {}", "a parameter default that computes"},
		{"const encoded = escape(char);", "escape()"},
		{"const first = list.map((x) => x.name);", "the one-letter name \"x\""},
		{"try { run(); } catch (e) { log(error); }", "the one-letter name \"e\""},
		{"let count = 0, total = 0;\nfor (let i = 0; i < list.length; i++) count += list[i];", ""},
		{"const frame = { v: VERSION, type: kind, ok: done ? yes : no };", ""},
		{"const options = (message = \"\", retries = -1, { signal } = {}) => [message.k, retries, signal];", ""},
		{"const re = /a,b ? c : d/g; const text = `x${a1 ? b1 : c1}, y`;", ""},
		{"send({ requestId: id, text: more ? part : \"\" }, \"*\");", ""},
	} {
		found, err := plainLint(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		got := strings.Join(found, "; ")
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%q: lint says %q, want %q", c.src, got, c.want)
		}
	}
}
