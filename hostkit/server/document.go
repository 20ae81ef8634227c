package server

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/ascii"
	"github.com/snuggen/snuggen/internal/linkhint"
)

// preludeBuilt is prelude.js minified with its rules.json lists filled in,
// built by snuggen gen (checked by gen --check), so a host does not run
// esbuild when it starts.
//
//go:embed prelude.min.js
var preludeBuilt string

// preludeScript is preludeBuilt without its generated-code header line.
var preludeScript = func() string {
	_, rest, _ := strings.Cut(preludeBuilt, "\n")
	return strings.TrimSpace(rest)
}()

// Prelude returns the script the server places before every byte of app
// code (prelude.js, minified, with frame.RemovedGlobals,
// frame.BlockedLinkRels and frame.NestedContextElements filled in): it
// deletes the WebRTC constructors and the DOM builders that bypass Trusted
// Types, makes the Trusted Types default policy that frame.HostCSP requires
// (no srcdoc, no nested frame, no markup document.write, no <link> in
// markup), refuses a nested frame element on every DOM path that makes one
// and a blocked link rel on every DOM path that sets one. With
// frame.HostCSP in the header no other browsing context the app could make
// runs a script, so what the prelude removes stays removed everywhere the
// app runs (docs/security.md).
func Prelude() string { return preludeScript }

// PrepareDocument returns the document the server sends for an app. It
// parses the app's HTML with the HTML5 parsing algorithm (the one the
// browser runs, so a namespace trick such as <svg><style><p></p><link …>
// is seen as the browser sees it) and changes the tree:
//
//   - the Prelude becomes the first child of <head>, so it is the first
//     script the browser runs (a doctype is markup, not script; attributes
//     of <html> and <head> run nothing before it); a copy of the Prelude
//     already in the document (a file prepared before) is removed first;
//   - every link whose rel names a resource hint (frame.BlockedLinkRels) is
//     removed, in every namespace and inside templates: Chromium opens a
//     connection for a preconnect whatever the CSP says;
//   - every nested browsing context element (frame.NestedContextElements:
//     iframe, object, embed, …) and every srcdoc attribute is removed: an
//     app gets no nested document (frame.HostCSP and the prelude refuse
//     one made by script), and a nested frame's blocked navigation would
//     still send its target's name out;
//   - every <meta http-equiv=refresh> (it navigates the frame) and
//     <meta http-equiv=Link> (it can carry hints) is removed;
//   - every declarative shadow root is made open (shadowrootmode="closed"
//     becomes "open"): a closed root the parser makes calls no
//     attachShadow, so the prelude could not watch the links script puts
//     in it (an app reaches it through this.getRootNode() in a handler).
//
// It serializes the tree and parses the result again, and refuses (an
// error) a document whose second parse would not have the prelude as its
// first script or would still hold something removed: a tree that does not
// survive its own serialization is not served.
//
// The document relies on the server's header (AppCSP): frame.HostCSP makes
// the browser send every markup string through the prelude's policy. A
// host whose headers snuggen does not set uses PrepareStandalone.
func PrepareDocument(doc []byte) ([]byte, error) {
	return prepareDocument(doc, false)
}

// PrepareStandalone returns an app document that carries the host's
// defences inside itself, for hosts whose response headers snuggen does
// not set (MCP Apps hosts render the HTML of a resource; see
// docs/mcp-apps.md): PrepareDocument's tree, plus HostCSPMeta in a
// <meta http-equiv="Content-Security-Policy"> placed before the prelude, so
// Trusted Types are required before any script runs. A leading
// <meta charset> stays first (the encoding prescan reads only the first
// 1024 bytes). What a meta cannot carry (frame.MetaIgnores: the sandbox
// flags, frame-ancestors) is the embedding host's to set. Preparing a
// prepared document again gives the same document.
func PrepareStandalone(doc []byte) ([]byte, error) {
	return prepareDocument(doc, true)
}

// HostCSPMeta is frame.HostCSP as far as a meta tag carries it: the policy
// PrepareStandalone puts in the document.
func HostCSPMeta() string { return frame.CSPMeta(frame.HostCSP) }

