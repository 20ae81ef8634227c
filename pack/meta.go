package pack

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// ReadMeta reads the <meta name="snug:…"> tags in the head of a page, such
// as one snuggen build wrote, and returns their contents keyed by the
// app-announce property each names ("appId", "displayName", …). The names
// come from the app-announce schema, as the build's own checks do.
func ReadMeta(doc []byte) map[string]string {
	out := map[string]string{}
	z := html.NewTokenizer(bytes.NewReader(doc))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		t := z.Token()
		if t.Data == "body" {
			return out
		}
		if t.Data != "meta" {
			continue
		}
		name, _ := getAttr(t, "name")
		content, _ := getAttr(t, "content")
		for _, f := range announceFields() {
			if strings.EqualFold(name, f.Meta) {
				out[f.Prop] = content
			}
		}
	}
}
