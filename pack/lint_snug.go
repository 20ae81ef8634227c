package pack

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/snuggen/snuggen/frame"
)

// The snug checks find uses of the runtime that cannot work and that models
// are likely to write: an event name no host sends (snug.on("theme")), the
// theme object compared with a mode (ready.theme === "dark"), and fields
// read from snug.ready without awaiting it. Each is a warning naming the
// right one. They read the app's own code as text, comments blanked.

var (
	// snug.on("x" / snug.off('x'
	onEventRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bsnug\s*\.\s*(?:on|off)\s*\(\s*(["'` + "`" + `])([^"'` + "`" + `\n]{0,64})(["'` + "`" + `])`)
	})
	// x.theme === "dark", "light" != x.theme
	themeCmpRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\.theme\s*[!=]==?\s*["'` + "`" + `](?:dark|light)["'` + "`" + `]|["'` + "`" + `](?:dark|light)["'` + "`" + `]\s*[!=]==?\s*[\w$.]*\.theme\b[^.\w$]`)
	})
	// snug.theme, snug.locale: not properties of snug
	snugFieldRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bsnug\s*\.\s*(theme|locale|instanceId)\b`) })
	// snug.ready.theme: a field of the promise
	readyFieldRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bsnug\s*\.\s*ready\s*\.\s*(theme|capabilities|locale|instanceId)\b`)
	})
	// snug.on("theme-change", ({ mode }) =>: the data is { theme }
	themeDataRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\bsnug\s*\.\s*on\s*\(\s*["'` + "`" + `]` + regexp.QuoteMeta(frame.EventThemeChange) + `["'` + "`" + `]\s*,\s*(?:async\s*)?\(?\s*\{\s*(mode|tokens)\b`)
	})
)

// eventGuesses maps event names models try to the one that works.
var eventGuesses = map[string]string{
	"theme": frame.EventThemeChange, "themechange": frame.EventThemeChange, "theme-changed": frame.EventThemeChange,
	"themeChange": frame.EventThemeChange, "theme_change": frame.EventThemeChange, "color-scheme": frame.EventThemeChange,
	"colorscheme": frame.EventThemeChange, "mode": frame.EventThemeChange, "dark-mode": frame.EventThemeChange,
	"ready": frame.TypeHostReady, "host-ready": frame.TypeHostReady, "hostready": frame.TypeHostReady, "init": frame.TypeHostReady,
	"connected": frame.TypeHostReady, "load": frame.TypeHostReady,
	"visibilitychange": frame.EventVisibility, "visible": frame.EventVisibility, "hidden": frame.EventVisibility,
	"show": frame.EventVisibility, "hide": frame.EventVisibility,
	"connection": frame.EventConnection, "connection-change": frame.EventConnection,
}

// lintSnug runs the snug checks over one unit of the app's code.
func (b *builder) lintSnug(u lintUnit) {
	if !strings.Contains(u.code, "snug") && !strings.Contains(u.code, ".theme") {
		return
	}
	code, quoted := blankComments(u.code)
	// Only a match that starts in code counts (not one inside a string).
	inCode := func(m []int) bool { return !quoted[m[0]] }
	at := func(off int) (string, int, int, string) {
		if u.file == "" {
			line, col, text := position(b.html, b.lines, u.offset+off)
			return b.pageName, line, col, text
		}
		src := []byte(u.code)
		line, col, text := position(src, lineStarts(src), off)
		return b.src.rel(u.file), line, col, text
	}
	warn := func(off int, msg, why, fix string) {
		d := Diagnostic{Severity: SeverityWarning, Code: "snug.api", Message: msg, Why: why, Fix: fix}
		d.File, d.Line, d.Column, d.LineText = at(off)
		b.add(d)
	}
	known := append([]string{frame.TypeHostReady}, frame.HostEvents...)
	for _, m := range onEventRE().FindAllStringSubmatchIndex(code, -1) {
		name := code[m[4]:m[5]]
		if !inCode(m) || code[m[2]:m[3]] != code[m[6]:m[7]] || slices.Contains(known, name) || strings.Contains(name, "${") {
			continue
		}
		fix := fmt.Sprintf("listen for one of %s", quoteAll(known))
		switch right := eventGuesses[name]; {
		case right == frame.TypeHostReady:
			fix = fmt.Sprintf("await snug.ready (it resolves with host-ready), or snug.on(%q, …) for every later one", right)
		case right == frame.EventThemeChange:
			fix = fmt.Sprintf(`use snug.on(%q, ({ theme }) => …): theme.mode is "light" or "dark"`, right)
		case right != "":
			fix = fmt.Sprintf("use snug.on(%q, …)", right)
		case slices.Contains(frame.AppEvents, name):
			fix = fmt.Sprintf("%q goes from the app to the host (the runtime sends it); the host's events are %s", name, quoteAll(known))
		}
		warn(m[0], fmt.Sprintf("snug.on(%q) listens for an event no host sends", name),
			"hosts send only the events of the protocol's table; others never come", fix)
	}
	for _, m := range themeCmpRE().FindAllStringIndex(code, -1) {
		if !inCode(m) || strings.HasSuffix(strings.TrimRight(code[:m[0]], " \t\n"), "snug") {
			continue // snug.theme has its own warning
		}
		warn(m[0], "the theme is compared with a mode, so the comparison is always false",
			`the theme is an object, { mode: "light" | "dark", tokens }`,
			`compare theme.mode === "dark", or style :root[data-theme="dark"] (the runtime sets it)`)
	}
	for _, m := range snugFieldRE().FindAllStringSubmatchIndex(code, -1) {
		if !inCode(m) {
			continue
		}
		field := code[m[2]:m[3]]
		warn(m[0], fmt.Sprintf("snug.%s is undefined", field), "the host's answer to the app's announce carries it, not the snug object",
			fmt.Sprintf("read it from the host's answer: const { %s } = await snug.ready", field))
	}
	for _, m := range readyFieldRE().FindAllStringSubmatchIndex(code, -1) {
		if !inCode(m) {
			continue
		}
		field := code[m[2]:m[3]]
		warn(m[0], fmt.Sprintf("snug.ready.%s is undefined", field), "snug.ready is a Promise",
			fmt.Sprintf("await it: const { %s } = await snug.ready", field))
	}
	for _, m := range themeDataRE().FindAllStringSubmatchIndex(code, -1) {
		if !inCode(m) {
			continue
		}
		warn(m[0], fmt.Sprintf("%s is not a field of the %s event's data", code[m[2]:m[3]], frame.EventThemeChange),
			"its data is { theme }, and the theme holds mode and tokens",
			fmt.Sprintf("destructure the theme: snug.on(%q, ({ theme }) => … theme.mode …)", frame.EventThemeChange))
	}
}

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
