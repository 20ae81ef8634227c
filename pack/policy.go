package pack

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// The sandbox policy (CDN allowlist, CSP, blocked link rels) comes from
// frame, generated from schemas/rules.json; see policy_frame.go.

// metaField is one snug:* metadata tag, derived from the app-announce
// schema: property appId becomes <meta name="snug:app-id">.
type metaField struct {
	Prop     string // announce property, e.g. "displayName"
	Meta     string // meta name, e.g. "snug:display-name"
	Required bool
	Max      int // maxLength in code points; 0 = none
}

// announceFields lists the string properties of snug:app-announce in schema
// order, from the generated frame.AnnounceFields (built on first use, as
// every table of this package: nothing runs at init).
var announceFields = sync.OnceValue(func() []metaField {
	var out []metaField
	for _, f := range frame.AnnounceFields {
		out = append(out, metaField{Prop: f.Name, Meta: "snug:" + kebab(f.Name), Required: f.Required, Max: f.MaxLength})
	}
	return out
})

func kebab(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('-')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func runeLen(s string) int { return utf8.RuneCountInString(s) }

// allowedHost reports whether host is on the CDN allowlist.
func allowedHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	for _, h := range cdnAllowlist() {
		if host == h {
			return true
		}
	}
	return false
}

func allowlistText() string {
	l := append([]string(nil), cdnAllowlist()...)
	sort.Strings(l)
	return strings.Join(l, ", ")
}
