package relay

import (
	"slices"
	"strings"

	"github.com/snuggen/snuggen/frame"
)

// maxTokenValue bounds one theme token's value, in bytes: a colour, a
// length or a font stack.
const maxTokenValue = 200

// themeTokens keeps the tokens of the page's theme message that are in the
// documented set (frame.ThemeTokens) and whose value is a plain CSS value:
// at most maxTokenValue bytes, no control character, none of ; { } < > \
// (no way out of the value) and no url( or image-set( (no request through
// a token). Everything else is dropped; nil when nothing is left.
func themeTokens(in map[string]string) map[string]string {
	var out map[string]string
	for name, v := range in {
		if !slices.Contains(frame.ThemeTokens, name) || !plainValue(v) {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(frame.ThemeTokens))
		}
		out[name] = v
	}
	return out
}

func plainValue(v string) bool {
	if v == "" || len(v) > maxTokenValue || strings.ContainsAny(v, ";{}<>\\") {
		return false
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	l := strings.ToLower(v)
	return !strings.Contains(l, "url(") && !strings.Contains(l, "image-set(") && !strings.Contains(l, "image(")
}
