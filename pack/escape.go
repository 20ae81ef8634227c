package pack

import (
	"strings"
)

// An inlined script ends at the first "</script" the HTML tokenizer sees,
// and "<!--" followed later by "<script" switches the tokenizer into the
// "script data double escaped" state, where "</script>" no longer ends the
// element and the rest of the page is swallowed. esbuild escapes "</script"
// but never "<!--" or "<script", so escapeJS rewrites all three, by context:
// inside a string, template, regular expression or comment "<" becomes
// "\x3C" (the same character to JavaScript); in code, where "<" is the
// less-than operator, a space follows it. assemble then proves the result by
// parsing the output page and finding every inlined body intact.

// escapeJS returns js with no "<!--", "<script" or "</script" left
// (case-insensitively), and whether it changed anything.
func escapeJS(js string) (string, bool) {
	if !hasDanger(js) {
		return js, false
	}
	s := jsScanner{src: js}
	return s.run(), true
}

// hasDanger reports whether s holds a sequence that can end or escape a
// script element.
func hasDanger(s string) bool {
	if strings.IndexByte(s, 0) >= 0 {
		return true // the HTML parser turns NUL into U+FFFD
	}
	for i := strings.IndexByte(s, '<'); i >= 0; {
		if dangerAt(s, i) {
			return true
		}
		j := strings.IndexByte(s[i+1:], '<')
		if j < 0 {
			return false
		}
		i += 1 + j
	}
	return false
}

func dangerAt(s string, i int) bool {
	rest := s[i+1:]
	return strings.HasPrefix(rest, "!--") || hasPrefixFold(rest, "script") || hasPrefixFold(rest, "/script")
}

func hasPrefixFold(s, p string) bool {
	return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p)
}

type jsState int

const (
	stCode jsState = iota
	stSingle
	stDouble
	stTemplate
	stRegex
	stRegexClass
	stLineComment
	stBlockComment
)

type jsScanner struct {
	src   string
	out   strings.Builder
	state jsState
	// braces holds, for each open "${" of a template, the brace depth at
	// which its "}" returns to the template.
	braces []int
	depth  int
	// parens records for each open "(" whether it follows if/while/for/with
	// (a "/" after its ")" starts a regular expression).
	parens []bool
	// regexOK says whether a "/" in code starts a regular expression.
	regexOK bool
	word    strings.Builder
	// lastWord is the identifier or keyword just ended, until the next
	// code byte that is not blank.
	lastWord string
	// lit, when set, is called with the source range of each string
	// literal's text and each text chunk of a template literal (between
	// its backticks and ${…}), quotes excluded.
	lit      func(start, end int)
	litStart int
}

// literal reports the literal text that started at s.litStart and ends at
// end, to lit.
func (s *jsScanner) literal(end int) {
	if s.lit != nil {
		s.lit(s.litStart, end)
	}
}

