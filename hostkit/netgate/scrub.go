package netgate

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"html"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/snuggen/snuggen/internal/ascii"
)

// redacted replaces every secret value in what goes back to the app.
const redacted = "[REDACTED]"

// The scrub (III §14.5) looks for every configured secret in what goes back
// to the app, however a reflecting upstream spelled it. It does not keep a
// list of spellings of the whole secret (there are too many: every
// character of it can be escaped its own way); it reads the answer the ways
// an app could read it and looks for a few patterns in each reading:
//
//   - Readings (views). View 0 is the answer folded: ASCII lower case,
//     compatibility forms mapped (full-width and mathematical letters, the
//     Kelvin sign, long s), and whitespace, NUL and '+' dropped (MIME line
//     breaks, hex with spaces, UTF-16, form-encoded spaces). View k+1 is view
//     k's text with one round of escapes decoded, then folded: JSON and JS
//     escapes (\/, \uXXXX, \u{…}, \xHH, octal, \c), HTML character
//     references (named, decimal, hex; with or without ';'; any case, any
//     leading zeros), percent escapes (%XX, %uXXXX). Rounds stop when nothing
//     decodes, at most maxRounds, so double encodings (%252F, JSON of HTML)
//     are read too.
//   - Patterns, folded the same way: the secret, reversed and in ROT13;
//     its hex; its base64 (the
//     standard and URL alphabets) and base32 (standard and hex alphabets) at
//     every byte offset, so the secret is found inside the encoding of a
//     longer text such as the whole "Authorization: Bearer …" line. Only the
//     characters determined by the secret's bytes alone are matched; the one
//     or two at each edge, shared with the neighbours, are not.
//
// Every byte of a view remembers the span of the original it came from, so a
// match in any view redacts the exact original bytes (the escapes
// included). The check runs without that bookkeeping first; only an answer
// that holds a secret pays for it.
type scrubber struct {
	patterns [][]byte // folded, deduplicated, each at least 2 bytes
	longest  int      // the longest pattern, in folded bytes
	// first maps a pattern's first two bytes to 1 + its group in groups,
	// the patterns that start with them: one pass over a view finds every
	// pattern.
	first  [1 << 16]uint16
	groups [][]int
}

// maxRounds bounds the decoding rounds: three covers a triple encoding
// (%25252F); each round only shrinks the text.
const maxRounds = 4

// inflateBudget bounds how far the gate inflates compressed data inside an
// answer that carried a credential while looking for the secret in it.
const inflateBudget = 8 << 20

func newScrubber(secrets []string) *scrubber {
	s := &scrubber{}
	add := func(p []byte) {
		f := foldBytes(p)
		if len(f) < 2 || slices.ContainsFunc(s.patterns, func(q []byte) bool { return bytes.Equal(q, f) }) {
			return
		}
		k := uint16(f[0])<<8 | uint16(f[1])
		if s.first[k] == 0 {
			s.groups = append(s.groups, nil)
			s.first[k] = uint16(len(s.groups))
		}
		s.groups[s.first[k]-1] = append(s.groups[s.first[k]-1], len(s.patterns))
		s.patterns = append(s.patterns, f)
		s.longest = max(s.longest, len(f))
	}
	for _, sec := range secrets {
		b := []byte(sec)
		add(b)
		add(reversed(b))
		add(rot13(b))
		add([]byte(hex.EncodeToString(b)))
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			for r := 0; r < 3; r++ {
				add(core(b, r, 6, enc.EncodeToString))
			}
		}
		for _, enc := range []*base32.Encoding{base32.StdEncoding.WithPadding(base32.NoPadding), base32.HexEncoding.WithPadding(base32.NoPadding)} {
			for r := 0; r < 5; r++ {
				add(core(b, r, 5, enc.EncodeToString))
			}
		}
	}
	return s
}

