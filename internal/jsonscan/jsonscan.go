// Package jsonscan is the small JSON reader the generated frame decoders in
// frame are built on. It reads one document held in a string and hands
// out values in document order, without reflection: object keys exactly as
// written (case-sensitive, escapes resolved), strings that share memory with
// the document when they need no unescaping, integers, skipped values as raw
// text. It knows nothing about Snug; the spec lives in the generated code.
//
// Limits: the document must be valid UTF-8 (a JSON text always is), nesting
// deeper than MaxDepth is a syntax error, and a lone surrogate escape becomes
// U+FFFD, as in encoding/json (Decoder.Lone tells).
package jsonscan

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Kind is the kind of the next value.
type Kind byte

// Kinds of values.
const (
	Invalid Kind = iota
	Object
	Array
	String
	Number
	Bool
	Null
)

// SyntaxError is a JSON syntax error at a byte offset.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("JSON syntax error at byte %d: %s", e.Offset, e.Msg)
}

// Decoder reads one JSON document. After the first syntax error Err is set
// and every method reports failure.
type Decoder struct {
	s     string
	i     int
	depth int
	Err   *SyntaxError
	Dup   bool // an object named a key twice (set by MarkDup, SkipChecked)
	// Lone is set when a string or key held an unpaired surrogate escape
	// ("\ud800" alone), read as U+FFFD: the text had no exact UTF-8 reading.
	// A caller that cares clears it before a read and looks after.
	Lone bool
}

// Reset makes d read s from the beginning.
func (d *Decoder) Reset(s string) { *d = Decoder{s: s} }

// ResetDepth makes d read s, a value found inside depth levels of arrays
// and objects of a larger document: its own nesting counts from there
// toward MaxDepth, as it would in that document.
func (d *Decoder) ResetDepth(s string, depth int) { *d = Decoder{s: s, depth: depth} }

// Offset is the current byte offset.
func (d *Decoder) Offset() int { return d.i }

func (d *Decoder) fail(msg string) {
	if d.Err == nil {
		d.Err = &SyntaxError{Offset: d.i, Msg: msg}
	}
}

func (d *Decoder) ws() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// Peek returns the kind of the next value without consuming it.
func (d *Decoder) Peek() Kind {
	if d.Err != nil {
		return Invalid
	}
	d.ws()
	if d.i >= len(d.s) {
		return Invalid
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return Object
	case c == '[':
		return Array
	case c == '"':
		return String
	case c == 't' || c == 'f':
		return Bool
	case c == 'n':
		return Null
	case c == '-' || (c >= '0' && c <= '9'):
		return Number
	}
	return Invalid
}

// End checks that only whitespace follows the document.
func (d *Decoder) End() bool {
	if d.Err != nil {
		return false
	}
	d.ws()
	if d.i != len(d.s) {
		d.fail("unexpected text after the JSON value")
		return false
	}
	return true
}

// BeginObject consumes '{' and reports whether the next value was an object.
// It does not consume anything when it is not.
func (d *Decoder) BeginObject() bool {
	if d.Peek() != Object {
		return false
	}
	d.depth++
	if d.depth > MaxDepth {
		d.fail("nesting too deep")
		return false
	}
	d.i++
	return true
}

// BeginArray consumes '[' and reports whether the next value was an array.
func (d *Decoder) BeginArray() bool {
	if d.Peek() != Array {
		return false
	}
	d.depth++
	if d.depth > MaxDepth {
		d.fail("nesting too deep")
		return false
	}
	d.i++
	return true
}

// More reports whether another member (after BeginObject) or element (after
// BeginArray) follows, consuming the separating comma or the closing bracket.
// first is true for the first call after Begin.
func (d *Decoder) More(first bool, closer byte) bool {
	if d.Err != nil {
		return false
	}
	d.ws()
	if d.i >= len(d.s) {
		d.fail("unexpected end of input")
		return false
	}
	c := d.s[d.i]
	if c == closer {
		d.i++
		d.depth--
		return false
	}
	if first {
		return true
	}
	if c != ',' {
		d.fail(fmt.Sprintf("expected ',' or '%c'", closer))
		return false
	}
	d.i++
	return true
}

