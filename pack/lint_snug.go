package pack

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// The snug checks find uses of the runtime that cannot work and that models
// are likely to write: an event name no host sends (snug.on("theme")), the
// theme object compared with a mode (ready.theme === "dark"), and fields
// read from snug.ready without awaiting it. Each is a warning naming the
// right one. They read the app's own code as text, comments blanked.

// The uses are found by scanning, not by regular expressions: the five
// regexps these scanners replace cost about 2.5M instructions per build of
// bench/build-app (their compilation in every process, and a backtracking
// search from every byte of the app's code); TestSnugScansAreTheRegexps
// holds each scanner to its regexp's matches, submatches included.

// snugDot matches `\bsnug\s*\.\s*` at code[p:] (p is where "snug" starts)
// and returns the offset after it.
func snugDot(code string, p int) (int, bool) {
	if p > 0 && isWordByte(code[p-1]) {
		return 0, false
	}
	i := skipSpaces(code, p+len("snug"))
	if i >= len(code) || code[i] != '.' {
		return 0, false
	}
	return skipSpaces(code, i+1), true
}

// eachSnug calls match at every "snug" in code from left to right, as a
// regexp's FindAll does: after a match (end > 0) the search goes on at its
// end, and the matches are collected in order.
func eachSnug(code string, match func(p int) []int) [][]int {
	var out [][]int
	for from := 0; ; {
		n := strings.Index(code[from:], "snug")
		if n < 0 {
			return out
		}
		p := from + n
		if m := match(p); m != nil {
			out = append(out, m)
			from = m[1]
		} else {
			from = p + 1
		}
	}
}

