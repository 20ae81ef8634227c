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

func (s *jsScanner) run() string {
	src := s.src
	s.regexOK = true
	lastWord := ""
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c == 0 {
			// The HTML parser would read a raw NUL as U+FFFD.
			if s.state == stCode {
				s.out.WriteString("\uFFFD")
			} else {
				s.out.WriteString(`\x00`)
			}
			continue
		}
		if c == '<' && dangerAt(src, i) {
			if s.state == stCode {
				s.out.WriteString("< ")
			} else {
				s.out.WriteString(`\x3C`)
			}
			s.regexOK = true
			continue
		}
		s.out.WriteByte(c)
		switch s.state {
		case stCode:
			if isIdent(c) {
				s.word.WriteByte(c)
				continue
			}
			if s.word.Len() > 0 {
				lastWord = s.word.String()
				s.word.Reset()
				s.regexOK = regexAfterWord(lastWord)
			}
			switch c {
			case ' ', '\t', '\n', '\r':
				continue
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
				continue
			case '(':
				s.parens = append(s.parens, lastWord == "if" || lastWord == "while" || lastWord == "for" || lastWord == "with")
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
					continue
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
			lastWord = ""
		case stSingle, stDouble:
			switch c {
			case '\\':
				if i+1 < len(src) {
					i++
					s.out.WriteByte(src[i])
				}
			case '\'':
				if s.state == stSingle {
					s.literal(i)
					s.state = stCode
					s.regexOK = false
				}
			case '"':
				if s.state == stDouble {
					s.literal(i)
					s.state = stCode
					s.regexOK = false
				}
			case '\n':
				s.literal(i)
				s.state = stCode
			}
		case stTemplate:
			switch c {
			case '\\':
				if i+1 < len(src) {
					i++
					s.out.WriteByte(src[i])
				}
			case '`':
				s.literal(i)
				s.state = stCode
				s.regexOK = false
			case '$':
				if i+1 < len(src) && src[i+1] == '{' {
					s.literal(i)
					i++
					s.out.WriteByte('{')
					s.depth++
					s.braces = append(s.braces, s.depth)
					s.state = stCode
					s.regexOK = true
				}
			}
		case stRegex, stRegexClass:
			switch c {
			case '\\':
				if i+1 < len(src) {
					i++
					s.out.WriteByte(src[i])
				}
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
