package relay

import (
	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/events"
)

// themeTokens keeps the tokens of the page's theme message that may reach
// the apps (events.ThemeToken: a documented name, a plain CSS value) and
// drops the rest, so that the page's other tokens do not cost it its
// theme; nil when nothing is left.
func themeTokens(in map[string]string) map[string]string {
	var out map[string]string
	for name, v := range in {
		if events.ThemeToken(name, v) != nil {
			continue
		}
		if out == nil {
			out = make(map[string]string, len(frame.ThemeTokens))
		}
		out[name] = v
	}
	return out
}
