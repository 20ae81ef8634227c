package jsonscan

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The frame rules say "a header whose lowercase name is in STRIP_HEADERS" and
// "header names are unique case-insensitively". The JS validator reads both
// with String.prototype.toLowerCase, so Go must lowercase the same way:
// Unicode's full default lowercase mapping, not simple case folding
// (strings.EqualFold calls "ſ" and "s" equal, toLowerCase does not) and not
// strings.ToLower (which maps "İ" to "i", toLowerCase to "i̇"). The two
// differ from unicode.ToLower in exactly two places: U+0130 and the final
// sigma rule.

// LowerJS returns s lowercased as JavaScript's toLowerCase does: each code
// point through unicode.ToLower, except U+0130 (to "i" U+0307) and a capital
// sigma in final position (to "ς"). An ASCII s costs no allocation when it
// is already lower case.
func LowerJS(s string) string {
	ascii, upper := true, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	if ascii {
		if !upper {
			return s
		}
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(len(s))
	for i, r := range s {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(s, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// EqualLowerJS reports whether LowerJS(a) == LowerJS(b), without allocating
// when both are ASCII.
func EqualLowerJS(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return len(a) == len(b) && equalASCIIFold(a, b)
	}
	return LowerJS(a) == LowerJS(b)
}

// InLowerJS reports whether LowerJS(s) is one of list, whose entries are
// lower-case ASCII. It does not allocate.
func InLowerJS(list []string, s string) bool {
	if isASCII(s) {
		for _, x := range list {
			if len(x) == len(s) && equalASCIIFold(s, x) {
				return true
			}
		}
		return false
	}
	for _, x := range list {
		if lowerEqualsASCII(s, x) {
			return true
		}
	}
	return false
}

// equalASCIIFold reports whether ASCII a and b of equal length are equal
// ignoring ASCII case.
func equalASCIIFold(a, b string) bool {
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// lowerEqualsASCII reports whether LowerJS(s) == x for a lower-case ASCII x.
// Neither special mapping can produce ASCII alone: U+0130 becomes "i"
// followed by U+0307, and a sigma stays Greek.
func lowerEqualsASCII(s, x string) bool {
	j := 0
	for _, r := range s {
		if r == 'İ' || j >= len(x) {
			return false
		}
		if unicode.ToLower(r) != rune(x[j]) {
			return false
		}
		j++
	}
	return j == len(x)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// finalSigma is Unicode's Final_Sigma condition for the sigma at byte i of
// s: a cased letter comes before it and none after it, skipping
// case-ignorable characters on both sides.
func finalSigma(s string, i int) bool {
	before := false
	for j := i; j > 0; {
		r, n := utf8.DecodeLastRuneInString(s[:j])
		j -= n
		if caseIgnorable(r) {
			continue
		}
		before = cased(r)
		break
	}
	if !before {
		return false
	}
	for _, r := range s[i+len("Σ"):] {
		if caseIgnorable(r) {
			continue
		}
		return !cased(r)
	}
	return true
}

func cased(r rune) bool {
	return unicode.IsLower(r) || unicode.IsUpper(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable: Mn, Me, Cf, Lm, Sk, and the
// Word_Break classes MidLetter, MidNumLet and Single_Quote.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '·', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}
