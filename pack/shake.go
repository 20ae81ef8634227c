package pack

import (
	"strings"
	"sync"

	"github.com/snuggen/snuggen/internal/ascii"
)

// The runtime an app pays for: the build injects a runtime with only the
// capability members (snug.ask, snug.db, snug.net, snug.saveFile, and ask's
// onPartial option) the app's page and code reference, built by snuggen gen
// with esbuild's tree shaking (runtime-js/dist/shaken), unless the app reaches snug in a way a reading
// of its text cannot follow; then it gets the whole runtime, and a note says
// why.

// snugUse is what the page (markup, inline handlers, bundled scripts) does
// with the global snug.
type snugUse struct {
	members map[string]bool // snug.X, snug?.X, const {X} = snug
	dynamic string          // why the whole runtime is needed: the first such use, "" for none
}

// findSnugUse reads the built text of the page (everything but the runtime
// and the head the build writes) for references to the global snug. It is a
// reading of text, not of a syntax tree, and it errs one way only: a use it
// cannot place (snug[x], snug passed or stored, "snug" as a string, x.snug
// on anything but the global object, x["snug"]) makes the use dynamic. A
// lookup it cannot see at all (Reflect.get(globalThis, "sn" + "ug")) is out
// of its reach: docs/decisions.md. Members named
// in strings or comments count as used (a larger runtime, never a missing
// member).
func findSnugUse(texts []string) snugUse {
	u := snugUse{members: map[string]bool{}}
	for _, t := range texts {
		// Parts of the runtime an app reaches without naming a member of
		// snug: an <a download> (attribute or property) goes to saveFile,
		// ask's onPartial option needs its reader.
		for word, member := range wordMembers {
			if strings.Contains(t, word) {
				u.members[member] = true
			}
		}
		l := ascii.Lower(t)
		if mayLinkLower(l) {
			u.members["openUrl"] = true
		}
		if mayFormLower(l) {
			u.members["forms"] = true
		}
		for i := 0; ; {
			k := strings.Index(t[i:], "snug")
			if k < 0 {
				break
			}
			at := i + k
			end := at + len("snug")
			i = end
			if at > 0 && (isIdent(t[at-1]) || t[at-1] == '-') || end < len(t) && (isIdent(t[end]) || t[end] == '-') {
				continue // part of a longer name or word, or of a CSS name (--snug-accent)
			}
			if why := u.one(t, at, end); why != "" && u.dynamic == "" {
				u.dynamic = why
			}
		}
	}
	return u
}

// wordMembers maps a word of the page to the runtime member it needs.
var wordMembers = map[string]string{"download": "saveFile", "onPartial": "onPartial"}

// linkWords are the plain words (lower case) that may put a link on the
// page or leave it, with the HTML-string sinks (htmlSinks) through which
// agent-written Markdown or HTML becomes links: a link pointed in script
// (href), a navigation (location) and download. mayLink adds the ones with a shape: <a and <area in markup,
// document.write(ln)(, window.open(, and createElement of an a or area
// element or of a tag that is no literal.
var linkWords = []string{"href", "location", "download"}

// htmlSinks are the plain words (lower case) of the HTML-string sinks,
// through which a string becomes elements (agent-written Markdown or HTML,
// a template): innerHTML, outerHTML, insertAdjacentHTML, DOMParser,
// createContextualFragment, setHTMLUnsafe and parseHTMLUnsafe, srcdoc.
// document.write(ln)( is a call, matched with its shape.
var htmlSinks = []string{"innerhtml", "outerhtml", "insertadjacenthtml", "domparser",
	"createcontextualfragment", "htmlunsafe", "srcdoc"}

// mayLink reports whether text t may make or follow a link, so that the app
// needs the runtime's link routing (links.js, with openUrl): a link the
// sandbox would follow replaces the app with an error page. It errs one
// way only: a false positive costs the app the routing's bytes, never a
// dead link (docs/decisions.md, "Link routing is kept for an app that may
// show a link"). ASCII case is ignored. It reads t in a few linear passes
// over one lower-cased copy: a case-insensitive regexp of these
// alternatives cost a quarter of a build's instructions.
func mayLink(t string) bool { return mayLinkLower(ascii.Lower(t)) }

