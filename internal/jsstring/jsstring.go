// Package jsstring writes a Go string as a string literal that JSON and
// JavaScript both read back as the same text. strconv.Quote is Go syntax:
// JavaScript reads its \a as "a" and its \U0001F600 as "U0001F600", and
// its \xff escapes a byte where JS reads a code point. Its limit: invalid
// UTF-8 has no such literal, so each invalid byte becomes U+FFFD, as
// encoding/json writes it.
package jsstring

import (
	"strconv"
	"unicode/utf8"
)

const hex = "0123456789abcdef"

// Quote returns s as a double-quoted literal valid in JSON and in JS:
// " and \ escaped, control characters, U+007F, U+2028 and U+2029 as \uXXXX
// (the last two end a line in older JS engines), everything else as is.
func Quote(s string) string { return string(Append(nil, s)) }

// Append appends Quote(s) to b.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, `\u`...)
			b = strconv.AppendInt(b, int64(r), 16)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}