func prepareDocument(doc []byte, standalone bool) ([]byte, error) {
	pre := Prelude()
	doc = bytes.TrimPrefix(doc, []byte("\xef\xbb\xbf"))
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return nil, fmt.Errorf("server: parse app document: %w", err)
	}
	strip(root)
	head := findElement(root, atom.Head)
	if head == nil {
		return nil, errors.New("server: the parsed app document has no <head>")
	}
	policy := HostCSPMeta()
	removeOwn(head, pre, policy)
	script := &html.Node{Type: html.ElementNode, DataAtom: atom.Script, Data: "script"}
	script.AppendChild(&html.Node{Type: html.TextNode, Data: pre})
	at := head.FirstChild
	if standalone {
		if c := firstElementChild(head); c != nil && isCharsetMeta(c) {
			at = c.NextSibling
		}
		head.InsertBefore(cspMeta(policy), at)
	}
	head.InsertBefore(script, at)
	var out bytes.Buffer
	out.Grow(len(doc) + len(pre) + 64)
	if err := html.Render(&out, root); err != nil {
		return nil, fmt.Errorf("server: write app document: %w", err)
	}
	if err := verify(out.Bytes(), pre, standalone); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// removeOwn removes from head what a previous preparation put there: a
// script whose text is the prelude, and a CSP meta whose policy is policy.
func removeOwn(head *html.Node, pre, policy string) {
	for c := head.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && c.Namespace == "" {
			switch {
			case c.DataAtom == atom.Script && c.FirstChild != nil && c.FirstChild == c.LastChild && c.FirstChild.Data == pre:
				head.RemoveChild(c)
			case c.DataAtom == atom.Meta && isCSPMeta(c, policy):
				head.RemoveChild(c)
			}
		}
		c = next
	}
}

// cspMeta is <meta http-equiv="Content-Security-Policy" content=policy>.
func cspMeta(policy string) *html.Node {
	return &html.Node{Type: html.ElementNode, DataAtom: atom.Meta, Data: "meta", Attr: []html.Attribute{
		{Key: "http-equiv", Val: "Content-Security-Policy"}, {Key: "content", Val: policy},
	}}
}

// isCSPMeta reports whether n is a CSP meta with exactly policy as content.
func isCSPMeta(n *html.Node, policy string) bool {
	equiv, content := false, false
	for _, a := range n.Attr {
		switch ascii.Lower(a.Key) {
		case "http-equiv":
			equiv = ascii.Lower(strings.Trim(a.Val, " \t\n\f\r")) == "content-security-policy"
		case "content":
			content = a.Val == policy
		}
	}
	return equiv && content
}

// isCharsetMeta reports whether n is a <meta charset>.
func isCharsetMeta(n *html.Node) bool {
	if n.DataAtom != atom.Meta || n.Namespace != "" {
		return false
	}
	for _, a := range n.Attr {
		if ascii.Lower(a.Key) == "charset" {
			return true
		}
	}
	return false
}

func firstElementChild(n *html.Node) *html.Node {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode {
			return c
		}
	}
	return nil
}

// verify parses the prepared document as the browser will and checks what
// PrepareDocument promises of it.
func verify(out []byte, pre string, standalone bool) error {
	root, err := html.Parse(bytes.NewReader(out))
	if err != nil {
		return fmt.Errorf("server: parse the prepared document: %w", err)
	}
	first := findElement(root, atom.Script)
	if first == nil || first.FirstChild == nil || first.FirstChild.Data != pre || first.Namespace != "" {
		return errors.New("server: the app document does not keep the prelude as its first script when parsed again; simplify the markup before its first element")
	}
	if standalone {
		if p := first.PrevSibling; p == nil || p.Type != html.ElementNode || !isCSPMeta(p, HostCSPMeta()) || first.Parent.DataAtom != atom.Head {
			return errors.New("server: the app document does not keep the Trusted Types policy right before the prelude when parsed again; simplify the markup before its first element")
		}
	}
	if n := strip(root); n > 0 {
		return fmt.Errorf("server: the app document does not survive its own serialization (%d resource hint, nested frame, srcdoc or refresh left after parsing it again); simplify its markup", n)
	}
	return nil
}