// mayLinkLower is mayLink of the lower-cased text l. It reads l once: at
// each byte, the words (linkWords, htmlSinks) and shapes that start with
// it; 17 passes of strings.Index were a fifth of choosing the runtime.
func mayLinkLower(l string) bool {
	words := linkStarts()
	for i := 0; i < len(l); i++ {
		s := l[i:]
		for _, w := range words[l[i]] {
			if strings.HasPrefix(s, w) {
				return true
			}
		}
		switch l[i] {
		case 'o':
			if strings.HasPrefix(s, "open") && wordStartAt(l, i) && isCall(s[len("open"):]) {
				return true
			}
		case 'w':
			if strings.HasPrefix(s, "write") && wordStartAt(l, i) &&
				(isCall(s[len("write"):]) || strings.HasPrefix(s, "writeln") && isCall(s[len("writeln"):])) {
				return true
			}
		case '<':
			// <a or <area, then a space, / or >.
			for _, tag := range []string{"<a", "<area"} {
				if rest, ok := strings.CutPrefix(s, tag); ok && rest != "" && (isSpace(rest[0]) || rest[0] == '/' || rest[0] == '>') {
					return true
				}
			}
		}
	}
	return createsElement(l, "a", "area")
}

// linkStarts files linkWords and htmlSinks under their first byte.
var linkStarts = sync.OnceValue(func() *[256][]string {
	var t [256][]string
	for _, words := range [][]string{linkWords, htmlSinks} {
		for _, w := range words {
			t[w[0]] = append(t[w[0]], w)
		}
	}
	return &t
})

// wordStartAt reports whether l[i:] starts a word: no word byte before it.
func wordStartAt(l string, i int) bool { return i == 0 || !isWordByte(l[i-1]) }

func isCall(rest string) bool { return strings.HasPrefix(skipSpace(rest), "(") }

// createsElement reports whether lower-cased text l calls createElement or
// createElementNS with one of tags as a literal, or with a tag that is no
// literal.
func createsElement(l string, tags ...string) bool {
	for _, fn := range []string{"createelement", "createelementns"} {
		if anyAt(l, fn, false, func(rest string) bool {
			rest = skipSpace(rest)
			if !strings.HasPrefix(rest, "(") {
				return false
			}
			rest = skipSpace(rest[1:])
			if rest == "" {
				return false
			}
			if q := rest[0]; q == '"' || q == '\'' || q == '`' {
				for _, tag := range tags {
					if len(rest) > len(tag)+1 && rest[1:1+len(tag)] == tag && isQuote(rest[1+len(tag)]) {
						return true
					}
				}
				return false
			}
			return true // a tag that is no literal
		}) {
			return true
		}
	}
	return false
}

// mayForm reports whether text t may put a form on the page or submit one,
// so that the app needs the runtime's forms (runtime-js/src/forms.js: the
// sandbox drops every submission, the runtime fires the submit event): the
// word form or forms in any case (<form> in markup or in a string of
// markup, createElement("form"), h("form"), a button's .form, document.forms),
// requestSubmit, an HTML-string sink or document.write(ln)( (agent-written
// HTML may hold a form), createElement of a tag that is no literal (a
// framework), or code the build cannot read: a script or module from a
// URL (src= or from/import( with http: https: or //, an import map). It
// errs one way only: a false positive costs the app the forms' bytes (about
// 300 B min+gzip), a form cannot reach the page in a way none of these
// names.
func mayForm(t string) bool { return mayFormLower(ascii.Lower(t)) }

