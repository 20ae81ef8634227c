package frame

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/internal/jsonscan"
)

// Encode returns the wire form of f, a frame the host sends, as the
// generated encoders write it: the bytes Marshal returns for it, without
// encoding/json. sure reports that they are a frame Parse accepts, known
// without parsing them back: f passes Validate, its required and
// required-when members are there, every string, integer, boolean, object
// and array in it was written by code that writes only what its schema's
// shape admits, and every raw JSON value in it (a kv value from SQLite, an
// agent's data) passed the checks Parse makes at its depth in the frame
// (JSON, UTF-8, no key twice, an object where one must be). When sure is
// false raw is nil and the caller uses Marshal and Parse: a value Parse
// would refuse, an app→host frame, or a value of a kind encoding/json
// writes here (a number, a scalar, a map, an array of those) that only
// Parse can judge. The size class is the caller's to check.
func Encode(f Frame) (raw []byte, sure bool) {
	bp := encodeBufs.Get().(*[]byte)
	defer encodeBufs.Put(bp)
	e := encoder{b: (*bp)[:0]}
	if !encodeFrame(&e, f) || e.bad || e.unsure {
		return nil, false
	}
	if vf, ok := f.(interface{ Validate() error }); !ok || vf.Validate() != nil {
		return nil, false
	}
	if cap(e.b) != cap(*bp) {
		return e.b, true // grown past the buffer: new memory, the caller's
	}
	return bytes.Clone(e.b), true
}

// encodeBufs holds the buffers Encode writes a frame into before it copies
// the frame out at its length: a frame is handed over (a port keeps it), and
// a buffer of a guessed size would keep the guess's memory with it.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// encoder is what the generated appendMembers write into.
type encoder struct {
	b      []byte
	unsure bool // a value encoding/json wrote, which only Parse can judge
	bad    bool // a value Parse refuses, or one encoding/json could not write
}

// close ends an object whose members were appended from n on, each after
// a comma: the first comma becomes its '{' (or the object is "{}").
func (e *encoder) close(n int) {
	if len(e.b) == n {
		e.b = append(e.b, "{}"...)
		return
	}
	e.b[n] = '{'
	e.b = append(e.b, '}')
}

func (e *encoder) boolean(v bool) {
	if v {
		e.b = append(e.b, "true"...)
	} else {
		e.b = append(e.b, "false"...)
	}
}

func (e *encoder) int(v int) {
	e.b = strconv.AppendInt(e.b, int64(v), 10)
}

// marshal writes v with encoding/json: a kind whose Go type admits more
// than its schema, so the frame is unsure.
func (e *encoder) marshal(v any) {
	e.unsure = true
	raw, err := json.Marshal(v)
	if err != nil {
		e.bad = true
		return
	}
	e.b = append(e.b, raw...)
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes encoding/json writes in a string as they
// are (it escapes the rest, and <, > and & for HTML).
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// str writes s as encoding/json writes a string (AppendString).
func (e *encoder) str(s string) { e.b = AppendString(e.b, s) }

// AppendString appends s as encoding/json writes a string: HTML-safe,
// invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped. The generated
// encoders and the relay's inspector rows write their strings with it.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// raw writes a raw JSON value found inside depth levels of its frame, as
// encoding/json writes a json.RawMessage (compacted, HTML-safe), once it
// passed the checks Parse makes of it there; object: the schema wants an
// object. An empty value is one the struct left empty though required:
// encoding/json writes null.
func (e *encoder) raw(v json.RawMessage, depth int, object bool) {
	if len(v) == 0 {
		e.bad = e.bad || object
		e.b = append(e.b, "null"...)
		return
	}
	var d jsonscan.Decoder
	d.ResetDepth(string(v), depth)
	if object && d.Peek() != jsonscan.Object {
		e.bad = true
		return
	}
	if _, ok := d.SkipChecked(); !ok || !d.End() || d.Dup {
		e.bad = true
		return
	}
	e.b = appendCompact(e.b, v)
}

// appendCompact appends src, valid JSON, without the whitespace between
// its tokens and with <, >, &, U+2028 and U+2029 in its strings escaped:
// what encoding/json writes for a json.RawMessage.
func appendCompact(b, src []byte) []byte {
	start, inStr := 0, false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !inStr {
			switch c {
			case '"':
				inStr = true
			case ' ', '\t', '\n', '\r':
				b = append(b, src[start:i]...)
				start = i + 1
			}
			continue
		}
		switch {
		case c == '\\':
			i++ // the escaped byte (valid JSON: there is one)
		case c == '"':
			inStr = false
		case c == '<' || c == '>' || c == '&':
			b = append(b, src[start:i]...)
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			start = i + 1
		case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
			b = append(b, src[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
			i += 2
			start = i + 1
		}
	}
	return append(b, src[start:]...)
}
