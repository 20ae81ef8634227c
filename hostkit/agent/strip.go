package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// stripKeys returns raw with every object member whose name satisfies drop
// removed, at any depth (inside nested objects and arrays alike). Member
// order, numbers as written and every other value are kept; the result is
// compact JSON. Names are compared after JSON unescaping, so "\u0061uthorization"
// is "authorization".
//
// Most values (an app's payload, state or schema) have no member to drop
// and are already in the form the result takes, frame.Parse having read
// them from JSON.stringify's output: those are returned as they are, after
// one pass over the bytes (keptAsIs), without decoding them.
func stripKeys(raw json.RawMessage, drop func(name string) bool) (json.RawMessage, error) {
	if keptAsIs(raw, drop) {
		return raw, nil
	}
	return stripDecoded(raw, drop)
}

// stripDecoded is stripKeys through encoding/json's tokens: the general
// path, and the reference keptAsIs is tested against.
func stripDecoded(raw json.RawMessage, drop func(name string) bool) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out bytes.Buffer
	if err := stripValue(dec, &out, drop); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after JSON value")
	}
	return out.Bytes(), nil
}

func stripValue(dec *json.Decoder, out *bytes.Buffer, drop func(string) bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			out.WriteByte('{')
			first := true
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, ok := kt.(string)
				if !ok {
					return fmt.Errorf("object key %v is not a string", kt)
				}
				if drop(key) {
					if err := skipValue(dec); err != nil {
						return err
					}
					continue
				}
				if !first {
					out.WriteByte(',')
				}
				first = false
				writeString(out, key)
				out.WriteByte(':')
				if err := stripValue(dec, out, drop); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // '}'
				return err
			}
			out.WriteByte('}')
		case '[':
			out.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					out.WriteByte(',')
				}
				if err := stripValue(dec, out, drop); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil { // ']'
				return err
			}
			out.WriteByte(']')
		default:
			return fmt.Errorf("unexpected %v", t)
		}
	case string:
		writeString(out, t)
	case json.Number:
		out.WriteString(t.String())
	case bool:
		if t {
			out.WriteString("true")
		} else {
			out.WriteString("false")
		}
	case nil:
		out.WriteString("null")
	default:
		return fmt.Errorf("unexpected token %T", tok)
	}
	return nil
}

// skipValue consumes one value (of any nesting) from dec.
func skipValue(dec *json.Decoder) error {
	var discard json.RawMessage
	return dec.Decode(&discard)
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(out *bytes.Buffer, s string) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	out.Write(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// keptAsIs reports whether stripDecoded would return raw byte for byte: raw
// is one JSON value with no whitespace outside its strings, no member name
// that drop refuses, and every string (names too) written as writeString
// writes it: no escape, no control character, valid UTF-8 without U+2028
// or U+2029. Anything else, including invalid JSON and nesting deeper than
// keptDepth, reports false and is left to stripDecoded, which decides.
func keptAsIs(raw []byte, drop func(string) bool) bool {
	s := keepScanner{b: raw, drop: drop}
	return s.value(0) && s.i == len(raw)
}

// keptDepth bounds keptAsIs's recursion; deeper values take the general path.
const keptDepth = 64

type keepScanner struct {
	b    []byte
	i    int
	drop func(string) bool
}

func (s *keepScanner) value(depth int) bool {
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		if depth >= keptDepth {
			return false
		}
		s.i++
		if s.i < len(s.b) && s.b[s.i] == '}' {
			s.i++
			return true
		}
		for {
			start := s.i + 1
			if !s.str() || s.drop(string(s.b[start:s.i-1])) || s.i >= len(s.b) || s.b[s.i] != ':' {
				return false
			}
			s.i++
			if !s.value(depth + 1) {
				return false
			}
			if more, ok := s.after('}'); !more {
				return ok
			}
		}
	case c == '[':
		if depth >= keptDepth {
			return false
		}
		s.i++
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if more, ok := s.after(']'); !more {
				return ok
			}
		}
	case c == '"':
		return s.str()
	case c == 't':
		return s.lit("true")
	case c == 'f':
		return s.lit("false")
	case c == 'n':
		return s.lit("null")
	case c == '-' || '0' <= c && c <= '9':
		return s.num()
	}
	return false
}

func (s *keepScanner) lit(w string) bool {
	if !bytes.HasPrefix(s.b[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// str reads a string that needs no escape, its quotes included.
func (s *keepScanner) str() bool {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return false
	}
	for s.i++; s.i < len(s.b); {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return true
		case c < 0x20 || c == '\\':
			return false
		case c < utf8.RuneSelf:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 || r == '\u2028' || r == '\u2029' {
				return false
			}
			s.i += n
		}
	}
	return false
}

// num reads a number of JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *keepScanner) num() bool {
	if s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *keepScanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// after reads what follows a member or an element: a comma (more to come),
// or end, which closes the object or array (done, well formed); anything
// else is not kept as is.
func (s *keepScanner) after(end byte) (more, ok bool) {
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return true, false
	case end:
		s.i++
		return false, true
	}
	return false, false
}