// mayFormLower is mayForm of the lower-cased text l.
func mayFormLower(l string) bool {
	word := func(rest string) bool {
		rest = strings.TrimPrefix(rest, "s")
		return rest == "" || !isWordByte(rest[0])
	}
	if anyAt(l, "form", true, word) || strings.Contains(l, "requestsubmit") || strings.Contains(l, "importmap") {
		return true
	}
	for _, w := range htmlSinks {
		if strings.Contains(l, w) {
			return true
		}
	}
	for _, fn := range []string{"write", "writeln"} {
		if anyAt(l, fn, true, isCall) {
			return true
		}
	}
	remote := func(rest string) bool {
		rest = skipSpace(rest)
		if rest != "" && (rest[0] == '=' || rest[0] == '(') {
			rest = skipSpace(rest[1:])
		}
		if rest != "" && isQuote(rest[0]) {
			rest = rest[1:]
		}
		return strings.HasPrefix(rest, "http:") || strings.HasPrefix(rest, "https:") || strings.HasPrefix(rest, "//")
	}
	for _, w := range []string{"src", "from", "import"} {
		if anyAt(l, w, true, remote) {
			return true
		}
	}
	return createsElement(l, "form")
}

// anyAt reports whether some occurrence of word in s is followed by a rest
// that ok accepts (and, with wordStart, is not preceded by a word byte).
func anyAt(s, word string, wordStart bool, ok func(rest string) bool) bool {
	for i := 0; ; {
		k := strings.Index(s[i:], word)
		if k < 0 {
			return false
		}
		at := i + k
		i = at + 1
		if wordStart && at > 0 && isWordByte(s[at-1]) {
			continue
		}
		if ok(s[at+len(word):]) {
			return true
		}
	}
}

// isSpace is \s of Go's regexp syntax.
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

func isQuote(c byte) bool { return c == '"' || c == '\'' || c == '`' }

func skipSpace(s string) string {
	for s != "" && isSpace(s[0]) {
		s = s[1:]
	}
	return s
}

// globalObjects are the names under which the global snug is also reached.
var globalObjects = []string{"globalThis", "window", "self"}

// one classifies the occurrence t[at:end] of snug; it returns why it needs
// the whole runtime, or "".
func (u *snugUse) one(t string, at, end int) string {
	before, after, next := byteAt(t, at-1), byteAt(t, end), byteAt(t, end+1)
	start := at
	if before == '.' {
		// x.snug: the global only through the global object's names.
		var ok bool
		if start, ok = globalRef(t, at); !ok {
			return "a property named snug (" + excerpt(t, at, end) + ") may be the runtime reached another way"
		}
	}
	// What precedes the reference (snug or globalThis.snug), spaces skipped:
	// "=" after a pattern is a destructuring.
	p := start
	for p > 0 && (t[p-1] == ' ' || t[p-1] == '\n' || t[p-1] == '\t' || t[p-1] == '\r') {
		p--
	}
	assigned := p > 0 && t[p-1] == '='
	switch {
	// Tests of whether the runtime is there hand nothing on: snug?a:b,
	// snug&&…, !snug, typeof snug, if(snug).
	case after == '?' && next != '.' && next != '?',
		after == '&' && next == '&',
		before == '!' && start == at,
		strings.HasSuffix(t[:start], "typeof "),
		after == ')' && strings.HasSuffix(t[:start], "if("):
		return ""
	case after == '.' || after == '?' && next == '.':
		return u.member(t, at, end)
	case (before == '"' || before == '\'' || before == '`') && after == before:
		if at >= 2 && t[at-2] == '[' && end+1 < len(t) && t[end+1] == ']' {
			return `snug is named by a string in a computed member (` + excerpt(t, at, end) + `)`
		}
		return "" // the word as a string: a value, not a way to the runtime
	case after == ':' && (before == '{' || before == ',' || before == '"'):
		return "" // an object key, or <meta name="snug:…">
	case after == '[':
		return "snug is read with a computed member (" + excerpt(t, at, end) + ")"
	case assigned:
		if members, ok := destructured(t[:p-1]); ok {
			for _, m := range members {
				u.members[m] = true
			}
			return ""
		}
		return "snug is assigned or destructured in a way the build cannot follow (" + excerpt(t, at, end) + ")"
	case after == 0 || after == ' ' || after == '\n' || after == '\t' || after == '\r' || after == '<' || after == '"' || after == '\'' || after == '`':
		return "" // text: a word in a string, a comment or the markup
	}
	return "snug is used as a value (" + excerpt(t, at, end) + "), so any member may be reached"
}

