package pack

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"
	"golang.org/x/net/html"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/linkhint"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// emptyFS has no files: a page given as HTML alone references none.
type emptyFS struct{}

func (emptyFS) Open(name string) (fs.File, error) {
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// runtime is the runtime the page gets: Options.Runtime as given, unless it
// is nil (the Snug runtime) or the MCP flavour; then the variant with only
// the capability members the page references (see shake.go), or the whole
// runtime with a note when the page reaches snug dynamically.
func (b *builder) runtime() []byte {
	target := "snug"
	switch {
	case b.opts.Runtime == nil:
	case bytes.Equal(b.opts.Runtime, runtimejs.ScriptMCP):
		target = "mcp"
	default:
		return b.opts.Runtime
	}
	var texts []string
	for _, p := range append(append([]part(nil), b.parts...), b.tail...) {
		if p.slot == nil {
			texts = append(texts, p.text)
		} else if !p.slot.skip {
			texts = append(texts, p.slot.content)
		}
	}
	u := findSnugUse(texts)
	var rt []byte
	if u.dynamic != "" {
		b.diagAt(-1, SeverityNote, "runtime.full", "the app gets the whole runtime: "+u.dynamic,
			"the build injects only the snug members an app names (snug.ask, const {db} = snug, …) and cannot tell which members a dynamic use reaches",
			"name the members you use (snug.ask(…), snug.db.get(…)) to get a smaller runtime")
		rt, _ = runtimejs.Shaken(target, func(string) bool { return true })
	} else {
		rt, _ = runtimejs.Shaken(target, func(m string) bool { return u.members[m] })
	}
	if b.usesModals() {
		rt = append(append(bytes.Clone(rt), '\n'), runtimejs.Injected(runtimejs.Modals)...)
	}
	return rt
}

// alertWord is the word alert as an identifier (not part of a longer one),
// a member of the window, or a computed key. Every match contains "alert",
// which usesModals looks for first (compiled on first use: nothing runs at
// init).
var alertWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?:^|[^\w$.])alert\b|(?:window|self|globalThis)\.alert\b|\[\s*["'\x60]alert["'\x60]\s*\]`)
})

// usesModals reports whether the page may call alert() (the word in its
// scripts) or use a <dialog> (the word anywhere): such an app gets
// runtimejs.Modals, which shows an alert's message in the page and closes a
// method="dialog" form's dialog, both of which the runner's sandbox
// refuses. A false positive only costs the app its bytes (about 360 B
// min+gzip).
func (b *builder) usesModals() bool {
	alert := func(s string) bool { return strings.Contains(s, "alert") && alertWord().MatchString(s) }
	for _, p := range append(append([]part(nil), b.parts...), b.tail...) {
		switch {
		case p.slot == nil:
			if hasWordFold(p.text, "dialog") {
				return true
			}
		case !p.slot.skip && (hasWordFold(p.slot.content, "dialog") || p.slot.script && alert(p.slot.content)):
			return true
		}
	}
	return false
}

