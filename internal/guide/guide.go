// Package guide renders the authoring guide that `snuggen prompt` prints for
// an LLM writing a Snug app. Nothing in it is written twice: the API section
// comes from the runtime's typings (runtime-js/snug.d.ts), the limits and
// lists from the generated frame package, the reply contract from the agent
// bridge's own system prompt, and the list of mistakes from running the
// packager on a one-line example of each, so the guide says what the tools do.
package guide

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/template"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/store"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
	"github.com/snuggen/snuggen/schemas"
	"github.com/snuggen/snuggen/templates"
)

// Member is one documented entry point of the runtime.
type Member struct {
	Name    string // e.g. "snug.db.exec"
	Doc     string // the doc comment's prose
	Example string // the @example block
}

// Mistake is one thing the packager rejects, as the packager words it.
type Mistake struct {
	Code    string
	Snippet string
	Why     string
	Fix     string
}

// Code is one row of the error registry an app can get (reserved codes
// left out), from schemas/rules.json.
type Code struct {
	Code      string
	Retryable bool // yes, or while attempts remain
	When      string
}

// Refusal is one kind of SQL the host's store refuses, as the store words it.
type Refusal struct {
	Snippet string
	Why     string
}

type data struct {
	AppIDMax, DisplayNameMax, DescriptionMax, IconEmojiMax, IconColorMax int
	CDNs, StripHeaders, Capabilities, ThemeTokens, ThemeEvent            string
	VirtualTables                                                        string
	ArtifactMiB, NetBodyMiB                                              int
	API                                                                  []Member
	ErrorDoc, ErrorExample                                               string
	Codes                                                                []Code
	RefusedSQL                                                           []Refusal
	ReplyContract                                                        string
	Diagnostics                                                          []Mistake
}

// Render returns the guide as Markdown.
func Render(ctx context.Context) (string, error) {
	members, err := API(runtimejs.Types)
	if err != nil {
		return "", err
	}
	var api []Member
	var errDoc Member
	for _, m := range members {
		if m.Name == "SnugError" {
			errDoc = m
			continue
		}
		api = append(api, m)
	}
	if errDoc.Example == "" {
		return "", errors.New("guide: snug.d.ts documents no SnugError example")
	}
	mistakes, err := Mistakes(ctx)
	if err != nil {
		return "", err
	}
	codes, err := Codes()
	if err != nil {
		return "", err
	}
	refused, err := RefusedSQL(ctx)
	if err != nil {
		return "", err
	}
	d := data{
		CDNs:          quoteList(frame.CDNAllowlist),
		StripHeaders:  quoteList(frame.StripHeaders),
		Capabilities:  quoteList(capabilityNames()),
		ThemeTokens:   quoteList(frame.ThemeTokens),
		ThemeEvent:    "`" + frame.EventThemeChange + "`",
		VirtualTables: quoteList(frame.SQLVirtualTableModules),
		Codes:         codes,
		RefusedSQL:    refused,
		ArtifactMiB:   frame.MaxArtifactBytes >> 20,
		NetBodyMiB:    frame.MaxNetResponseBodyBytes >> 20,
		API:           api,
		ErrorDoc:      errDoc.Doc,
		ErrorExample:  errDoc.Example,
		ReplyContract: agent.DefaultSystemPrompt([]byte(`{"type":"object","required":["answer"],"properties":{"answer":{"type":"string"}}}`)),
		Diagnostics:   mistakes,
	}
	d.AppIDMax, d.DisplayNameMax, d.DescriptionMax = frame.AppAnnounceAppIDMaxLength, frame.AppAnnounceDisplayNameMaxLength, frame.AppAnnounceDescriptionMaxLength
	d.IconEmojiMax, d.IconColorMax = frame.AppAnnounceIconEmojiMaxLength, frame.AppAnnounceIconColorMaxLength
	t, err := template.New("prompt").Option("missingkey=error").Parse(templates.Guide)
	if err != nil {
		return "", fmt.Errorf("guide: template: %w", err)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, d); err != nil {
		return "", fmt.Errorf("guide: template: %w", err)
	}
	return buf.String(), nil
}

func quoteList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = "`" + s + "`"
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// dtsRE holds the patterns API reads a .d.ts with, compiled on first use:
// nothing runs at init.
var dtsRE = sync.OnceValue(func() (r struct{ docStart, nsOpen, nsClose, member, ifaceRE *regexp.Regexp }) {
	r.docStart = regexp.MustCompile(`^\s*/\*\*`)
	r.nsOpen = regexp.MustCompile(`^\s*(\w+): \{\s*$`)
	r.nsClose = regexp.MustCompile(`^\s*\};?\s*$`)
	r.member = regexp.MustCompile(`^\s*(?:readonly\s+)?(\w+)\s*[:<(]`)
	r.ifaceRE = regexp.MustCompile(`^export interface (\w+)`)
	return r
})