// ObjMore is More for objects.
func (d *Decoder) ObjMore(first bool) bool { return d.More(first, '}') }

// ArrMore is More for arrays.
func (d *Decoder) ArrMore(first bool) bool { return d.More(first, ']') }

// Key reads an object key and the colon after it.
func (d *Decoder) Key() (string, bool) {
	d.ws()
	if d.i >= len(d.s) || d.s[d.i] != '"' {
		d.fail("expected a string key")
		return "", false
	}
	k, ok := d.str()
	if !ok {
		return "", false
	}
	d.ws()
	if d.i >= len(d.s) || d.s[d.i] != ':' {
		d.fail("expected ':' after an object key")
		return "", false
	}
	d.i++
	return k, true
}

// String reads a string. When the next value is not a string it consumes
// nothing and returns false with Err unset.
func (d *Decoder) String() (string, bool) {
	if d.Peek() != String {
		return "", false
	}
	return d.str()
}

func (d *Decoder) str() (string, bool) {
	start := d.i + 1
	j := start
	// Eight bytes at a time: the lowest byte specials8 marks is exactly the
	// first that ends the plain run (a quote, a backslash, a control byte
	// or a non-ASCII byte), so a short string (a key, an id) ends within
	// its first word and base64 data or long text goes some three times
	// faster than byte by byte. The last few bytes of the text go byte by
	// byte.
	for s := d.s; j+8 <= len(s); j += 8 {
		w := s[j : j+8] // one bounds check, one load
		m := specials8(uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56)
		if m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			if s[j] == '"' {
				d.i = j + 1
				return s[start:j], true
			}
			return d.slowStr(start)
		}
	}
	for j < len(d.s) {
		c := d.s[j]
		if c == '"' {
			d.i = j + 1
			return d.s[start:j], true
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			break
		}
		j++
	}
	return d.slowStr(start)
}

// specials8 marks, in the high bit of its byte, each of the eight bytes in
// x that may be a quote, a backslash, below 0x20 or 0x80 and above: the
// lowest mark is exact (a byte is marked wrongly only above one that is
// marked rightly, where a subtraction's borrow reaches), so it is the
// first such byte; 0 when there is none.
func specials8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return (zero(x^(ones*'"')) | zero(x^(ones*'\\')) | ((x - ones*0x20) &^ x) | x) & highs
}

// slowStr reads the string whose text starts at start a byte at a time,
// decoding its escapes (a \u one in unicodeEscape) and checking its UTF-8;
// the result shares d's text when there is no escape.
func (d *Decoder) slowStr(start int) (string, bool) {
	var b []byte
	j := start
	for j < len(d.s) {
		c := d.s[j]
		switch {
		case c == '"':
			d.i = j + 1
			if b == nil {
				return d.s[start:j], true
			}
			return string(b), true
		case c == '\\':
			if b == nil {
				b = make([]byte, 0, j-start+16)
				b = append(b, d.s[start:j]...)
			}
			if j+1 >= len(d.s) {
				d.i = j
				d.fail("unterminated string")
				return "", false
			}
			e := d.s[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				var ok bool
				if b, j, ok = d.unicodeEscape(b, j); !ok {
					return "", false
				}
			default:
				d.i = j - 1
				d.fail("invalid escape")
				return "", false
			}
		case c < 0x20:
			d.i = j
			d.fail("control character in a string")
			return "", false
		case c < 0x80:
			if b != nil {
				b = append(b, c)
			}
			j++
		default:
			r, size := utf8.DecodeRuneInString(d.s[j:])
			if r == utf8.RuneError && size == 1 {
				d.i = j
				d.fail("invalid UTF-8 in a string")
				return "", false
			}
			if b != nil {
				b = append(b, d.s[j:j+size]...)
			}
			j += size
		}
	}
	d.i = j
	d.fail("unterminated string")
	return "", false
}