// hasWordFold reports whether s has word (lower-case ASCII letters, no k
// or s, whose folds include non-ASCII letters) in any case with a word
// boundary on both sides: what (?i)\bword\b matches (\b is ASCII), in one
// pass instead of the regexp's backtracking over a whole bundle.
func hasWordFold(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		if s[i]|0x20 != word[0] || !strings.EqualFold(s[i:i+len(word)], word) {
			continue
		}
		if (i == 0 || !isWordByte(s[i-1])) && (i+len(word) == len(s) || !isWordByte(s[i+len(word)])) {
			return true
		}
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// normalizeNewlines does what the HTML parser does to an element's text, so
// a hash of the text we write matches the text the browser hashes.
func normalizeNewlines(s string) string {
	if !strings.Contains(s, "\r") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

func cspHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// assemble escapes and splices the bundled code back into the page, adds
// the head the build owns (charset, CSP, missing metadata, the runtime) and
// proves the result by parsing it.
func (b *builder) assemble() ([]byte, error) {
	rt, _ := escapeJS(normalizeNewlines(string(b.runtime())))
	rtSlot := &slot{open: "<script>", close: "</script>", content: rt, script: true}

	var slots []*slot
	var scriptHashes, styleHashes []string
	scriptHashes = append(scriptHashes, cspHash(rt))
	fixups := []*slot{}
	for _, p := range append(append([]part(nil), b.parts...), b.tail...) {
		if p.slot != nil && !p.slot.skip {
			fixups = append(fixups, p.slot)
		}
	}
	for _, s := range fixups {
		s.content = normalizeNewlines(s.content)
		if s.raw {
			s.content = strings.ReplaceAll(s.content, "\x00", "\uFFFD")
		}
		if s.script {
			if esc, changed := escapeJS(s.content); changed && !s.raw {
				if err := checkJS(esc, s == b.modSlot); err != nil {
					return nil, fmt.Errorf("escaping an inlined script left it invalid (%v); please report this", err)
				}
				s.content = esc
			}
			scriptHashes = append(scriptHashes, cspHash(s.content))
		} else {
			s.content = escapeCSS(s.content)
			styleHashes = append(styleHashes, cspHash(s.content))
		}
		slots = append(slots, s)
	}
	slots = append(slots, rtSlot)

	var head strings.Builder
	head.WriteString(`<meta charset="utf-8">`)
	head.WriteString(`<meta http-equiv="Content-Security-Policy" content="` + escapeAttr(b.csp(dedupe(scriptHashes), dedupe(styleHashes))) + `">`)
	for _, f := range announceFields() {
		if _, ok := b.meta[f.Prop]; !ok && f.Required {
			head.WriteString(`<meta name="` + f.Meta + `" content="` + escapeAttr(b.defaultMeta(f.Prop)) + `">`)
		}
	}
	head.WriteString(rtSlot.open + rtSlot.content + rtSlot.close)

	at := b.headAt
	if at < 0 {
		at = b.afterDoctype
	}
	if b.firstElem >= 0 && b.firstElem < at {
		at = b.firstElem
	}
	end := b.bodyEnd
	if end < 0 || end < at {
		end = len(b.parts)
	}
	var out bytes.Buffer
	write := func(ps []part) {
		for _, p := range ps {
			if p.slot == nil {
				out.WriteString(p.text)
			} else if !p.slot.skip {
				out.WriteString(p.slot.open + p.slot.content + p.slot.close)
			}
		}
	}
	write(b.parts[:at])
	out.WriteString(head.String())
	write(b.parts[at:end])
	write(b.tail)
	write(b.parts[end:])
	if err := verify(out.Bytes(), slots); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func dedupe(l []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range l {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// checkJS parses escaped code again.
func checkJS(code string, module bool) error {
	opts := api.TransformOptions{Loader: api.LoaderJS, Target: target, MinifySyntax: minifySyntax, MinifyIdentifiers: minifyIdentifiers, LogLevel: api.LogLevelSilent}
	if module {
		opts.Format = api.FormatESModule
	}
	r := api.Transform(code, opts)
	if len(r.Errors) > 0 {
		return fmt.Errorf("%s", r.Errors[0].Text)
	}
	return nil
}

// verify parses the output as a browser would and checks that it holds no
// resource hint (the page's were refused or dropped, so one here came out
// of inlined code) and that every inlined script and style came out as one
// element with its whole text: nothing in the app's code ended an element
// early or swallowed the page.
func verify(doc []byte, slots []*slot) error {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("the output does not parse as HTML: %w", err)
	}
	// One parse serves both checks: linkhint reads the same tree.
	if hs := linkhint.FindParsed(doc, root); len(hs) > 0 {
		return fmt.Errorf("the built page would hold %s (from inlined code placed inside <svg> or <math>, where its text is markup); Chromium acts on a hint whatever the CSP says, so the build stops", hs[0])
	}
	texts := map[string]int{}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style") {
			var t strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					t.WriteString(c.Data)
				}
			}
			texts[n.Data+"\x00"+t.String()]++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	for _, s := range slots {
		tag := "style"
		if s.script {
			tag = "script"
		}
		k := tag + "\x00" + s.content
		if texts[k] == 0 {
			return fmt.Errorf("an inlined <%s> does not survive parsing the output intact; please report this", tag)
		}
		texts[k]--
	}
	return nil
}

// csp renders the sandbox's policy for a meta tag: the inline allowance of
// script-src and style-src becomes the hashes of what the build inlined
// (unless the page has inline event handlers, which hashes cannot allow),
// style attributes stay allowed (style-src-attr), and directives a meta tag
// cannot carry are left out.
func (b *builder) csp(scriptHashes, styleHashes []string) string {
	var ds []string
	hasAttr := false
	for _, d := range sandboxCSP() {
		if frame.MetaIgnores(d.Name) {
			continue
		}
		if d.Name == "style-src-attr" {
			hasAttr = true
		}
		var src []string
		for _, s := range d.Sources {
			if s == "'unsafe-inline'" {
				switch {
				case d.Name == "script-src" && !b.handlers:
					src = append(src, scriptHashes...)
					continue
				case d.Name == "style-src":
					src = append(src, styleHashes...)
					continue
				}
			}
			src = append(src, s)
		}
		if len(src) == 0 {
			src = []string{"'none'"}
		}
		ds = append(ds, d.Name+" "+strings.Join(src, " "))
	}
	if !hasAttr {
		ds = append(ds, "style-src-attr 'unsafe-inline'")
	}
	return strings.Join(ds, "; ")
}

func (b *builder) manifest() Manifest {
	return Manifest{
		AppID:        b.metaValue("appId"),
		DisplayName:  b.metaValue("displayName"),
		Description:  b.metaValue("description"),
		IconEmoji:    b.metaValue("iconEmoji"),
		IconColor:    b.metaValue("iconColor"),
		Capabilities: b.usedCapabilities(),
	}
}