// regexAfterWord reports whether a / after the word w starts a regexp.
func regexAfterWord(w string) bool {
	switch w {
	case "return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw", "instanceof", "yield", "await":
		return true
	}
	return false
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// run scans the whole source and returns it escaped, a byte at a time:
// hidden rewrites the bytes the HTML parser must not see, and a step per
// state (code, quoted, template, regex, comments) tracks the context.
func (s *jsScanner) run() string {
	src := s.src
	s.regexOK = true
	for i := 0; i < len(src); i++ {
		c := src[i]
		if s.hidden(src, i) {
			continue
		}
		s.out.WriteByte(c)
		switch s.state {
		case stCode:
			s.code(i)
		case stSingle, stDouble:
			i = s.quoted(i)
		case stTemplate:
			i = s.template(i)
		case stRegex, stRegexClass:
			i = s.regex(i)
		case stLineComment:
			if c == '\n' {
				s.state = stCode
				s.regexOK = true
			}
		case stBlockComment:
			if c == '/' && i > 0 && src[i-1] == '*' {
				s.state = stCode
			}
		}
	}
	return s.out.String()
}

// hidden writes a replacement for the byte at i when the HTML parser must
// not see it as written (a raw NUL, or a "<" that could start "</script",
// "<!--" or "<script"), and reports whether it did.
func (s *jsScanner) hidden(src string, i int) bool {
	switch {
	case src[i] == 0:
		// The HTML parser would read a raw NUL as U+FFFD.
		if s.state == stCode {
			s.out.WriteString("\uFFFD")
		} else {
			s.out.WriteString(`\x00`)
		}
		return true
	case src[i] == '<' && dangerAt(src, i):
		if s.state == stCode {
			s.out.WriteString("< ")
		} else {
			s.out.WriteString(`\x3C`)
		}
		s.regexOK = true
		return true
	}
	return false
}

// code steps over the code byte at i: it collects identifiers, enters
// literals and comments, and tracks whether a "/" next starts a regexp.
func (s *jsScanner) code(i int) {
	src, c := s.src, s.src[i]
	if isIdent(c) {
		s.word.WriteByte(c)
		return
	}
	if s.word.Len() > 0 {
		s.lastWord = s.word.String()
		s.word.Reset()
		s.regexOK = regexAfterWord(s.lastWord)
	}
	switch c {
	case ' ', '\t', '\n', '\r':
		return
	case '\'':
		s.state, s.litStart = stSingle, i+1
	case '"':
		s.state, s.litStart = stDouble, i+1
	case '`':
		s.state, s.litStart = stTemplate, i+1
	case '/':
		if i+1 < len(src) && src[i+1] == '/' {
			s.state = stLineComment
		} else if i+1 < len(src) && src[i+1] == '*' {
			s.state = stBlockComment
		} else if s.regexOK {
			s.state = stRegex
		} else {
			s.regexOK = true
		}
		return
	case '(':
		w := s.lastWord
		s.parens = append(s.parens, w == "if" || w == "while" || w == "for" || w == "with")
		s.regexOK = true
	case ')':
		kw := false
		if n := len(s.parens); n > 0 {
			kw = s.parens[n-1]
			s.parens = s.parens[:n-1]
		}
		s.regexOK = kw
	case ']':
		s.regexOK = false
	case '{':
		s.depth++
		s.regexOK = true
	case '}':
		if n := len(s.braces); n > 0 && s.braces[n-1] == s.depth {
			s.braces = s.braces[:n-1]
			s.state, s.litStart = stTemplate, i+1
			return
		}
		s.depth--
		s.regexOK = true
	case '+', '-':
		// a++ / b: after a postfix operator "/" divides; rare
		// enough in minified output to treat "/" as a regex start.
		s.regexOK = true
	default:
		s.regexOK = true
	}
	s.lastWord = ""
}

// escaped copies the byte after a backslash at i and returns the index of
// the last byte consumed.
func (s *jsScanner) escaped(i int) int {
	if i+1 < len(s.src) {
		i++
		s.out.WriteByte(s.src[i])
	}
	return i
}

// quoted steps over byte i of a '…' or "…" string and returns the index of
// the last byte consumed.
func (s *jsScanner) quoted(i int) int {
	switch c := s.src[i]; c {
	case '\\':
		return s.escaped(i)
	case '\'', '"':
		if (c == '\'') == (s.state == stSingle) {
			s.literal(i)
			s.state = stCode
			s.regexOK = false
		}
	case '\n':
		s.literal(i)
		s.state = stCode
	}
	return i
}

// template steps over byte i of a template literal's text and returns the
// index of the last byte consumed; "${" enters code until its "}".
func (s *jsScanner) template(i int) int {
	switch s.src[i] {
	case '\\':
		return s.escaped(i)
	case '`':
		s.literal(i)
		s.state = stCode
		s.regexOK = false
	case '$':
		if i+1 < len(s.src) && s.src[i+1] == '{' {
			s.literal(i)
			i++
			s.out.WriteByte('{')
			s.depth++
			s.braces = append(s.braces, s.depth)
			s.state = stCode
			s.regexOK = true
		}
	}
	return i
}

// regex steps over byte i of a regular expression literal and returns the
// index of the last byte consumed.
func (s *jsScanner) regex(i int) int {
	switch s.src[i] {
	case '\\':
		return s.escaped(i)
	case '[':
		s.state = stRegexClass
	case ']':
		if s.state == stRegexClass {
			s.state = stRegex
		}
	case '/':
		if s.state == stRegex {
			s.state = stCode
			s.regexOK = false
		}
	case '\n':
		s.state = stCode
	}
	return i
}

// escapeCSS makes sure no "</style" is left in a stylesheet: "\/" is "/"
// inside a CSS string, and the sequence cannot occur in CSS code.
//
// A raw NUL becomes U+FFFD, as both the HTML and the CSS parser read it, so
// the text the browser hashes for the CSP is the text written.
func escapeCSS(css string) string {
	css = strings.ReplaceAll(css, "\x00", "\uFFFD")
	if !strings.Contains(strings.ToLower(css), "</style") {
		return css
	}
	var b strings.Builder
	for i := 0; i < len(css); i++ {
		if css[i] == '<' && hasPrefixFold(css[i+1:], "/style") {
			b.WriteString(`<\/`)
			i++
			continue
		}
		b.WriteByte(css[i])
	}
	return b.String()
}
