package jsonscan

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/snuggen/snuggen/internal/ascii"
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
		return ascii.EqualFold(a, b)
	}
	return LowerJS(a) == LowerJS(b)
}

// InLowerJS reports whether LowerJS(s) is one of list, whose entries are
// lower-case ASCII. It does not allocate.
func InLowerJS(list []string, s string) bool {
	if isASCII(s) {
		for _, x := range list {
			if ascii.EqualFold(s, x) {
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

// isASCII reads s eight bytes at a time (the compiler merges the byte loads
// of load64 into one): header names are short, and this is on every
// net-request's path.
func isASCII(s string) bool {
	for len(s) >= 8 {
		if load64(s)&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	if len(s) >= 4 {
		return (load32(s)|load32(s[len(s)-4:]))&0x80808080 == 0
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

func load32(s string) uint32 {
	_ = s[3]
	return uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24
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

// IsASCII reports whether s holds only ASCII bytes: then LowerJS is ASCII
// lowercasing, and two keys can only be equal lowercased at equal lengths.
func IsASCII(s string) bool { return isASCII(s) }

// FoldMark returns one of 64 bits, chosen from an ASCII s's length and its
// first and last bytes lowercased. Two ASCII strings that ascii.EqualFold
// calls equal have the same mark, so ASCII keys whose marks are pairwise
// distinct hold no case-insensitive repeat: a validator pays the pairwise
// comparison only when two marks meet.
func FoldMark(s string) uint64 {
	if s == "" {
		return 1
	}
	h := uint64(len(s))<<16 | uint64(ascii.LowerByte(s[0]))<<8 | uint64(ascii.LowerByte(s[len(s)-1]))
	return 1 << (h * 0x9E3779B97F4A7C15 >> 58)
}