// reversed is b backwards, byte by byte (a secret is ASCII in practice).
func reversed(b []byte) []byte {
	out := slices.Clone(b)
	slices.Reverse(out)
	return out
}

// rot13 rotates ASCII letters by 13.
func rot13(b []byte) []byte {
	out := slices.Clone(b)
	for i, c := range out {
		switch {
		case c >= 'a' && c <= 'z':
			out[i] = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			out[i] = 'A' + (c-'A'+13)%26
		}
	}
	return out
}

// core is the part of encode(x+secret) that depends on the secret's bytes
// only, for any x of length r (mod the group size): the characters whose
// bits lie wholly inside the secret.
func core(secret []byte, r, bits int, encode func([]byte) string) []byte {
	buf := make([]byte, r+len(secret))
	copy(buf[r:], secret)
	e := encode(buf)
	start := (8*r + bits - 1) / bits
	end := 8 * (r + len(secret)) / bits
	return []byte(e[start:end])
}

// foldedLen is the length of a secret once folded; a config refuses a
// secret whose folded form is too short to be found safely.
func foldedLen(secret string) int { return len(foldBytes([]byte(secret))) }

// margin is how many bytes past the cap the gate reads so that a secret
// straddling the cap, in its widest escaped spelling, is read whole.
func (s *scrubber) margin() int {
	if len(s.patterns) == 0 {
		return 0
	}
	return 16*s.longest + 64
}

// view is one reading of the answer. start[i] and end[i] are the span of the
// original that produced b[i]; both are nil when not tracked.
type view struct {
	b          []byte
	start, end []int32
}

// readings calls f with view 0 and each decoded view until f returns true or
// no escape is left; track asks for the spans.
func readings(src []byte, track bool, f func(view) bool) {
	d := view{b: src}
	if track {
		d.start, d.end = identitySpans(len(src))
	}
	for round := 0; ; round++ {
		if f(fold(d, track)) {
			return
		}
		if round+1 >= maxRounds || !slices.ContainsFunc(d.b, func(c byte) bool { return escapeStart[c] }) {
			return
		}
		next, changed := decode(d, track)
		if !changed {
			return
		}
		d = next
	}
}

func identitySpans(n int) ([]int32, []int32) {
	start, end := make([]int32, n), make([]int32, n)
	for i := range start {
		start[i], end[i] = int32(i), int32(i+1)
	}
	return start, end
}

// scan calls f with the bounds of every pattern found in v (overlapping
// ones included) until f returns true.
func (s *scrubber) scan(v []byte, f func(a, z int) bool) bool {
	for i := 0; i+1 < len(v); i++ {
		g := s.first[uint16(v[i])<<8|uint16(v[i+1])]
		if g == 0 {
			continue
		}
		for _, pi := range s.groups[g-1] {
			if p := s.patterns[pi]; bytes.HasPrefix(v[i:], p) && f(i, i+len(p)) {
				return true
			}
		}
	}
	return false
}

// found reports whether b holds a secret in any reading.
func (s *scrubber) found(b []byte) bool {
	if len(s.patterns) == 0 || len(b) == 0 {
		return false
	}
	hit := false
	readings(b, false, func(v view) bool {
		hit = s.scan(v.b, func(int, int) bool { return true })
		return hit
	})
	return hit
}

// scrub replaces every secret, in any reading, with [REDACTED]; it reports
// whether it replaced anything.
func (s *scrubber) scrub(b []byte) ([]byte, bool) {
	changed := false
	for pass := 0; pass < 4 && s.found(b); pass++ {
		var spans [][2]int32
		readings(b, true, func(v view) bool {
			s.scan(v.b, func(a, z int) bool {
				spans = append(spans, [2]int32{v.start[a], v.end[z-1]})
				return false
			})
			return false
		})
		b = redact(b, spans)
		changed = true
	}
	return b, changed
}

