package pack

import (
	"regexp"
	"strings"
	"sync"
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
		if mayLink(t) {
			u.members["openUrl"] = true
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

// linkWord matches what may put a link on the page or leave it: a link in
// markup (<a, <area), an HTML-string sink through which agent-written
// Markdown or HTML becomes links (innerHTML, outerHTML, insertAdjacentHTML,
// document.write, DOMParser, createContextualFragment, setHTMLUnsafe and
// parseHTMLUnsafe, srcdoc), a link made or pointed in script (href, an a or
// area element, or an element whose tag is no literal), window.open, a
// navigation (location) and download. Compiled on first use.
var linkWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)<(a|area)[\s/>]|href|innerhtml|outerhtml|insertadjacenthtml|\bwrite(ln)?\s*\(|domparser|createcontextualfragment|htmlunsafe|srcdoc|createelement(ns)?\s*\(\s*([^"'\x60\s]|["'\x60](a|area)["'\x60])|\bopen\s*\(|location|download`)
})

// mayLink reports whether text t may make or follow a link, so that the app
// needs the runtime's link routing (links.js, with openUrl): a link the
// sandbox would follow replaces the app with an error page. It errs one
// way only: a false positive costs the app the routing's bytes, never a
// dead link (docs/decisions.md, "Link routing is kept for an app that may
// show a link").
func mayLink(t string) bool { return linkWord().MatchString(t) }

// globalObjects are the names under which the global snug is also reached.
var globalObjects = []string{"globalThis", "window", "self"}

// one classifies the occurrence t[at:end] of snug; it returns why it needs
// the whole runtime, or "".
func (u *snugUse) one(t string, at, end int) string {
	before := byte(0)
	if at > 0 {
		before = t[at-1]
	}
	after := byte(0)
	if end < len(t) {
		after = t[end]
	}
	excerpt := func() string {
		lo, hi := max(0, at-24), min(len(t), end+24)
		return strings.Join(strings.Fields(t[lo:hi]), " ")
	}
	start := at
	if before == '.' {
		// x.snug: the global only through the global object's names.
		g := ""
		for _, name := range globalObjects {
			if strings.HasSuffix(t[:at-1], name) && (at-1-len(name) == 0 || !isIdent(t[at-2-len(name)])) {
				g = name
			}
		}
		if g == "" {
			return "a property named snug (" + excerpt() + ") may be the runtime reached another way"
		}
		start = at - 1 - len(g)
		if start > 0 && t[start-1] == '.' {
			return "a property named snug (" + excerpt() + ") may be the runtime reached another way"
		}
	}
	next := byte(0)
	if end+1 < len(t) {
		next = t[end+1]
	}
	// What precedes the reference (snug or globalThis.snug), spaces skipped:
	// "=" after a pattern is a destructuring.
	p := start
	for p > 0 && (t[p-1] == ' ' || t[p-1] == '\n' || t[p-1] == '\t' || t[p-1] == '\r') {
		p--
	}
	assigned := p > 0 && t[p-1] == '='
	pattern := func() string {
		if members, ok := destructured(t[:p-1]); ok {
			for _, m := range members {
				u.members[m] = true
			}
			return ""
		}
		return "snug is assigned or destructured in a way the build cannot follow (" + excerpt() + ")"
	}
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
			return "snug is read with a computed member (" + excerpt() + ")"
		}
		u.members[t[j:k]] = true
		return ""
	case (before == '"' || before == '\'' || before == '`') && after == before:
		if at >= 2 && t[at-2] == '[' && end+1 < len(t) && t[end+1] == ']' {
			return `snug is named by a string in a computed member (` + excerpt() + `)`
		}
		return "" // the word as a string: a value, not a way to the runtime
	case after == ':' && (before == '{' || before == ',' || before == '"'):
		return "" // an object key, or <meta name="snug:…">
	case after == '[':
		return "snug is read with a computed member (" + excerpt() + ")"
	case assigned:
		return pattern()
	case after == 0 || after == ' ' || after == '\n' || after == '\t' || after == '\r' || after == '<' || after == '"' || after == '\'' || after == '`':
		return "" // text: a word in a string, a comment or the markup
	}
	return "snug is used as a value (" + excerpt() + "), so any member may be reached"
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