// API reads the documented members of the Snug interface, and the SnugError
// interface's example, from a .d.ts source. Each member needs a doc comment
// with an @example; a member of Snug without one is an error, so the typings
// cannot grow an undocumented method.
func API(dts string) ([]Member, error) {
	re := dtsRE()
	lines := strings.Split(dts, "\n")
	var out []Member
	var iface string
	var ns []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := re.ifaceRE.FindStringSubmatch(line); m != nil {
			iface, ns = m[1], nil
			continue
		}
		if iface != "Snug" && !re.docStart.MatchString(line) {
			continue
		}
		if m := re.nsOpen.FindStringSubmatch(line); m != nil {
			ns = append(ns, m[1])
			continue
		}
		if re.nsClose.MatchString(line) && len(ns) > 0 {
			ns = ns[:len(ns)-1]
			continue
		}
		if !re.docStart.MatchString(line) {
			continue
		}
		var comment []string
		for ; i < len(lines); i++ {
			comment = append(comment, lines[i])
			if strings.Contains(lines[i], "*/") {
				break
			}
		}
		// The declaration follows the comment.
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) {
			break
		}
		doc, example := splitComment(comment)
		if m := re.ifaceRE.FindStringSubmatch(lines[j]); m != nil {
			if m[1] == "SnugError" && example != "" {
				out = append(out, Member{Name: "SnugError", Doc: doc, Example: example})
			}
			continue
		}
		if iface != "Snug" {
			continue
		}
		m := re.member.FindStringSubmatch(lines[j])
		if m == nil || re.nsOpen.MatchString(lines[j]) {
			continue // a namespace's own comment
		}
		name := strings.Join(append(append([]string{"snug"}, ns...), m[1]), ".")
		if example == "" {
			if strings.Contains(lines[j], "(") || len(ns) > 0 {
				return nil, fmt.Errorf("guide: snug.d.ts:%d: %s has no @example; every method needs one", j+1, name)
			}
			continue
		}
		out = append(out, Member{Name: name, Doc: doc, Example: example})
	}
	if len(out) == 0 {
		return nil, errors.New("guide: snug.d.ts has no documented members")
	}
	return out, nil
}

// splitComment turns a /** … */ block into its prose and its @example code.
func splitComment(block []string) (doc, example string) {
	var prose, code []string
	inExample := false
	for _, l := range block {
		l = strings.TrimSpace(l)
		l = strings.TrimPrefix(l, "/**")
		l = strings.TrimSuffix(l, "*/")
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "* ") || l == "*" {
			l = strings.TrimPrefix(strings.TrimPrefix(l, "*"), " ")
		}
		if strings.HasPrefix(l, "@example") {
			inExample = true
			continue
		}
		if inExample {
			code = append(code, l)
			continue
		}
		if l != "" {
			prose = append(prose, l)
		}
	}
	// Inside a .d.ts the example lost its indentation to the "* " prefix;
	// re-read it from the raw block to keep it.
	if inExample {
		code = rawExample(block)
	}
	return strings.Join(prose, " "), strings.TrimRight(strings.Join(code, "\n"), "\n ")
}

func rawExample(block []string) []string {
	var code []string
	in := false
	for _, l := range block {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(strings.TrimPrefix(t, "* "), "@example") {
			in = true
			continue
		}
		if !in || strings.HasPrefix(t, "*/") {
			continue
		}
		if k := strings.Index(l, "* "); k >= 0 && strings.TrimSpace(l[:k]) == "" {
			code = append(code, strings.TrimSuffix(l[k+2:], "*/"))
		} else if t == "*" {
			code = append(code, "")
		}
	}
	return code
}

// probes are one-line examples of each mistake the guide warns about; the
// packager's own diagnostic for each becomes the guide's text.
var probes = []struct{ snippet, html string }{
	{"`fetch(url)`", `<script type="module">fetch("https://api.example.com/x");</script>`},
	{"`localStorage`", `<script type="module">localStorage.setItem("k", "v");</script>`},
	{"`location.href = url`", `<script type="module">location.href = "https://example.com/";</script>`},
	{"`top.location = url`", `<script type="module">top.location.href = "https://example.com/";</script>`},
	{"`window.open(url)`", `<script type="module">window.open("https://example.com/");</script>`},
	{"`confirm(question)`", `<script type="module">if (confirm("Delete it?")) console.log("deleted");</script>`},
	{"`el.innerHTML = '<button onclick=\"…\">'`", `<ul id="l"></ul><script type="module">document.getElementById("l").innerHTML = '<li><button onclick="del(1)">x</button></li>';</script>`},
	{"`<a href=\"about.html\">`", `<a href="about.html">About</a>`},
	{"`<form action=…>`", `<form action="https://example.com/submit"><button>Send</button></form>`},
	{"`<script src=\"https://example.com/lib.js\">`", `<script src="https://example.com/lib.js"></script>`},
	{"`<link rel=\"preconnect\">`", `<link rel="preconnect" href="https://example.com">`},
	{"`onclick=\"…\"`", `<button onclick="go()">Go</button><script>function go() {}</script>`},
	{"`PRAGMA user_version = 2`", `<script type="module">await snug.db.exec("PRAGMA user_version = 2");</script>`},
}