// scrubString is scrub for a header value or a message.
func (s *scrubber) scrubString(v string) string {
	if len(s.patterns) == 0 {
		return v
	}
	out, _ := s.scrub([]byte(v))
	return string(out)
}

// redact replaces the union of spans in b with [REDACTED], one marker per
// run of overlapping or touching spans.
func redact(b []byte, spans [][2]int32) []byte {
	if len(spans) == 0 {
		return b
	}
	slices.SortFunc(spans, func(x, y [2]int32) int { return int(x[0] - y[0]) })
	out := make([]byte, 0, len(b))
	pos := 0
	for i := 0; i < len(spans); {
		a, z := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= z; i++ {
			z = max(z, spans[i][1])
		}
		out = append(out, b[pos:a]...)
		out = append(out, redacted...)
		pos = int(z)
	}
	return append(out, b[pos:]...)
}

// cutPartial drops a tail that could be the start of a secret in any
// reading, and an escape left unfinished at the end: an answer cut at the
// cap must not end with the first half of a token.
func (s *scrubber) cutPartial(b []byte) []byte {
	if len(s.patterns) == 0 {
		return b
	}
	for i := max(0, len(b)-16); i < len(b); i++ {
		if c := b[i]; c == '\\' || c == '&' || c == '%' {
			b = b[:i]
			break
		}
	}
	// A partial secret can only sit in the last margin bytes (its widest
	// spelling), so only they are read.
	for range 8 {
		base := max(0, len(b)-s.margin())
		cut := len(b)
		readings(b[base:], true, func(v view) bool {
			for _, p := range s.patterns {
				for k := min(len(p)-1, len(v.b)); k > 0; k-- {
					if bytes.HasSuffix(v.b, p[:k]) {
						cut = min(cut, base+int(v.start[len(v.b)-k]))
						break
					}
				}
			}
			return false
		})
		if cut == len(b) {
			return b
		}
		b = b[:cut]
	}
	return b
}

// escapeStart marks the bytes an escape starts with.
var escapeStart = [256]bool{'\\': true, '&': true, '%': true}

// asciiFold maps an ASCII byte to its folded form: lower case, or 0 for
// the bytes a folded view drops (whitespace, NUL and '+').
var asciiFold = func() (t [utf8.RuneSelf]byte) {
	for c := range t {
		t[c] = byte(c)
		if c >= 'A' && c <= 'Z' {
			t[c] = byte(c) + 'a' - 'A'
		}
	}
	for _, c := range []byte{' ', '\t', '\n', '\v', '\f', '\r', 0, '+'} {
		t[c] = 0
	}
	return t
}()

func foldBytes(b []byte) []byte { return fold(view{b: b}, false).b }

