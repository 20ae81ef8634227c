package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/frame"
)

// Prelude is the script the server places before any byte of an app
// document. CSP does not stop WebRTC: an RTCPeerConnection sends STUN
// datagrams whatever connect-src says, so the prelude deletes the
// constructors (frame.RemovedGlobals) before the app's first script runs. A
// nested frame cannot bring them back: in an opaque-origin sandbox it is
// cross-origin to the app.
var Prelude = buildPrelude()

func buildPrelude() []byte {
	var b bytes.Buffer
	b.WriteString("<script>")
	for _, name := range frame.RemovedGlobals {
		fmt.Fprintf(&b, "delete window.%s;", name)
	}
	b.WriteString("</script>")
	return b.Bytes()
}

// PrepareDocument returns the document the server sends for an app: the
// Prelude first (after the doctype, so the document keeps standards mode;
// a doctype is markup, not script, so no app code runs before the prelude),
// and every <link> whose rel names a resource hint (frame.BlockedLinkRels)
// removed, because Chromium opens a connection for a preconnect whatever the
// CSP says. A hint an app inserts at run time from script is a residual
// channel this cannot close; see docs/architecture.md.
func PrepareDocument(doc []byte) ([]byte, error) {
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	out := bytes.NewBuffer(make([]byte, 0, len(doc)+len(Prelude)))
	z := html.NewTokenizer(bytes.NewReader(doc))
	placed := false
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			if errors.Is(z.Err(), io.EOF) {
				break
			}
			return nil, fmt.Errorf("server: read app document: %w", z.Err())
		}
		raw := z.Raw()
		if !placed {
			switch {
			case tt == html.TextToken && len(bytes.TrimSpace(raw)) == 0:
				out.Write(raw)
				continue
			case tt == html.DoctypeToken:
				out.Write(raw)
				out.Write(Prelude)
				placed = true
				continue
			default:
				out.Write(Prelude)
				placed = true
			}
		}
		if (tt == html.StartTagToken || tt == html.SelfClosingTagToken) && isLinkTag(raw) {
			// TagName and TagAttr lower-case the tokenizer's buffer in place:
			// keep the bytes as the app wrote them.
			raw = bytes.Clone(raw)
			if isBlockedLink(z) {
				continue
			}
		}
		out.Write(raw)
	}
	if !placed {
		out.Write(Prelude)
	}
	return out.Bytes(), nil
}

// isLinkTag reports whether a start tag's raw bytes open a <link> element,
// so only those pay for attribute parsing.
func isLinkTag(raw []byte) bool {
	if len(raw) < 6 || !bytes.EqualFold(raw[1:5], []byte("link")) {
		return false
	}
	c := raw[5]
	return c == '>' || c == '/' || isHTMLSpace(rune(c))
}

// isBlockedLink reports whether the current tag is a <link> with a blocked
// rel token. It reads the tag's attributes, so call it once per token.
func isBlockedLink(z *html.Tokenizer) bool {
	name, hasAttr := z.TagName()
	if string(name) != "link" || !hasAttr {
		return false
	}
	for {
		key, val, more := z.TagAttr()
		if string(key) == "rel" {
			for _, tok := range strings.FieldsFunc(strings.ToLower(string(val)), isHTMLSpace) {
				for _, blocked := range frame.BlockedLinkRels {
					if tok == blocked {
						return true
					}
				}
			}
		}
		if !more {
			return false
		}
	}
}

func isHTMLSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}
