package store

import (
	"errors"
	"strings"

	"github.com/ncruces/go-sqlite3"
)

// LIKE and GLOB, as SQLite's func.c matches them (patternCompare): the
// same reading of UTF-8 (sqlite3Utf8Read, invalid sequences included),
// ASCII-only case folding for LIKE, ESCAPE, GLOB's [...] classes, text
// that ends at its first NUL, and blobs that match nothing (the driver's
// SQLite is built with SQLITE_LIKE_DOESNT_MATCH_BLOBS). The matcher is a
// transliteration; what it adds is the budget, which every loop spends,
// so that a pattern that backtracks over megabytes stops at the limit.

// compareInfo is func.c's: the wildcards, and whether case is ignored.
type compareInfo struct {
	matchAll, matchOne, matchSet uint32
	noCase                       bool
}

var (
	likeInfo = compareInfo{matchAll: '%', matchOne: '_', noCase: true}
	globInfo = compareInfo{matchAll: '*', matchOne: '?', matchSet: '['}
)

// patternCompare's results; patStopped is the budget's.
const (
	patMatch = iota
	patNoMatch
	patNoWildcardMatch
	patStopped
)

// utf8Trans1 is sqlite3Utf8Trans1: the value bits of a lead byte from 0xC0.
var utf8Trans1 = [64]byte{
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17,
	0x18, 0x19, 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x1f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
	0x00, 0x01, 0x02, 0x03, 0x00, 0x01, 0x00, 0x00,
}

// utf8Read is sqlite3Utf8Read on z from i (z ends with a NUL): the
// character and the offset after it.
func utf8Read(z []byte, i int) (uint32, int) {
	c := uint32(z[i])
	i++
	if c >= 0xc0 {
		c = uint32(utf8Trans1[c-0xc0])
		for isCont(z[i]) {
			c = c<<6 + uint32(0x3f&z[i])
			i++
		}
		if c < 0x80 || c&0xFFFFF800 == 0xD800 || c&0xFFFFFFFE == 0xFFFE {
			c = 0xFFFD
		}
	}
	return c, i
}

// skipUTF8 is SQLITE_SKIP_UTF8.
func skipUTF8(z []byte, i int) int {
	c := z[i]
	i++
	if c >= 0xc0 {
		for isCont(z[i]) {
			i++
		}
	}
	return i
}

// cString is v's text as C reads it: up to its first NUL, NUL-terminated.
func cString(v sqlite3.Value) []byte {
	s := v.Text()
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	return append([]byte(s), 0)
}

