// Package linkhint finds, in an HTML document, the elements that make a
// browser open a connection of its own accord whatever the page's CSP says:
// <link> elements whose rel holds a resource hint (frame.BlockedLinkRels:
// preconnect, dns-prefetch, prefetch, prerender, preload, modulepreload)
// and <meta http-equiv=Link>.
//
// It reads the document the way the browser does, with the HTML parser's
// tree builder (golang.org/x/net/html), not a tokenizer: a <link> that a
// token scan takes for text (inside <svg><style>, after a breakout tag in
// foreign content, inside <template>, <noscript> or <math>) is found where
// the parser puts it, and so is a hint inside an <iframe srcdoc> document.
// Each hint carries the byte range of its start tag in the document, so a
// packager can name file:line:col and a server can remove it (Strip).
//
// The packager refuses what Find reports; hostkit's document strip can use
// Strip.
package linkhint

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/ascii"
)

// Hint is one element that opens a connection by itself.
type Hint struct {
	// Tag is "link" or "meta" (a <meta http-equiv=Link>, whose content can
	// carry the same hints as a Link header).
	Tag string
	// Rel is the blocked rel token, lower case ("" for a meta).
	Rel string
	// Href is the link's href, or the meta's content, as written.
	Href string
	// Start and End are the byte offsets in the document of the element's
	// start tag (End is just past its ">"); both are -1 when the place
	// could not be found. For a hint inside an <iframe srcdoc>, they are
	// the iframe's start tag.
	Start, End int
	// InSrcdoc is set when the hint is inside an <iframe srcdoc> document.
	InSrcdoc bool
}

// String describes the hint for a message: `<link rel=preconnect href="…">`.
func (h Hint) String() string {
	s := fmt.Sprintf("<link rel=%s href=%q>", h.Rel, h.Href)
	if h.Tag == "meta" {
		s = fmt.Sprintf("<meta http-equiv=Link content=%q>", h.Href)
	}
	if h.InSrcdoc {
		s += " inside <iframe srcdoc>"
	}
	return s
}

// BlockedRel returns the first token of a rel attribute's value that is a
// blocked resource hint. Tokens are split on ASCII whitespace and compared
// ASCII case-insensitively, as the browser does.
func BlockedRel(rel string) (string, bool) {
	for _, tok := range strings.FieldsFunc(rel, isSpace) {
		for _, b := range frame.BlockedLinkRels {
			if ascii.EqualFold(tok, b) {
				return b, true
			}
		}
	}
	return "", false
}

// maxSrcdocDepth bounds how deep Find follows <iframe srcdoc> documents
// inside each other; a deeper one is reported as a hint itself.
const maxSrcdocDepth = 4

// Find returns every hint in doc in document order. It parses doc twice,
// with scripting on (as an app runs) and off (so <noscript> content counts
// too; only when doc holds "<noscript"), and follows <iframe srcdoc>. The
// places of the hints (Start, End) cost one more parse of a marked copy,
// made only when there is a hint to place.
func Find(doc []byte) []Hint {
	return find(doc, nil, 0)
}

// FindParsed is Find for a caller that has parsed doc already:
// root must be html.Parse's tree of doc (scripting on), unchanged. It
// saves Find's own parse with scripting on.
func FindParsed(doc []byte, root *html.Node) []Hint {
	return find(doc, root, 0)
}

func find(doc []byte, root *html.Node, depth int) []Hint {
	low := lowerBytes(doc)
	if !mayHold(low) {
		return nil
	}
	var out []Hint
	seen := map[Hint]bool{}
	for _, scripting := range []bool{true, false} {
		if !scripting && !bytes.Contains(low, []byte("<noscript")) {
			break
		}
		r := root
		if !scripting {
			r = nil
		}
		for _, h := range findOnce(doc, r, scripting, depth) {
			if !seen[h] {
				seen[h] = true
				out = append(out, h)
			}
		}
	}
	sortHints(out)
	return out
}

// mayHold is a fast, exact pre-check on the lower-cased document: element
// and attribute names never come from character references, so a document
// without these strings has no hint.
func mayHold(low []byte) bool {
	return bytes.Contains(low, []byte("<link")) || bytes.Contains(low, []byte("<meta")) || bytes.Contains(low, []byte("srcdoc"))
}

// markAttr is the attribute Find adds to each candidate start tag in a copy
// of the document to learn where the parser's elements came from.
const markAttr = "data-snug-linkhint-at"

// candidate tag names whose places Find records.
var marked = []string{"link", "meta", "iframe"}

// mark returns doc with ` data-snug-linkhint-at=N ` written after the name of
// every "<link", "<meta" and "<iframe" that a start tag could begin (name
// followed by ASCII whitespace, "/" or ">"), N being the offset of "<" in
// doc. The inserted text has no quote, "<", ">", "&" or "--", so wherever
// the original bytes sit (text, a comment, a quoted or unquoted attribute
// value, script or style text) the structure of the parse is unchanged;
// Find still decides from the unmarked document and uses the marks only for
// places.
func mark(doc []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(doc) + 64)
	last := 0
	for i := 0; i < len(doc); i++ {
		if doc[i] != '<' {
			continue
		}
		for _, name := range marked {
			j := i + 1 + len(name)
			if j >= len(doc) || !hasPrefixFold(doc[i+1:], name) {
				continue
			}
			if c := doc[j]; c == '/' || c == '>' || isSpace(rune(c)) {
				out.Write(doc[last:j])
				out.WriteString(" " + markAttr + "=" + strconv.Itoa(i) + " ")
				last = j
			}
		}
	}
	out.Write(doc[last:])
	return out.Bytes()
}