// fold lower-cases ASCII, maps a non-ASCII rune to its compatibility
// decomposition (or the ASCII letter its case pair is) and drops the
// stripped bytes.
func fold(d view, track bool) view {
	out := view{b: make([]byte, 0, len(d.b))}
	if track {
		out.start, out.end = make([]int32, 0, len(d.b)), make([]int32, 0, len(d.b))
	}
	emit := func(c byte, from, to int) {
		if c < utf8.RuneSelf {
			if c = asciiFold[c]; c == 0 {
				return
			}
		}
		out.b = append(out.b, c)
		if track {
			out.start = append(out.start, d.start[from])
			out.end = append(out.end, d.end[to-1])
		}
	}
	for i := 0; i < len(d.b); {
		c := d.b[i]
		if c < utf8.RuneSelf {
			if !track {
				// The common case, a run of ASCII, without the bookkeeping.
				// (A decomposition may have used up the room: grow first.)
				out.b = slices.Grow(out.b, len(d.b)-i)
				buf, n := out.b[len(out.b):cap(out.b)], 0
				for ; i < len(d.b) && n < len(buf); i++ {
					c := d.b[i]
					if c >= utf8.RuneSelf {
						break
					}
					buf[n] = asciiFold[c]
					n += int(min(buf[n], 1))
				}
				out.b = out.b[:len(out.b)+n]
				continue
			}
			if c = asciiFold[c]; c != 0 {
				out.b = append(out.b, c)
				out.start = append(out.start, d.start[i])
				out.end = append(out.end, d.end[i])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(d.b[i:])
		if r == utf8.RuneError && n <= 1 {
			emit(c, i, i+1)
			i++
			continue
		}
		for _, fc := range foldRune(r, d.b[i:i+n]) {
			emit(fc, i, i+n)
		}
		i += n
	}
	return out
}

// foldRune is the bytes a non-ASCII rune reads as: its NFKC decomposition
// when it has one (ｓ → s, 𝐬 → s, K → K), else the ASCII letter of its
// case pair (ı → I, ſ → S), else itself.
func foldRune(r rune, raw []byte) []byte {
	if d := norm.NFKC.Properties(raw).Decomposition(); d != nil {
		return d
	}
	if u := unicode.ToUpper(r); u < utf8.RuneSelf {
		return []byte{byte(u)}
	}
	if l := unicode.ToLower(r); l < utf8.RuneSelf {
		return []byte{byte(l)}
	}
	return raw
}

// decode runs one round of unescaping over d: each escape becomes what it
// stands for, every other byte stays.
func decode(d view, track bool) (view, bool) {
	out := view{b: make([]byte, 0, len(d.b))}
	if track {
		out.start, out.end = make([]int32, 0, len(d.b)), make([]int32, 0, len(d.b))
	}
	changed := false
	put := func(p []byte, from, to int) {
		out.b = append(out.b, p...)
		if track {
			for range p {
				out.start = append(out.start, d.start[from])
				out.end = append(out.end, d.end[to-1])
			}
		}
	}
	var rb [utf8.UTFMax]byte
	var cache refCache
	src := d.b
	for i := 0; i < len(src); {
		// Copy the run up to the next escape in one step.
		run := 0
		for i+run < len(src) && !escapeStart[src[i+run]] {
			run++
		}
		if run > 0 {
			out.b = append(out.b, src[i:i+run]...)
			if track {
				out.start = append(out.start, d.start[i:i+run]...)
				out.end = append(out.end, d.end[i:i+run]...)
			}
			i += run
			continue
		}
		var r rune = -1
		var n int
		switch src[i] {
		case '\\':
			r, n = backslashEscape(src[i:])
		case '&':
			if cache == nil {
				cache = refCache{}
			}
			if dec, m := charRef(src[i:], cache); m > 0 {
				put([]byte(dec), i, i+m)
				i += m
				changed = true
				continue
			}
		case '%':
			r, n = percentEscape(src[i:])
			if n == 3 { // %XX is a byte, not a code point
				put([]byte{byte(r)}, i, i+n)
				i += n
				changed = true
				continue
			}
		}
		if n == 0 {
			put(src[i:i+1], i, i+1)
			i++
			continue
		}
		if r < 0 || r > unicode.MaxRune || (r >= 0xd800 && r < 0xe000) {
			r = utf8.RuneError
		}
		put(rb[:utf8.EncodeRune(rb[:], r)], i, i+n)
		i += n
		changed = true
	}
	return out, changed
}

func hexVal(c byte) rune {
	switch {
	case c >= '0' && c <= '9':
		return rune(c - '0')
	case c >= 'a' && c <= 'f':
		return rune(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return rune(c-'A') + 10
	}
	return -1
}

// hexRun reads exactly n hex digits at the start of s.
func hexRun(s []byte, n int) (rune, bool) {
	if len(s) < n {
		return 0, false
	}
	var v rune
	for _, c := range s[:n] {
		h := hexVal(c)
		if h < 0 {
			return 0, false
		}
		v = v<<4 | h
	}
	return v, true
}

// backslashEscape reads a JSON or JS escape at the start of s (s[0] is a
// backslash): the rune it stands for and its length, or n == 0.
func backslashEscape(s []byte) (r rune, n int) {
	if len(s) < 2 {
		return 0, 0
	}
	switch c := s[1]; c {
	case 'u', 'U':
		if len(s) > 2 && s[2] == '{' {
			var v rune
			for j := 3; j < len(s) && j < 3+7; j++ {
				if s[j] == '}' {
					if j == 3 {
						return 0, 0
					}
					return v, j + 1
				}
				h := hexVal(s[j])
				if h < 0 {
					return 0, 0
				}
				v = v<<4 | h
			}
			return 0, 0
		}
		v, ok := hexRun(s[2:], 4)
		if !ok {
			return 0, 0
		}
		if v >= 0xd800 && v < 0xdc00 && len(s) >= 12 && s[6] == '\\' && (s[7] == 'u' || s[7] == 'U') {
			if lo, ok := hexRun(s[8:], 4); ok && lo >= 0xdc00 && lo < 0xe000 {
				return 0x10000 + (v-0xd800)<<10 + (lo - 0xdc00), 12
			}
		}
		return v, 6
	case 'x', 'X':
		v, ok := hexRun(s[2:], 2)
		if !ok {
			return 0, 0
		}
		return v, 4
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'v':
		return '\v', 2
	default:
		if c >= '0' && c <= '7' {
			v, j := rune(0), 1
			for ; j < 4 && j < len(s) && s[j] >= '0' && s[j] <= '7' && v*8+rune(s[j]-'0') <= 0377; j++ {
				v = v*8 + rune(s[j]-'0')
			}
			return v, j
		}
		if c < utf8.RuneSelf && c > ' ' {
			return rune(c), 2 // \/ \\ \" and JS's \c for any other c
		}
	}
	return 0, 0
}

// percentEscape reads %XX (n == 3, r the byte) or %uXXXX (n == 6).
func percentEscape(s []byte) (r rune, n int) {
	if len(s) >= 6 && (s[1] == 'u' || s[1] == 'U') {
		if v, ok := hexRun(s[2:], 4); ok {
			return v, 6
		}
	}
	if v, ok := hexRun(s[1:], 2); ok {
		return v, 3
	}
	return 0, 0
}

// longestEntityName is the longest HTML named character reference
// (CounterClockwiseContourIntegral).
const longestEntityName = 32

// asciiEntities are the HTML named character references that stand for
// ASCII text (and the no-break space, which folds to a space), by lower-case
// name. An app may decode them without their ';' or in another case, which
// no browser does, so the scrub reads them that way too; every other name
// is read only as a browser reads it (exact, through package html).
// TestASCIIEntitiesAgreeWithHTML checks each against package html.
var asciiEntities = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"tab": "\t", "newline": "\n", "excl": "!", "quot": `"`, "num": "#", "dollar": "$",
		"percnt": "%", "amp": "&", "apos": "'", "lpar": "(", "rpar": ")", "ast": "*", "midast": "*",
		"plus": "+", "comma": ",", "period": ".", "sol": "/", "colon": ":", "semi": ";", "lt": "<",
		"equals": "=", "gt": ">", "quest": "?", "commat": "@", "lsqb": "[", "lbrack": "[", "bsol": `\`,
		"rsqb": "]", "rbrack": "]", "hat": "^", "lowbar": "_", "underbar": "_", "grave": "`",
		"diacriticalgrave": "`", "lcub": "{", "lbrace": "{", "verbar": "|", "vert": "|",
		"verticalline": "|", "rcub": "}", "rbrace": "}", "fjlig": "fj", "nbsp": "\u00a0",
	}
})

