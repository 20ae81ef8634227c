package netgate

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// maxPathDecodes bounds how many layers of percent-encoding ambiguousPath
// peels off; a path still encoded after that many is refused.
const maxPathDecodes = 4

// ambiguousPath says why servers may read an (escaped, canonical) path as
// another path than the gate does, or "" when they cannot. The gate matches
// a path-scoped connection on the path as sent; a server that decodes %2F
// or %5C before routing, strips ;parameters (Tomcat: /v1/..;/admin is
// /admin), merges or keeps // differently, folds full-width or overlong
// forms to '/' and '.', or decodes twice, would route the credential out of
// its scope. So on an origin with a path-scoped connection such a path is
// refused; the layers of percent-encoding are peeled one by one and each is
// checked.
func ambiguousPath(p string) string {
	s := p
	for level := 0; level <= maxPathDecodes; level++ {
		low := strings.ToLower(s)
		switch {
		case strings.Contains(low, "%2f"):
			return "an encoded slash (%2F)"
		case strings.Contains(low, "%5c"):
			return "an encoded backslash (%5C)"
		case strings.Contains(s, `\`):
			return "a backslash"
		case strings.Contains(s, ";") || strings.Contains(low, "%3b"):
			return "a ; path parameter"
		case strings.Contains(s, "//"):
			return "an empty segment (//)"
		}
		if level > 0 {
			for i := 0; i < len(s); i++ {
				if s[i] < 0x20 || s[i] == 0x7f {
					return fmt.Sprintf("a control character (%%%02X)", s[i])
				}
			}
			if !utf8.ValidString(s) {
				return "bytes that are not valid UTF-8 (overlong forms of / and . among them)"
			}
			for _, r := range s {
				if r < utf8.RuneSelf {
					continue
				}
				if f := norm.NFKC.String(string(r)); strings.ContainsAny(f, `/\.;%`) {
					return fmt.Sprintf("%U, which servers that normalize (NFKC) fold to %q", r, f)
				}
				if f, ok := lookalikes()[r]; ok {
					return fmt.Sprintf("%U, which servers that map to ASCII (Windows best fit, IDNA) fold to %q", r, f)
				}
			}
		}
		for _, seg := range strings.Split(s, "/") {
			if seg != "" && strings.Trim(seg, ". ") == "" {
				return fmt.Sprintf("a dot segment (%q once decoded)", seg)
			}
		}
		next := percentDecode(s)
		if next == s {
			return ""
		}
		s = next
	}
	return fmt.Sprintf("percent-encoding nested more than %d deep", maxPathDecodes)
}

// lookalikes are characters NFKC leaves alone that some servers still read
// as a slash, a backslash or a dot.
var lookalikes = sync.OnceValue(func() map[rune]string {
	return map[rune]string{
		'\u2215': "/", // DIVISION SLASH
		'\u2044': "/", // FRACTION SLASH
		'\u29f8': "/", // BIG SOLIDUS
		'\u2216': `\`, // SET MINUS
		'\u29f5': `\`, // REVERSE SOLIDUS OPERATOR
		'\u29f9': `\`, // BIG REVERSE SOLIDUS
		'\u3002': ".", // IDEOGRAPHIC FULL STOP
	}
})

// percentDecode decodes every valid %XX and leaves anything else as it is.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && hexVal(s[i+1]) >= 0 && hexVal(s[i+2]) >= 0 {
			b.WriteByte(byte(hexVal(s[i+1])<<4 | hexVal(s[i+2])))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