// byteAt is t[i], or 0 outside t.
func byteAt(t string, i int) byte {
	if i < 0 || i >= len(t) {
		return 0
	}
	return t[i]
}

// excerpt is the text around t[at:end], spaces folded, for a reason.
func excerpt(t string, at, end int) string {
	lo, hi := max(0, at-24), min(len(t), end+24)
	return strings.Join(strings.Fields(t[lo:hi]), " ")
}

// globalRef returns where the reference starts for the x.snug at at when
// x is one of the global object's names (globalThis.snug), and false for
// any other property named snug.
func globalRef(t string, at int) (int, bool) {
	g := ""
	for _, name := range globalObjects {
		if strings.HasSuffix(t[:at-1], name) && (at-1-len(name) == 0 || !isIdent(t[at-2-len(name)])) {
			g = name
		}
	}
	if g == "" {
		return 0, false
	}
	start := at - 1 - len(g)
	if start > 0 && t[start-1] == '.' {
		return 0, false
	}
	return start, true
}

// member records the member read in snug.name or snug?.name at t[at:end];
// a computed one (snug.[…], not the end of a sentence) is the reason it
// returns.
func (u *snugUse) member(t string, at, end int) string {
	after := t[end]
	j := end + 1
	if after == '?' {
		j++
	}
	k := j
	for k < len(t) && isIdent(t[k]) {
		k++
	}
	if k == j {
		if isText(after, t, end) {
			return ""
		}
		return "snug is read with a computed member (" + excerpt(t, at, end) + ")"
	}
	u.members[t[j:k]] = true
	return ""
}

// isText reports whether "snug." at end is the end of a sentence: the dot is
// followed by a space, a quote, markup or nothing.
func isText(after byte, t string, end int) bool {
	if after != '.' {
		return false
	}
	if end+1 >= len(t) {
		return true
	}
	switch t[end+1] {
	case ' ', '\n', '\t', '\r', '<', '"', '\'', '`':
		return true
	}
	return false
}

// destructured reads the object pattern that ends s ("…{ask,db:d}") and
// returns its keys; ok is false for a pattern it cannot read in full (a
// rest element, a computed key) or when s does not end with one.
func destructured(s string) (keys []string, ok bool) {
	s = strings.TrimRight(s, " \t\n\r")
	if !strings.HasSuffix(s, "}") {
		return nil, false
	}
	depth := 0
	open := -1
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '}', ']', ')':
			depth++
		case '{', '[', '(':
			depth--
		}
		if depth == 0 {
			open = i
			break
		}
	}
	if open < 0 || s[open] != '{' {
		return nil, false
	}
	body := s[open+1 : len(s)-1]
	depth = 0
	startKey := true
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '{' || c == '[' || c == '(':
			if depth == 0 && startKey {
				return nil, false // a computed key
			}
			depth++
		case c == '}' || c == ']' || c == ')':
			depth--
		case depth == 0 && c == ',':
			startKey = true
		case depth == 0 && startKey && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
		case depth == 0 && startKey && c == '.':
			return nil, false // ...rest
		case depth == 0 && startKey && (c == '"' || c == '\''):
			j := strings.IndexByte(body[i+1:], c)
			if j < 0 {
				return nil, false
			}
			keys = append(keys, body[i+1:i+1+j])
			i += j + 1
			startKey = false
		case depth == 0 && startKey && isIdent(c):
			j := i
			for j < len(body) && isIdent(body[j]) {
				j++
			}
			keys = append(keys, body[i:j])
			i = j - 1
			startKey = false
		case depth == 0 && startKey:
			return nil, false
		}
	}
	return keys, true
}