// ProbeHead is the head every probe page has, so the probes find only the
// mistake they show.
const ProbeHead = `<!doctype html><html><head><meta charset="utf-8">` +
	`<meta name="snug:app-id" content="guide.probe"><meta name="snug:display-name" content="Probe">` +
	`<title>Probe</title></head><body>`

// Mistakes builds each probe with the packager and returns its diagnostic.
func Mistakes(ctx context.Context) ([]Mistake, error) {
	var out []Mistake
	for _, p := range probes {
		res, _ := pack.Build(ctx, pack.Options{Path: "app.html", HTML: []byte(ProbeHead + p.html + "</body></html>"), Strict: true})
		if res == nil || len(res.Diagnostics) == 0 {
			return nil, fmt.Errorf("guide: the packager finds nothing wrong with %s; the guide should not warn about it", p.snippet)
		}
		d := res.Diagnostics[0]
		why, fix := d.Why, d.Fix
		if why == "" {
			why = d.Message
		}
		out = append(out, Mistake{Code: d.Code, Snippet: p.snippet, Why: strings.TrimSuffix(why, "."), Fix: capitalize(strings.TrimSuffix(fix, "."))})
	}
	return out, nil
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// capabilityNames are host-ready's capability flags, as the generated
// frame.Capabilities names them in JSON (auth aside: it is the host's).
func capabilityNames() []string {
	var out []string
	t := reflect.TypeFor[frame.Capabilities]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "auth" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// Codes reads the error registry from schemas/rules.json: every code a host
// may send (reserved ones left out), with when it comes.
func Codes() ([]Code, error) {
	raw, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil {
		return nil, fmt.Errorf("guide: %w", err)
	}
	var rules struct {
		Errors []struct {
			Code      string `json:"code"`
			Retryable any    `json:"retryable"`
			Reserved  bool   `json:"reserved"`
			When      string `json:"when"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(raw, &rules); err != nil {
		return nil, fmt.Errorf("guide: rules.json: %w", err)
	}
	var out []Code
	for _, e := range rules.Errors {
		if e.Reserved {
			continue
		}
		if !frame.Known(e.Code) {
			return nil, fmt.Errorf("guide: rules.json code %s is not in the generated registry; run snuggen gen", e.Code)
		}
		out = append(out, Code{Code: e.Code, Retryable: e.Retryable != false, When: strings.TrimSuffix(e.When, ".")})
	}
	return out, nil
}

// sqlProbes are statements apps write that the host's store refuses; the
// store's own message for each becomes the guide's text.
var sqlProbes = []struct{ snippet, sql string }{
	{"`ATTACH`", "attach database 'other.db' as other"},
	{"`BEGIN`/`COMMIT`", "begin"},
	{"a `PRAGMA` that writes", "pragma journal_mode = delete"},
	{"two statements in one call", "select 1; select 2"},
	{"names starting with `_snug_`", "create table _snug_notes (body text)"},
	{"virtual tables not listed below", "create virtual table t using dbstat"},
}

// RefusedSQL runs each probe against a real store in a temporary directory
// and returns the store's reason for refusing it.
func RefusedSQL(ctx context.Context) ([]Refusal, error) {
	dir, err := os.MkdirTemp("", "snug-guide-")
	if err != nil {
		return nil, fmt.Errorf("guide: %w", err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(dir, store.Options{})
	if err != nil {
		return nil, fmt.Errorf("guide: %w", err)
	}
	defer st.Close()
	var out []Refusal
	for _, p := range sqlProbes {
		_, err := st.Exec(ctx, "guide", p.sql, nil)
		var se *store.Error
		if !errors.As(err, &se) || se.Code != frame.CodeDBSQLError {
			return nil, fmt.Errorf("guide: the store does not refuse %q (%v); the guide should not say it does", p.sql, err)
		}
		out = append(out, Refusal{Snippet: p.snippet, Why: strings.TrimSuffix(se.Message, ".")})
	}
	return out, nil
}