func parse(doc []byte, scripting bool) (*html.Node, error) {
	return html.ParseWithOptions(bytes.NewReader(doc), html.ParseOptionEnableScripting(scripting))
}

// candidates lists link, meta and iframe elements of every namespace in
// tree order, <template> contents included.
func candidates(root *html.Node) []*html.Node {
	var out []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "link", "meta", "iframe":
				out = append(out, n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// findOnce reads one parse of doc (root, or its own parse when root is
// nil).
func findOnce(doc []byte, root *html.Node, scripting bool, depth int) []Hint {
	if root == nil {
		var err error
		if root, err = parse(doc, scripting); err != nil {
			return nil // x/net/html reports only reader errors; doc is in memory
		}
	}
	elems := candidates(root)
	var out []Hint
	var of []int // the index in elems of each hint's element
	for i, n := range elems {
		switch n.Data {
		case "link":
			rel, _ := attr(n, "rel")
			if r, ok := BlockedRel(rel); ok {
				href, _ := attr(n, "href")
				out, of = append(out, Hint{Tag: "link", Rel: r, Href: href}), append(of, i)
			}
		case "meta":
			if eq, ok := attr(n, "http-equiv"); ok && ascii.EqualFold(strings.Trim(eq, " \t\n\f\r"), "link") {
				content, _ := attr(n, "content")
				out, of = append(out, Hint{Tag: "meta", Href: content}), append(of, i)
			}
		case "iframe":
			src, ok := attr(n, "srcdoc")
			if !ok {
				continue
			}
			var inner []Hint
			if depth >= maxSrcdocDepth {
				if mayHold(lowerBytes([]byte(src))) {
					inner = []Hint{{Tag: "link", Rel: "srcdoc", Href: "(nested too deep)"}}
				}
			} else {
				inner = find([]byte(src), nil, depth+1)
			}
			for _, h := range inner {
				h.InSrcdoc = true
				out, of = append(out, h), append(of, i)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	// Place each hint: the parse of a marked copy has the same elements,
	// each start tag carrying its offset in doc.
	var places []int
	if mroot, err := parse(mark(doc), scripting); err == nil {
		m := candidates(mroot)
		if len(m) == len(elems) {
			places = make([]int, len(m))
			for i, n := range m {
				places[i] = -1
				if n.Data != elems[i].Data {
					places = nil
					break
				}
				if v, ok := attr(n, markAttr); ok {
					if p, err := strconv.Atoi(v); err == nil && p >= 0 && p < len(doc) {
						places[i] = p
					}
				}
			}
		}
	}
	for k := range out {
		out[k].Start, out[k].End = -1, -1
		if places == nil {
			continue
		}
		if end := tagEnd(doc, places[of[k]]); end >= 0 {
			out[k].Start, out[k].End = places[of[k]], end
		}
	}
	return out
}

// tagEnd returns the offset just past the start tag at doc[start:], or -1.
func tagEnd(doc []byte, start int) int {
	if start < 0 || start >= len(doc) {
		return -1
	}
	z := html.NewTokenizer(bytes.NewReader(doc[start:]))
	if tt := z.Next(); tt != html.StartTagToken && tt != html.SelfClosingTagToken {
		return -1
	}
	return start + len(z.Raw())
}

func attr(n *html.Node, key string) (string, bool) {
	for _, a := range n.Attr {
		if a.Namespace == "" && a.Key == key {
			return a.Val, true
		}
	}
	return "", false
}

func sortHints(hs []Hint) {
	// Insertion sort by place (unknown places last): documents hold few.
	for i := 1; i < len(hs); i++ {
		for j := i; j > 0 && less(hs[j], hs[j-1]); j-- {
			hs[j], hs[j-1] = hs[j-1], hs[j]
		}
	}
}

func less(a, b Hint) bool {
	if (a.Start < 0) != (b.Start < 0) {
		return a.Start >= 0
	}
	return a.Start < b.Start
}

// ErrUnplaced is returned by Strip when a hint's start tag could not be
// found in the document, so it cannot be removed.
var ErrUnplaced = errors.New("linkhint: a resource hint whose place in the document is unknown")

// Strip returns doc without the start tag of any hint Find reports (a hint
// inside an <iframe srcdoc> takes the iframe's start tag with it). Removing
// bytes can join text into a new tag ("<<link …>link …>"), so Strip
// repeats until Find reports nothing; each round removes at least one tag,
// so it ends. A hint it cannot place is an error (ErrUnplaced): the caller
// must not serve the document.
func Strip(doc []byte) ([]byte, error) {
	for {
		hs := Find(doc)
		if len(hs) == 0 {
			return doc, nil
		}
		var out bytes.Buffer
		last := 0
		for _, h := range hs {
			if h.Start < 0 {
				return nil, fmt.Errorf("%w: %s", ErrUnplaced, h)
			}
			if h.Start < last {
				continue // two hints of one iframe
			}
			out.Write(doc[last:h.Start])
			last = h.End
		}
		out.Write(doc[last:])
		doc = out.Bytes()
	}
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

func hasPrefixFold(s []byte, p string) bool {
	if len(s) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if ascii.LowerByte(s[i]) != p[i] {
			return false
		}
	}
	return true
}

// lowerBytes is an ASCII-lower-case copy of s, the same length.
func lowerBytes(s []byte) []byte {
	out := make([]byte, len(s))
	for i, c := range s {
		out[i] = ascii.LowerByte(c)
	}
	return out
}
