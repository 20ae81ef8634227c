package events

import (
	"fmt"
	"slices"
	"strings"

	"github.com/snuggen/snuggen/frame"
)

// maxTokenValue bounds one theme token's value, in bytes: a colour, a
// length or a font stack.
const maxTokenValue = 200

// ThemeToken reports why a theme token may not reach an app, nil when it
// may: its name is one of the documented set (frame.ThemeTokens) and its
// value a plain CSS value, at most maxTokenValue bytes, no control
// character, none of ; { } < > \ (no way out of the custom property) and
// no url(, image( or image-set( (no request through a token). Theme, Check
// (so the broker's UpdateTheme and Broadcast) and the relay, which drops
// what the page sends beyond it, all hold tokens to this one check.
func ThemeToken(name, value string) error {
	if !slices.Contains(frame.ThemeTokens, name) {
		return fmt.Errorf("events: theme token %q is not one of %s", name, strings.Join(frame.ThemeTokens, ", "))
	}
	if why := plainValue(value); why != "" {
		return fmt.Errorf("events: theme token %s: the value %s", name, why)
	}
	return nil
}

// plainValue says what keeps v from being a plain CSS value, "" when
// nothing does.
func plainValue(v string) string {
	switch {
	case v == "":
		return "is empty"
	case len(v) > maxTokenValue:
		return fmt.Sprintf("is %d bytes long: the limit is %d", len(v), maxTokenValue)
	case strings.ContainsAny(v, ";{}<>\\"):
		return `holds one of ; { } < > \ (it could end the custom property)`
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return "holds a control character"
		}
	}
	l := strings.ToLower(v)
	for _, fn := range []string{"url(", "image-set(", "image("} {
		if strings.Contains(l, fn) {
			return "holds " + fn + ") (a token makes no request)"
		}
	}
	return ""
}

// checkTokens holds every token of a theme to ThemeToken, in name order
// (so the first error is the same every time).
func checkTokens(tokens map[string]string) error {
	names := make([]string, 0, len(tokens))
	for n := range tokens {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := ThemeToken(n, tokens[n]); err != nil {
			return err
		}
	}
	return nil
}