func asciiLower(c uint32) uint32 {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func asciiUpper(c uint32) uint32 {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

var (
	errPatternTooComplex = errors.New("LIKE or GLOB pattern too complex")
	errEscape            = errors.New("ESCAPE expression must be a single character")
)

// likeFunc is like(P, S), like(P, S, E) and glob(P, S): whether S matches
// the pattern P (the operator S LIKE P calls like(P, S)).
func likeFunc(ci compareInfo) sqlite3.ScalarFunction {
	return func(fctx sqlite3.Context, arg ...sqlite3.Value) {
		info := ci // ESCAPE may turn a wildcard off for this call
		if arg[0].Type() == sqlite3.BLOB || arg[1].Type() == sqlite3.BLOB {
			fctx.ResultInt(0)
			return
		}
		if len(arg[0].RawText()) > fctx.Conn().Limit(sqlite3.LIMIT_LIKE_PATTERN_LENGTH, -1) {
			fctx.ResultError(errPatternTooComplex)
			return
		}
		escape := info.matchSet
		if len(arg) == 3 {
			if arg[2].Type() == sqlite3.NULL {
				fctx.ResultNull()
				return
			}
			esc := cString(arg[2])
			if utf8CharLen(esc) != 1 {
				fctx.ResultError(errEscape)
				return
			}
			escape, _ = utf8Read(esc, 0)
			if escape == info.matchAll {
				info.matchAll = 0
			}
			if escape == info.matchOne {
				info.matchOne = 0
			}
		}
		if isNull(arg[0], arg[1]) {
			fctx.ResultNull()
			return
		}
		m := matcher{info: info, escape: escape, b: newBudget(fctx)}
		switch m.compare(cString(arg[0]), 0, cString(arg[1]), 0) {
		case patMatch:
			fctx.ResultInt(1)
		case patStopped:
			fctx.ResultError(errStopped)
		default:
			fctx.ResultInt(0)
		}
	}
}

// utf8CharLen is sqlite3Utf8CharLen(z, -1).
func utf8CharLen(z []byte) int {
	n := 0
	for i := 0; z[i] != 0; n++ {
		i = skipUTF8(z, i)
	}
	return n
}

// matcher is one call's patternCompare.
type matcher struct {
	info   compareInfo
	escape uint32 // the ESCAPE character (LIKE) or '[' (GLOB): func.c's matchOther
	b      *budget
}

// compare is patternCompare(pat+p, str+s).
func (m *matcher) compare(pat []byte, p int, str []byte, s int) int {
	escaped := -1 // one past the last escaped pattern character
	for {
		if m.b.spend(1) {
			return patStopped
		}
		var c uint32
		if c, p = utf8Read(pat, p); c == 0 {
			break
		}
		if c == m.info.matchAll {
			return m.afterAll(pat, p, str, s)
		}
		if c == m.escape {
			if m.info.matchSet == 0 {
				if c, p = utf8Read(pat, p); c == 0 {
					return patNoMatch
				}
				escaped = p
			} else {
				p0 := p
				var ok bool
				if p, s, ok = m.class(pat, p, str, s); !ok {
					return patNoMatch
				}
				if m.b.spend(p - p0) {
					return patStopped
				}
				continue
			}
		}
		var c2 uint32
		c2, s = utf8Read(str, s)
		if c == c2 {
			continue
		}
		if m.info.noCase && c < 0x80 && c2 < 0x80 && asciiLower(c) == asciiLower(c2) {
			continue
		}
		if c == m.info.matchOne && p != escaped && c2 != 0 {
			continue
		}
		return patNoMatch
	}
	if str[s] == 0 {
		return patMatch
	}
	return patNoMatch
}

// afterAll is patternCompare past a '%' or '*' at pat[p-1].
func (m *matcher) afterAll(pat []byte, p int, str []byte, s int) int {
	var c uint32
	for {
		c, p = utf8Read(pat, p)
		if c != m.info.matchAll && (c != m.info.matchOne || m.info.matchOne == 0) {
			break
		}
		if c == m.info.matchOne {
			var c2 uint32
			if c2, s = utf8Read(str, s); c2 == 0 {
				return patNoWildcardMatch
			}
		}
		if m.b.spend(1) {
			return patStopped
		}
	}
	if c == 0 {
		return patMatch
	}
	if c == m.escape {
		if m.info.matchSet == 0 {
			if c, p = utf8Read(pat, p); c == 0 {
				return patNoWildcardMatch
			}
		} else {
			// "[...]" right after the '*': try it at every character.
			for str[s] != 0 {
				if r := m.compare(pat, p-1, str, s); r != patNoMatch {
					return r
				}
				s = skipUTF8(str, s)
			}
			return patNoWildcardMatch
		}
	}
	if c < 0x80 {
		return m.scanASCII(c, pat, p, str, s)
	}
	for {
		var c2 uint32
		if c2, s = utf8Read(str, s); c2 == 0 {
			return patNoWildcardMatch
		}
		if m.b.spend(1) {
			return patStopped
		}
		if c2 != c {
			continue
		}
		if r := m.compare(pat, p, str, s); r != patNoMatch {
			return r
		}
	}
}

// scanASCII tries the rest of the pattern (pat[p:]) after each occurrence
// of the ASCII character c in str from s (either case for LIKE): func.c's
// strcspn loop.
func (m *matcher) scanASCII(c uint32, pat []byte, p int, str []byte, s int) int {
	lo, up := byte(c), byte(c)
	if m.info.noCase {
		lo, up = byte(asciiLower(c)), byte(asciiUpper(c))
	}
	for {
		start := s
		for str[s] != 0 && str[s] != lo && str[s] != up {
			s++
		}
		if m.b.spend(s - start + 1) {
			return patStopped
		}
		if str[s] == 0 {
			return patNoWildcardMatch
		}
		s++
		if r := m.compare(pat, p, str, s); r != patNoMatch {
			return r
		}
	}
}

// class matches GLOB's "[...]" at pat[p:] (past the '[') against the next
// character of str: the offsets after both, and whether it matched.
func (m *matcher) class(pat []byte, p int, str []byte, s int) (int, int, bool) {
	var c, c2, prior uint32
	seen, invert := false, false
	if c, s = utf8Read(str, s); c == 0 {
		return p, s, false
	}
	c2, p = utf8Read(pat, p)
	if c2 == '^' {
		invert = true
		c2, p = utf8Read(pat, p)
	}
	if c2 == ']' {
		seen = c == ']'
		c2, p = utf8Read(pat, p)
	}
	for c2 != 0 && c2 != ']' {
		if c2 == '-' && pat[p] != ']' && pat[p] != 0 && prior > 0 {
			c2, p = utf8Read(pat, p)
			if c >= prior && c <= c2 {
				seen = true
			}
			prior = 0
		} else {
			if c == c2 {
				seen = true
			}
			prior = c2
		}
		c2, p = utf8Read(pat, p)
	}
	return p, s, c2 != 0 && seen != invert
}

// unhexFunc is unhex(X, Y): the blob X's pairs of hex digits encode, where
// the characters of Y may stand between pairs; NULL when anything else
// does. SQLite looks each such character up in Y (X × Y); this reads Y into
// a set once.
func unhexFunc(fctx sqlite3.Context, arg ...sqlite3.Value) {
	if isNull(arg...) {
		fctx.ResultNull()
		return
	}
	hex, pass := cString(arg[0]), arg[1].Text()
	allowed := map[uint32]bool{}
	z := append([]byte(pass), 0)
	for i := 0; i < len(pass); {
		var ch uint32
		ch, i = utf8Read(z, i)
		allowed[ch] = true
	}
	out, ok := unhexBytes(hex, allowed)
	if !ok {
		fctx.ResultNull()
		return
	}
	fctx.ResultBlob(out)
}

// unhexBytes is unhex's loop over the NUL-terminated hex.
func unhexBytes(hex []byte, allowed map[uint32]bool) ([]byte, bool) {
	out := make([]byte, 0, len(hex)/2)
	for i := 0; hex[i] != 0; {
		c := hex[i]
		for !isHexDigit(c) {
			var ch uint32
			ch, i = utf8Read(hex, i)
			if !allowed[ch] {
				return nil, false
			}
			if c = hex[i]; c == 0 {
				return out, true
			}
		}
		d := hex[i+1]
		if !isHexDigit(d) {
			return nil, false
		}
		i += 2
		out = append(out, hexValue(c)<<4|hexValue(d))
	}
	return out, true
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexValue(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}