// strip removes the blocked links and metas, nested context elements and
// srcdoc attributes under n, holds link addresses and opens closed
// declarative shadow roots, and returns how many things it changed.
func strip(n *html.Node) int {
	removed := 0
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode {
			if isBlockedLink(c) || isBlockedMeta(c) || isNestedContext(c) {
				n.RemoveChild(c)
				removed++
				c = next
				continue
			}
			kept := c.Attr[:0]
			for _, a := range c.Attr {
				if ascii.Lower(a.Key) == "srcdoc" {
					removed++
					continue
				}
				if a.Key == "href" && a.Namespace == "" && isHTMLLink(c) && NeedsHold(a.Val) {
					a.Val = HeldLinkPrefix + a.Val
					removed++
				}
				if isClosedShadowRoot(c, a) {
					a.Val = "open"
					removed++
				}
				kept = append(kept, a)
			}
			c.Attr = kept
		}
		removed += strip(c)
		c = next
	}
	return removed
}

// HeldLinkPrefix is what an HTML link's href attribute holds before the
// address it was given (frame.HeldLinkPrefix): Chromium preconnects to the
// origin of an <a> or <area> when the pointer is pressed on it, before any
// script hears of the press, so the address stays out of its href until
// the user follows it (the runtime routes the click to the host's open-url
// dialog). The prelude does the same on every script path, and answers the
// address to every reader of href (docs/security.md).
var HeldLinkPrefix = frame.HeldLinkPrefix[0]

// NeedsHold reports whether an HTML link's href value v is an address
// Chromium would preconnect to: not empty, not an in-page #… link, and
// with no scheme other than http or https, as the URL parser reads it
// (C0 controls and spaces before it skipped, tabs and newlines dropped). A
// relative address is held too: a <base> could send it anywhere. A held
// value has the prefix's scheme, so holding twice changes nothing.
func NeedsHold(v string) bool {
	var scheme []byte
	started := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\t' || c == '\n' || c == '\r' || (!started && c <= ' ') {
			continue
		}
		if !started && c == '#' {
			return false
		}
		started = true
		if c == ':' {
			s := string(scheme)
			return s == "" || s == "http" || s == "https"
		}
		l := c | 0x20
		if (l >= 'a' && l <= 'z') || (len(scheme) > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			scheme = append(scheme, l)
			continue
		}
		return true // a relative address
	}
	return started
}

// isClosedShadowRoot reports whether a is the shadowrootmode attribute of
// an HTML <template> making a closed declarative shadow root.
func isClosedShadowRoot(n *html.Node, a html.Attribute) bool {
	return n.Namespace == "" && n.DataAtom == atom.Template && a.Namespace == "" &&
		a.Key == "shadowrootmode" && ascii.Lower(a.Val) == "closed"
}

// isHTMLLink reports whether n is an HTML <a> or <area>: the elements
// Chromium preconnects for (an SVG <a> is not one of them).
func isHTMLLink(n *html.Node) bool {
	return n.Namespace == "" && (n.DataAtom == atom.A || n.DataAtom == atom.Area)
}

// isBlockedLink reports whether n is a link element (in any namespace)
// whose rel has a blocked token (linkhint.BlockedRel: frame.BlockedLinkRels).
func isBlockedLink(n *html.Node) bool {
	if ascii.Lower(n.Data) != "link" {
		return false
	}
	for _, a := range n.Attr {
		if ascii.Lower(a.Key) == "rel" {
			if _, blocked := linkhint.BlockedRel(a.Val); blocked {
				return true
			}
		}
	}
	return false
}

// isNestedContext reports whether n is one of the elements that make a
// nested browsing context (in any namespace: what is removed cannot be
// read differently).
func isNestedContext(n *html.Node) bool {
	name := ascii.Lower(n.Data)
	for _, e := range frame.NestedContextElements {
		if name == e {
			return true
		}
	}
	return false
}

// isBlockedMeta reports whether n is a <meta http-equiv> that refreshes
// (a navigation) or carries a Link header (hints).
func isBlockedMeta(n *html.Node) bool {
	if ascii.Lower(n.Data) != "meta" {
		return false
	}
	for _, a := range n.Attr {
		if ascii.Lower(a.Key) == "http-equiv" {
			switch ascii.Lower(strings.Trim(a.Val, " \t\n\f\r")) {
			case "refresh", "link":
				return true
			}
		}
	}
	return false
}

// findElement returns the first HTML element a in document order.
func findElement(n *html.Node, a atom.Atom) *html.Node {
	if n.Type == html.ElementNode && n.DataAtom == a && n.Namespace == "" {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := findElement(c, a); f != nil {
			return f
		}
	}
	return nil
}