// longestLegacyEntity is the longest HTML name that needs no ';' (eacute,
// ntilde, …).
const longestLegacyEntity = 6

// longestASCIIEntity is the longest name in asciiEntities.
const longestASCIIEntity = len("diacriticalgrave")

// refCache remembers named references already read in one decoding round,
// so an answer of many '&'s costs one lookup per distinct name.
type refCache map[string]namedRef

type namedRef struct {
	text string
	n    int // bytes of the name consumed, 0 when none
}

// maxRefCache bounds a refCache; past it, names are looked up every time.
const maxRefCache = 4096

// charRef reads an HTML character reference at the start of s (s[0] is
// '&'), more leniently than a browser does, since an app decodes however it
// likes: numeric ones with any number of digits and no ';', and the names
// of asciiEntities without ';' or in another case. It returns the text it
// stands for and its length, or m == 0.
func charRef(s []byte, cache refCache) (string, int) {
	if len(s) < 3 {
		return "", 0
	}
	if s[1] == '#' {
		j, base := 2, rune(10)
		if s[2] == 'x' || s[2] == 'X' {
			j, base = 3, 16
		}
		var v rune
		digits := 0
		// Without a ';' the digits have more than one reading (&#619 is
		// U+026B to HTML, '=' then '9' to an app that wants it so): take
		// the longest prefix that is printable ASCII, which is what a
		// secret is made of, else all of them as HTML does.
		asciiEnd, asciiVal := -1, rune(0)
		for ; j < len(s); j++ {
			h := hexVal(s[j])
			if h < 0 || h >= base {
				break
			}
			if v <= unicode.MaxRune {
				v = v*base + h
			}
			digits++
			if v >= 0x20 && v < 0x7f {
				asciiEnd, asciiVal = j+1, v
			}
		}
		if digits == 0 {
			return "", 0
		}
		if j < len(s) && s[j] == ';' {
			j++
		} else if asciiEnd > 0 {
			j, v = asciiEnd, asciiVal
		}
		if v == 0 || v > unicode.MaxRune || v >= 0xd800 && v < 0xe000 {
			v = utf8.RuneError
		}
		return string(v), j
	}
	run := 1
	for run < len(s) && run <= longestEntityName && (s[run] >= 'a' && s[run] <= 'z' || s[run] >= 'A' && s[run] <= 'Z' || s[run] >= '0' && s[run] <= '9') {
		run++
	}
	if run == 1 {
		return "", 0
	}
	semi := run < len(s) && s[run] == ';'
	key := s[1:run]
	if semi {
		key = s[1 : run+1]
	}
	ref, ok := cache[string(key)]
	if !ok {
		ref = namedReference(s[1:run], semi)
		if len(cache) < maxRefCache {
			cache[string(key)] = ref
		}
	}
	if ref.n == 0 {
		return "", 0
	}
	m := 1 + ref.n
	if ref.n == run-1 && semi {
		m++
	}
	return ref.text, m
}

// namedReference reads name (letters and digits after '&'): the whole name
// as a browser would when it ends in ';' (any HTML name), else the longest
// prefix that names an ASCII entity in any case, else a legacy name
// without ';' as a browser reads it.
func namedReference(name []byte, semi bool) namedRef {
	if semi {
		ref := "&" + string(name) + ";"
		if dec := html.UnescapeString(ref); dec != ref && (dec == ";" || !strings.HasSuffix(dec, ";")) {
			return namedRef{dec, len(name)}
		}
	}
	lower := ascii.Lower(string(name))
	for end := min(len(lower), longestASCIIEntity); end >= 2; end-- {
		if t, ok := asciiEntities()[lower[:end]]; ok {
			return namedRef{t, end}
		}
	}
	// Legacy names (&copy, &eacute, …) need no ';' in HTML either; the
	// longest that is a whole reference wins, as in HTML.
	for end := min(len(name), longestLegacyEntity); end >= 2; end-- {
		ref := "&" + string(name[:end])
		if dec := html.UnescapeString(ref); dec != ref && utf8.RuneCountInString(dec) == 1 {
			return namedRef{dec, end}
		}
	}
	return namedRef{}
}