// unicodeEscape appends to b the character of the \u escape whose hex
// digits start at j, joining a surrogate pair, and returns the index after
// it; a lone surrogate becomes U+FFFD and sets d.Lone. Bad digits fail d.
func (d *Decoder) unicodeEscape(b []byte, j int) ([]byte, int, bool) {
	r, ok := hex4(d.s, j)
	if !ok {
		d.i = j
		d.fail("invalid \\u escape")
		return b, j, false
	}
	j += 4
	if utf16.IsSurrogate(r) {
		if r2, ok := hex4(d.s, j+2); ok && j+1 < len(d.s) && d.s[j] == '\\' && d.s[j+1] == 'u' {
			if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
				return utf8.AppendRune(b, dec), j + 6, true
			}
		}
		r = utf8.RuneError
		d.Lone = true
	}
	return utf8.AppendRune(b, r), j, true
}

func hex4(s string, j int) (rune, bool) {
	if j+4 > len(s) {
		return 0, false
	}
	var r rune
	for k := 0; k < 4; k++ {
		c := s[j+k]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// Bool reads true or false. When the next value is not a boolean it consumes
// nothing and returns ok false.
func (d *Decoder) Bool() (v, ok bool) {
	if d.Peek() != Bool {
		return false, false
	}
	if strings.HasPrefix(d.s[d.i:], "true") {
		d.i += 4
		return true, true
	}
	if strings.HasPrefix(d.s[d.i:], "false") {
		d.i += 5
		return false, true
	}
	d.fail("invalid literal")
	return false, false
}

// Null consumes null and reports whether it was there.
func (d *Decoder) Null() bool {
	if d.Peek() != Null {
		return false
	}
	if strings.HasPrefix(d.s[d.i:], "null") {
		d.i += 4
		return true
	}
	d.fail("invalid literal")
	return false
}

// Number reads a number's text. When the next value is not a number it
// consumes nothing and returns false.
func (d *Decoder) Number() (string, bool) {
	if d.Peek() != Number {
		return "", false
	}
	start := d.i
	j := d.i
	if d.s[j] == '-' {
		j++
	}
	switch {
	case j < len(d.s) && d.s[j] == '0':
		j++
	case j < len(d.s) && d.s[j] >= '1' && d.s[j] <= '9':
		for j < len(d.s) && d.s[j] >= '0' && d.s[j] <= '9' {
			j++
		}
	default:
		d.i = j
		d.fail("invalid number")
		return "", false
	}
	if j < len(d.s) && d.s[j] == '.' {
		j++
		k := j
		for j < len(d.s) && d.s[j] >= '0' && d.s[j] <= '9' {
			j++
		}
		if j == k {
			d.i = j
			d.fail("invalid number")
			return "", false
		}
	}
	if j < len(d.s) && (d.s[j] == 'e' || d.s[j] == 'E') {
		j++
		if j < len(d.s) && (d.s[j] == '+' || d.s[j] == '-') {
			j++
		}
		k := j
		for j < len(d.s) && d.s[j] >= '0' && d.s[j] <= '9' {
			j++
		}
		if j == k {
			d.i = j
			d.fail("invalid number")
			return "", false
		}
	}
	d.i = j
	return d.s[start:j], true
}

// Int reads a number and reports whether it is an integer the way JavaScript
// reads one (ParseInt: the nearest double, finite and with no fractional
// part: 1.0, 1e2 and 1.0000000000000001 are integers, 1e400 is not). Integers
// beyond the int64 range are clamped to it. isNum is false, with nothing
// consumed, when the next value is not a number.
func (d *Decoder) Int() (v int64, isInt, isNum bool) {
	raw, ok := d.Number()
	if !ok {
		return 0, false, false
	}
	v, isInt = ParseInt(raw)
	return v, isInt, true
}

// ParseInt interprets a valid JSON number's text as JSON.parse and
// Number.isInteger do: the value is the nearest double (ParseFloat), and it
// is an integer when that double is finite and has no fractional part. So
// 1.0000000000000001 is the integer 1, 1e-400 is 0, and 1e400 (Infinity) is
// no integer. The result is clamped to the int64 range.
func ParseInt(raw string) (int64, bool) {
	// Fifteen characters hold at most 15 digits: below 2^53, exact as a double.
	if len(raw) <= 15 && !strings.ContainsAny(raw, ".eE") {
		v, err := strconv.ParseInt(raw, 10, 64)
		return v, err == nil
	}
	f := ParseFloat(raw)
	if math.IsInf(f, 0) || f != math.Trunc(f) {
		return 0, false
	}
	switch {
	case f >= 0x1p63:
		return math.MaxInt64, true
	case f < -0x1p63:
		return math.MinInt64, true
	}
	return int64(f), true
}

// ParseFloat returns the double nearest to a valid JSON number's text, as
// JSON.parse does: ±Inf past the largest double, ±0 below the smallest. It
// reads the digits once and hands strconv.ParseFloat at most 801 significant
// digits (the 801st a sticky 1 standing for the nonzero rest) and an
// exponent it has read exactly, so a numeral of a million digits or an
// exponent of a billion ("1.000…", "9…9e-1048575", "1e999999999") costs
// linear time and is still rounded correctly.
func ParseFloat(raw string) float64 {
	if len(raw) <= 32 {
		if f, err := strconv.ParseFloat(raw, 64); err == nil {
			return f
		}
	}
	neg := strings.HasPrefix(raw, "-")
	if neg {
		raw = raw[1:]
	}
	mant, exp, hasExp := raw, "", false
	if i := strings.IndexAny(raw, "eE"); i >= 0 {
		mant, exp, hasExp = raw[:i], raw[i+1:], true
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	// The significant digits are hi followed by lo (no copy is made), and
	// point is where the decimal point falls among them: the value is
	// 0.<hi><lo> × 10^point.
	hi, lo := strings.TrimLeft(intPart, "0"), strings.TrimRight(frac, "0")
	point := len(hi)
	if hi == "" {
		// 0.00123: leading fraction zeros move the point left.
		t := strings.TrimLeft(lo, "0")
		point = -(len(lo) - len(t))
		lo = t
	}
	if lo == "" {
		hi = strings.TrimRight(hi, "0")
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	if len(hi)+len(lo) == 0 {
		return math.Copysign(0, sign)
	}
	if hasExp {
		e, _ := saturatedExp(exp)
		point += e
	}
	switch {
	case point > 310: // at least 10^309: past the largest double
		return math.Inf(int(sign))
	case point < -330: // below 10^-331: under half the smallest double
		return math.Copysign(0, sign)
	}
	// The last significant digit is never 0, so digits past the 800th hold
	// a nonzero one: a sticky 1 keeps the rounding exact.
	const keep = 800
	var b strings.Builder
	b.WriteString("0.")
	if len(hi)+len(lo) > keep {
		if len(hi) >= keep {
			b.WriteString(hi[:keep])
		} else {
			b.WriteString(hi)
			b.WriteString(lo[:keep-len(hi)])
		}
		b.WriteByte('1')
	} else {
		b.WriteString(hi)
		b.WriteString(lo)
	}
	b.WriteByte('e')
	b.WriteString(strconv.Itoa(point))
	f, _ := strconv.ParseFloat(b.String(), 64)
	return sign * f
}

// saturatedExp reads a JSON exponent ("+12", "-3", "7"), saturating its
// magnitude at a billion: past that, only its sign matters to ParseFloat.
func saturatedExp(s string) (int, bool) {
	neg := false
	switch {
	case strings.HasPrefix(s, "-"):
		neg, s = true, s[1:]
	case strings.HasPrefix(s, "+"):
		s = s[1:]
	}
	if s == "" {
		return 0, false
	}
	e := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if e < 1e9 {
			e = e*10 + int(c-'0')
		}
	}
	if neg {
		return -e, true
	}
	return e, true
}

// Skip reads and checks any value, returning its raw text.
func (d *Decoder) Skip() (string, bool) {
	d.ws()
	start := d.i
	switch d.Peek() {
	case Object:
		d.BeginObject()
		for first := true; d.ObjMore(first); first = false {
			if _, ok := d.Key(); !ok {
				return "", false
			}
			if _, ok := d.Skip(); !ok {
				return "", false
			}
		}
	case Array:
		d.BeginArray()
		for first := true; d.ArrMore(first); first = false {
			if _, ok := d.Skip(); !ok {
				return "", false
			}
		}
	case String:
		d.str()
	case Number:
		d.Number()
	case Bool:
		d.Bool()
	case Null:
		d.Null()
	default:
		if d.Err == nil {
			if d.i >= len(d.s) {
				d.fail("unexpected end of input")
			} else {
				d.fail(fmt.Sprintf("unexpected character %q", d.s[d.i]))
			}
		}
	}
	if d.Err != nil {
		return "", false
	}
	return d.s[start:d.i], true
}

// Scalar reads a string, number, boolean or null as a Go value: string,
// json.Number, bool or nil. ok is false, with nothing consumed, for an object
// or an array.
func (d *Decoder) Scalar() (v any, ok bool) {
	switch d.Peek() {
	case String:
		s, ok := d.str()
		return s, ok
	case Number:
		n, ok := d.Number()
		return json.Number(n), ok
	case Bool:
		return d.Bool()
	case Null:
		return nil, d.Null()
	}
	return nil, false
}

// LenAtLeast reports whether s holds at least n Unicode code points,
// counting only when the byte length cannot decide.
func LenAtLeast(s string, n int) bool {
	if len(s) < n {
		return false
	}
	if len(s) >= 4*n {
		return true
	}
	return utf8.RuneCountInString(s) >= n
}

// LenAtMost reports whether s holds at most n Unicode code points, counting
// only when the byte length cannot decide.
func LenAtMost(s string, n int) bool {
	if len(s) <= n {
		return true
	}
	return utf8.RuneCountInString(s) <= n
}

// DuplicateKeys reads the whole of s and reports whether it is one valid
// JSON value (valid) and whether any object in it names a key twice (dup).
// JSON.parse and encoding/json keep the last of two equal keys silently; a
// validator that wants one reading of a text rejects such a text instead.
func DuplicateKeys(s string) (dup, valid bool) {
	var d Decoder
	d.Reset(s)
	d.checkValue()
	if !d.End() {
		return false, false
	}
	return d.Dup, true
}

// MarkDup records that an object named a key twice.
func (d *Decoder) MarkDup() { d.Dup = true }

// SkipChecked is Skip that also sets Dup when an object inside the value
// names a key twice.
func (d *Decoder) SkipChecked() (string, bool) {
	d.ws()
	start := d.i
	d.checkValue()
	if d.Err != nil {
		return "", false
	}
	return d.s[start:d.i], true
}

// checkValue reads one value, setting Dup when an object repeats a key.
func (d *Decoder) checkValue() {
	switch d.Peek() {
	case Object:
		d.BeginObject()
		var keys KeySet
		for first := true; d.ObjMore(first); first = false {
			k, ok := d.Key()
			if !ok {
				return
			}
			if keys.Add(k) {
				d.Dup = true
			}
			d.checkValue()
		}
	case Array:
		d.BeginArray()
		for first := true; d.ArrMore(first); first = false {
			d.checkValue()
		}
	default:
		d.Skip()
	}
}

// KeySet is a set of object keys that allocates only past a handful.
type KeySet struct {
	small [8]string
	n     int
	many  map[string]struct{}
}

// Add adds k and reports whether it was already there.
func (ks *KeySet) Add(k string) bool {
	if ks.many != nil {
		if _, ok := ks.many[k]; ok {
			return true
		}
		ks.many[k] = struct{}{}
		return false
	}
	for _, x := range ks.small[:ks.n] {
		if x == k {
			return true
		}
	}
	if ks.n < len(ks.small) {
		ks.small[ks.n] = k
		ks.n++
		return false
	}
	ks.many = make(map[string]struct{}, 4*len(ks.small))
	for _, x := range ks.small {
		ks.many[x] = struct{}{}
	}
	ks.many[k] = struct{}{}
	return false
}
