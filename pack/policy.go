package pack

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/snuggen/snuggen/schemas"
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
// order, read from the embedded schema so the limits live in one place.
var announceFields = mustAnnounceFields()

func mustAnnounceFields() []metaField {
	f, err := loadAnnounceFields()
	if err != nil {
		panic(fmt.Sprintf("pack: reading the app-announce schema: %v", err))
	}
	return f
}

func loadAnnounceFields() ([]metaField, error) {
	raw, err := schemas.FS.ReadFile("app-announce.schema.json")
	if err != nil {
		return nil, err
	}
	var s struct {
		Required   []string `json:"required"`
		Properties map[string]struct {
			Type      string `json:"type"`
			MaxLength int    `json:"maxLength"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	// Keep the schema's order: decode the property names in order.
	var order struct {
		Properties orderedKeys `json:"properties"`
	}
	if err := json.Unmarshal(raw, &order); err != nil {
		return nil, err
	}
	req := map[string]bool{}
	for _, r := range s.Required {
		req[r] = true
	}
	var out []metaField
	for _, name := range order.Properties {
		p := s.Properties[name]
		if p.Type != "string" {
			continue
		}
		out = append(out, metaField{Prop: name, Meta: "snug:" + kebab(name), Required: req[name], Max: p.MaxLength})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no string properties")
	}
	return out, nil
}

// orderedKeys decodes a JSON object's keys in document order.
type orderedKeys []string

func (k *orderedKeys) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if _, err := dec.Token(); err != nil {
		return err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		*k = append(*k, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

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