// skipSpaces skips the regexp class \s: ASCII space, tab, newline, form
// feed and carriage return.
func skipSpaces(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// wordAt reports whether one of words is at s[i:] followed by a word
// boundary (\b), and returns the offset after it.
func wordAt(s string, i int, words ...string) (int, bool) {
	for _, w := range words {
		if strings.HasPrefix(s[i:], w) {
			j := i + len(w)
			return j, j == len(s) || !isWordByte(s[j])
		}
	}
	return 0, false
}

// findOnEvent finds snug.on("x" and snug.off('x': the regexp
// \bsnug\s*\.\s*(?:on|off)\s*\(\s*(["'`])([^"'`\n]{0,64})(["'`]).
func findOnEvent(code string) [][]int {
	return eachSnug(code, func(p int) []int {
		i, ok := snugDot(code, p)
		switch {
		case !ok:
			return nil
		case strings.HasPrefix(code[i:], "on"):
			i += 2
		case strings.HasPrefix(code[i:], "off"):
			i += 3
		default:
			return nil
		}
		if i = skipSpaces(code, i); i >= len(code) || code[i] != '(' {
			return nil
		}
		q := skipSpaces(code, i+1)
		if q >= len(code) || !isQuote(code[q]) {
			return nil
		}
		j := q + 1
		for n := 0; n < 64 && j < len(code) && !isQuote(code[j]) && code[j] != '\n'; n++ {
			_, size := utf8.DecodeRuneInString(code[j:])
			j += size
		}
		if j >= len(code) || !isQuote(code[j]) {
			return nil
		}
		return []int{p, j + 1, q, q + 1, q + 1, j, j, j + 1}
	})
}

// findThemeCmp finds x.theme === "dark" and "light" != x.theme: the regexp
// \.theme\s*[!=]==?\s*["'`](?:dark|light)["'`]|["'`](?:dark|light)["'`]\s*[!=]==?\s*[\w$.]*\.theme\b[^.\w$].
func findThemeCmp(code string) [][]int {
	// cmp matches \s*[!=]==?\s* at code[i:].
	cmp := func(i int) (int, bool) {
		i = skipSpaces(code, i)
		if i+1 >= len(code) || code[i] != '!' && code[i] != '=' || code[i+1] != '=' {
			return 0, false
		}
		i += 2
		if i < len(code) && code[i] == '=' {
			i++
		}
		return skipSpaces(code, i), true
	}
	// mode matches ["'`](?:dark|light)["'`] at code[i:].
	mode := func(i int) (int, bool) {
		if i >= len(code) || !isQuote(code[i]) {
			return 0, false
		}
		for _, w := range []string{"dark", "light"} {
			if j := i + 1 + len(w); strings.HasPrefix(code[i+1:], w) && j < len(code) && isQuote(code[j]) {
				return j + 1, true
			}
		}
		return 0, false
	}
	var out [][]int
	for p := 0; p < len(code); p++ {
		if code[p] == '.' && strings.HasPrefix(code[p:], ".theme") {
			if i, ok := cmp(p + len(".theme")); ok {
				if end, ok := mode(i); ok {
					out = append(out, []int{p, end})
					p = end - 1
				}
			}
			continue
		}
		i, ok := mode(p)
		if !ok {
			continue
		}
		if i, ok = cmp(i); !ok {
			continue
		}
		// [\w$.]* then .theme, a boundary and one rune outside the class:
		// the run of the class must end with ".theme".
		j := i
		for j < len(code) && (isWordByte(code[j]) || code[j] == '$' || code[j] == '.') {
			j++
		}
		if j-i < len(".theme") || code[j-len(".theme"):j] != ".theme" || j >= len(code) {
			continue
		}
		_, size := utf8.DecodeRuneInString(code[j:])
		out = append(out, []int{p, j + size})
		p = j + size - 1
	}
	return out
}

// findSnugField finds snug.theme, snug.locale and snug.instanceId: the
// regexp \bsnug\s*\.\s*(theme|locale|instanceId)\b.
func findSnugField(code string) [][]int {
	return eachSnug(code, func(p int) []int {
		i, ok := snugDot(code, p)
		if !ok {
			return nil
		}
		if j, ok := wordAt(code, i, "theme", "locale", "instanceId"); ok {
			return []int{p, j, i, j}
		}
		return nil
	})
}

// findReadyField finds snug.ready.theme and the like: the regexp
// \bsnug\s*\.\s*ready\s*\.\s*(theme|capabilities|locale|instanceId)\b.
func findReadyField(code string) [][]int {
	return eachSnug(code, func(p int) []int {
		i, ok := snugDot(code, p)
		if !ok || !strings.HasPrefix(code[i:], "ready") {
			return nil
		}
		if i = skipSpaces(code, i+len("ready")); i >= len(code) || code[i] != '.' {
			return nil
		}
		i = skipSpaces(code, i+1)
		if j, ok := wordAt(code, i, "theme", "capabilities", "locale", "instanceId"); ok {
			return []int{p, j, i, j}
		}
		return nil
	})
}

// findThemeData finds snug.on("theme-change", ({ mode }) =>: the regexp
// \bsnug\s*\.\s*on\s*\(\s*["'`]theme-change["'`]\s*,\s*(?:async\s*)?\(?\s*\{\s*(mode|tokens)\b.
func findThemeData(code string) [][]int {
	return eachSnug(code, func(p int) []int {
		i, ok := snugDot(code, p)
		if !ok || !strings.HasPrefix(code[i:], "on") {
			return nil
		}
		if i = skipSpaces(code, i+2); i >= len(code) || code[i] != '(' {
			return nil
		}
		if i = skipSpaces(code, i+1); i >= len(code) || !isQuote(code[i]) || !strings.HasPrefix(code[i+1:], frame.EventThemeChange) {
			return nil
		}
		if i += 1 + len(frame.EventThemeChange); i >= len(code) || !isQuote(code[i]) {
			return nil
		}
		if i = skipSpaces(code, i+1); i >= len(code) || code[i] != ',' {
			return nil
		}
		i = skipSpaces(code, i+1)
		if strings.HasPrefix(code[i:], "async") {
			i = skipSpaces(code, i+len("async"))
		}
		if i < len(code) && code[i] == '(' {
			i++
		}
		if i = skipSpaces(code, i); i >= len(code) || code[i] != '{' {
			return nil
		}
		i = skipSpaces(code, i+1)
		if j, ok := wordAt(code, i, "mode", "tokens"); ok {
			return []int{p, j, i, j}
		}
		return nil
	})
}

// isDatasetTheme reports whether before, the code up to a ".theme", ends
// with an element's dataset (el.dataset.theme, dataset?.theme): the
// data-theme attribute, a string "light" or "dark", not the theme object.
func isDatasetTheme(before string) bool {
	before = strings.TrimSuffix(strings.TrimRight(before, " \t\n"), "?")
	before = strings.TrimRight(before, " \t\n")
	if !strings.HasSuffix(before, "dataset") {
		return false
	}
	rest := before[:len(before)-len("dataset")]
	return rest == "" || !isWordByte(rest[len(rest)-1]) && rest[len(rest)-1] != '$'
}

// eventGuess returns the event that works for a name models try ("" for
// a name it does not know).
func eventGuess(name string) string {
	switch name {
	case "theme", "themechange", "theme-changed", "themeChange", "theme_change", "color-scheme", "colorscheme", "mode", "dark-mode":
		return frame.EventThemeChange
	case "ready", "host-ready", "hostready", "init", "connected", "load":
		return frame.TypeHostReady
	case "visibilitychange", "visible", "hidden", "show", "hide":
		return frame.EventVisibility
	case "connection", "connection-change":
		return frame.EventConnection
	}
	return ""
}

// unitPos is the file, line, column and line text of offset off in u.
func (b *builder) unitPos(u lintUnit, off int) (string, int, int, string) {
	if u.file == "" {
		line, col, text := position(b.html, b.lines, u.offset+off)
		return b.pageName, line, col, text
	}
	src := []byte(u.code)
	line, col, text := position(src, lineStarts(src), off)
	return b.src.rel(u.file), line, col, text
}

// eventFix is the fix for listening to the event name no host sends: the
// host event it likely means, or the list of known ones.
func eventFix(name string, known []string) string {
	switch right := eventGuess(name); {
	case right == frame.TypeHostReady:
		return fmt.Sprintf("await snug.ready (it resolves with host-ready), or snug.on(%q, …) for every later one", right)
	case right == frame.EventThemeChange:
		return fmt.Sprintf(`use snug.on(%q, ({ theme }) => …): theme.mode is "light" or "dark"`, right)
	case right != "":
		return fmt.Sprintf("use snug.on(%q, …)", right)
	case slices.Contains(frame.AppEvents, name):
		return fmt.Sprintf("%q goes from the app to the host (the runtime sends it); the host's events are %s", name, quoteAll(known))
	}
	return fmt.Sprintf("listen for one of %s", quoteAll(known))
}

// lintSnug runs the snug checks over one unit of the app's code.
func (b *builder) lintSnug(u lintUnit) {
	if !strings.Contains(u.code, "snug") && !strings.Contains(u.code, ".theme") {
		return
	}
	code, quoted := blankComments(u.code)
	b.lintCreateTwice(u, code, quoted)
	// Only a match that starts in code counts (not one inside a string).
	inCode := func(m []int) bool { return !quoted[m[0]] }
	warn := func(off int, msg, why, fix string) {
		d := Diagnostic{Severity: SeverityWarning, Code: "snug.api", Message: msg, Why: why, Fix: fix}
		d.File, d.Line, d.Column, d.LineText = b.unitPos(u, off)
		b.add(d)
	}
	known := append([]string{frame.TypeHostReady}, frame.HostEvents...)
	for _, m := range findOnEvent(code) {
		name := code[m[4]:m[5]]
		if !inCode(m) || code[m[2]:m[3]] != code[m[6]:m[7]] || slices.Contains(known, name) || strings.Contains(name, "${") {
			continue
		}
		warn(m[0], fmt.Sprintf("snug.on(%q) listens for an event no host sends", name),
			"hosts send only the events of the protocol's table; others never come", eventFix(name, known))
	}
	for _, m := range findThemeCmp(code) {
		if !inCode(m) || strings.HasSuffix(strings.TrimRight(code[:m[0]], " \t\n"), "snug") {
			continue // snug.theme has its own warning
		}
		if dot := m[0] + strings.LastIndex(code[m[0]:m[1]], ".theme"); isDatasetTheme(code[:dot]) {
			continue // the data-theme attribute the runtime sets is a mode
		}
		warn(m[0], "the theme is compared with a mode, so the comparison is always false",
			`the theme is an object, { mode: "light" | "dark", tokens }`,
			`compare theme.mode === "dark", or style :root[data-theme="dark"] (the runtime sets it)`)
	}
	for _, m := range findSnugField(code) {
		if !inCode(m) {
			continue
		}
		field := code[m[2]:m[3]]
		warn(m[0], fmt.Sprintf("snug.%s is undefined", field), "the host's answer to the app's announce carries it, not the snug object",
			fmt.Sprintf("read it from the host's answer: const { %s } = await snug.ready", field))
	}
	for _, m := range findReadyField(code) {
		if !inCode(m) {
			continue
		}
		field := code[m[2]:m[3]]
		warn(m[0], fmt.Sprintf("snug.ready.%s is undefined", field), "snug.ready is a Promise",
			fmt.Sprintf("await it: const { %s } = await snug.ready", field))
	}
	if strings.Contains(code, "user_version") {
		for _, m := range userVersionWrite().FindAllStringIndex(code, -1) {
			if !quoted[m[0]] {
				continue // SQL is a string
			}
			warn(m[0], "PRAGMA user_version = … is refused by the host's store (DB_SQL_ERROR)",
				"the database header is the host's; each exec commits on its own, so a migration of several statements can stop half-way",
				`keep the version in a table and run each migration step with its update in one transaction: snug.db.script("alter table …; update meta set version = 2")`)
		}
	}
	for _, m := range findThemeData(code) {
		if !inCode(m) {
			continue
		}
		warn(m[0], fmt.Sprintf("%s is not a field of the %s event's data", code[m[2]:m[3]], frame.EventThemeChange),
			"its data is { theme }, and the theme holds mode and tokens",
			fmt.Sprintf("destructure the theme: snug.on(%q, ({ theme }) => … theme.mode …)", frame.EventThemeChange))
	}
}

// userVersionWrite finds a write of PRAGMA user_version (= v or (v)), the
// SQLite migration idiom; compiled on first use, for code that names it.
var userVersionWrite = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bpragma\s+(?:main\s*\.\s*)?user_version\s*[=(]`)
})

func quoteAll(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// blankComments returns code with the text of its // and /* */ comments
// replaced by spaces (newlines kept), so offsets and lines stay where they
// were, and which bytes are inside a string or template literal (its
// quotes excluded). A regular expression literal is not told from a
// division, which can only make a comment-looking part of one count as code.
func blankComments(code string) (string, []bool) {
	b := []byte(code)
	quoted := make([]bool, len(b)+1)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"' || c == '\'' || c == '`':
			for i++; i < len(b) && b[i] != c; i++ {
				quoted[i] = true
				if b[i] == '\\' {
					i++
					if i < len(b) {
						quoted[i] = true
					}
				} else if b[i] == '\n' && c != '`' {
					break
				}
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '/':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case c == '/' && i+1 < len(b) && b[i+1] == '*':
			for ; i < len(b) && !(b[i] == '*' && i+1 < len(b) && b[i+1] == '/'); i++ {
				if b[i] != '\n' {
					b[i] = ' '
				}
			}
			if i+1 < len(b) {
				b[i], b[i+1] = ' ', ' '
				i++
			}
		}
	}
	return string(b), quoted
}
