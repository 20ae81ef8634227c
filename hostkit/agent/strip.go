package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// stripKeys returns raw with every object member whose name satisfies drop
// removed, at any depth (inside nested objects and arrays alike). Member
// order, numbers as written and every other value are kept; the result is
// compact JSON. Names are compared after JSON unescaping, so "\u0061uthorization"
// is "authorization".
func stripKeys(raw json.RawMessage, drop func(name string) bool) (json.RawMessage, error) {
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
