// Package site is the runner page: the browser side of snuggen serve and of
// any host built on hostkit. Its sources (src/: plain HTML, CSS and ES
// modules, no framework) are embedded and bundled with esbuild's Go API the
// first time the page is asked for; bundling is deterministic, so the same
// binary always serves the same bytes.
//
// The page shows the installed apps, runs each app instance in an
// <iframe sandbox="allow-scripts"> loaded by URL (each app's document from
// a site of its own, so each app gets its own renderer process), shows the host's own
// confirm dialogs, and relays frames to the Go host over one WebSocket (the
// protocol is in docs/architecture.md, "The relay"). Its limit: it decides
// nothing. Every frame it relays is parsed and judged again by the host; the
// one frame it keeps back is one whose JSON is past the largest size class
// (MaxRelayedFrameBytes), which the relay would answer by closing the whole
// connection: the page answers it with the host's own answer (computed here
// from frame.Parse, see tooLarge) and shows it rejected.
package site

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/frame"
)

//go:embed src
var src embed.FS

// Page is the built runner page.
type Page struct {
	// HTML is the whole page, its script and style inlined.
	HTML []byte
	// CSP is the page's Content-Security-Policy: the inlined script and
	// style are allowed by hash and nothing else runs; frames only from the
	// page's own origin; connections only to its own origin (the relay
	// WebSocket). A server that serves app documents from other origins
	// sends CSPWithFrames instead.
	CSP string

	directives []string // CSP's directives, frame-src last
}

// CSPWithFrames returns the page's policy with frame-src set to sources
// (the origins the server serves app documents from) instead of 'self'.
func (p *Page) CSPWithFrames(sources ...string) string {
	if len(sources) == 0 {
		return p.CSP
	}
	ds := append([]string(nil), p.directives...)
	ds[len(ds)-1] = "frame-src " + strings.Join(sources, " ")
	return strings.Join(ds, "; ")
}

var build = sync.OnceValues(buildPage)

// Build returns the runner page, bundling it on the first call.
func Build() (*Page, error) { return build() }

const (
	cssMarker = "/*CSS*/"
	jsMarker  = "/*JS*/"
)

func buildPage() (*Page, error) {
	html, err := fs.ReadFile(src, "src/index.html")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	js, err := bundleJS()
	if err != nil {
		return nil, err
	}
	css, err := minifyCSS()
	if err != nil {
		return nil, err
	}
	// Inlined text must not be able to close its element or open a comment
	// that swallows the rest of the page.
	for _, bad := range []string{"</script", "<!--", "<script"} {
		if bytes.Contains(bytes.ToLower(js), []byte(bad)) {
			return nil, fmt.Errorf("site: bundled script contains %q; rewrite the source so it does not", bad)
		}
	}
	if bytes.Contains(bytes.ToLower(css), []byte("</style")) {
		return nil, errors.New(`site: bundled style contains "</style"`)
	}
	if bytes.Count(html, []byte(cssMarker)) != 1 || bytes.Count(html, []byte(jsMarker)) != 1 {
		return nil, fmt.Errorf("site: src/index.html must hold %s and %s once each", cssMarker, jsMarker)
	}
	html = bytes.Replace(html, []byte(cssMarker), css, 1)
	html = bytes.Replace(html, []byte(jsMarker), js, 1)
	directives := []string{
		"default-src 'none'",
		"script-src " + hashSource(js),
		"style-src " + hashSource(css),
		"img-src data:",
		"connect-src 'self'",
		"base-uri 'none'",
		"form-action 'none'",
		"frame-ancestors 'none'",
		"frame-src 'self'",
	}
	return &Page{HTML: html, CSP: strings.Join(directives, "; "), directives: directives}, nil
}

func hashSource(b []byte) string {
	sum := sha256.Sum256(b)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// MaxRelayedFrameBytes is the largest frame the page relays: the largest
// size class of any frame type (R6). The relay closes the whole connection
// on a message past its read limit, so the page drops a bigger frame (and
// shows it rejected) rather than relaying it. The host still checks every
// frame against its own type's class.
var MaxRelayedFrameBytes = max(frame.MaxFrameBytes, frame.MaxDBFrameBytes, frame.MaxNetFrameBytes)

// generated is what the page's script reads from the generated frame
// package instead of restating it: esbuild defines the global SNUG_GEN as
// this object, and the bundle carries its values inline.
func generated() (map[string]any, error) {
	tl, err := tooLargeAnswers()
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"tooLarge":             tl,
		"maxRelayedFrameBytes": MaxRelayedFrameBytes,
		"codeParseFailed":      frame.CodeParseFailed,
		"typeHostReady":        frame.TypeHostReady,
		"typeAppEvent":         frame.TypeAppEvent,
		"typeAppResponse":      frame.TypeAppResponse,
		// Each of these the page delivers ends a request (an app-response
		// with streaming:true aside): every type some frame is answered with.
		"terminalTypes": answerTypes(),
		"eventResize":   frame.EventResize,
		"themeTokens":   frame.ThemeTokens,
		// The app iframe's allow attribute: the features the runner's
		// Permissions-Policy lets it delegate, and nothing more.
		"frameAllow": strings.Join(frame.PermissionsPolicyDelegated, "; "),
	}, nil
}

// answerTypes lists the types that answer a request (frame.AnswerType of
// every type), once each, in frame.Types order.
func answerTypes() []string {
	var out []string
	for _, t := range frame.Types {
		if a := frame.AnswerType(t); !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return out
}

// tooLarge is what the page needs to answer a frame too large to relay the
// way the host answers it (R1): the host reads v, then type, then the size
// class, which such a frame is past whatever its type. The answers are the
// host's own: frame.Parse's rejections of stand-in frames, answered by
// RejectError.Answer, each with the placeholder requestId the page replaces.
type tooLarge struct {
	Versions   []int `json:"versions"`   // frame.ProtocolVersions
	RecoverMin int   `json:"recoverMin"` // a recovered requestId's bounds, code points
	RecoverMax int   `json:"recoverMax"`
	// Answers are the distinct answer frames.
	Answers []json.RawMessage `json:"answers"`
	// ByType holds, per known type, the index of the answer to a frame of
	// that type whose v is not an integer, whose v is unsupported, and that
	// is past its size class.
	ByType map[string][3]int `json:"byType"`
	// Other holds the same for a frame whose type is not a known one: v not
	// an integer, v unsupported, type missing or not a string (a string
	// type the host does not know is ignored, R2: no answer).
	Other [3]int `json:"other"`
}

// tooLargeID is the requestId of the stand-in frames.
const tooLargeID = "x"

func tooLargeAnswers() (*tooLarge, error) {
	t := &tooLarge{
		Versions:   frame.ProtocolVersions,
		RecoverMin: frame.RecoverMinCodePoints,
		RecoverMax: frame.RecoverMaxCodePoints,
		ByType:     map[string][3]int{},
	}
	index := map[string]int{}
	add := func(a frame.Frame) (int, error) {
		b, err := frame.Marshal(a)
		if err != nil {
			return 0, fmt.Errorf("site: the host's answer %T: %w", a, err)
		}
		if i, ok := index[string(b)]; ok {
			return i, nil
		}
		index[string(b)] = len(t.Answers)
		t.Answers = append(t.Answers, b)
		return len(t.Answers) - 1, nil
	}
	reject := func(raw, rule string) (*frame.RejectError, error) {
		_, err := frame.Parse([]byte(raw))
		var rej *frame.RejectError
		if !errors.As(err, &rej) || !rej.HasRequestID || rej.RequestID != tooLargeID || len(rej.Violations) != 1 || rej.Violations[0].Rule != rule {
			return nil, fmt.Errorf("site: the host does not answer %.60s… for %s (%v)", raw, rule, err)
		}
		return rej, nil
	}
	answer := func(raw, rule string) (int, error) {
		rej, err := reject(raw, rule)
		if err != nil {
			return 0, err
		}
		return add(rej.Answer())
	}
	// The size rejection is the same for every type but for its answer's
	// type: it is read once, from a frame of the smallest class, and
	// answered as each type's.
	small := slices.MinFunc(frame.Types, func(a, b string) int { return frame.SizeClass(a) - frame.SizeClass(b) })
	q, err := json.Marshal(small)
	if err != nil {
		return nil, err
	}
	head := `{"requestId":"` + tooLargeID + `"`
	stand := head + `,"type":` + string(q) + `,"v":` + strconv.Itoa(frame.Version)
	size, err := reject(stand+strings.Repeat(" ", frame.SizeClass(small)-len(stand))+"}", frame.RuleFrameSize)
	if err != nil {
		return nil, err
	}
	unsupported := strconv.Itoa(slices.Max(frame.ProtocolVersions) + 1)
	rows := func(typ string) (row [3]int, err error) {
		if row[0], err = answer(head+typ+`}`, frame.RuleFrameVersion); err != nil {
			return row, err
		}
		row[1], err = answer(head+typ+`,"v":`+unsupported+`}`, frame.RuleFrameUnsupportedVersion)
		return row, err
	}
	for _, typ := range frame.Types {
		q, err := json.Marshal(typ)
		if err != nil {
			return nil, err
		}
		row, err := rows(`,"type":` + string(q))
		if err != nil {
			return nil, err
		}
		rej := *size
		rej.Type = typ
		if row[2], err = add(rej.Answer()); err != nil {
			return nil, err
		}
		t.ByType[typ] = row
	}
	if t.Other, err = rows(""); err != nil {
		return nil, err
	}
	t.Other[2], err = answer(head+`,"v":`+strconv.Itoa(frame.Version)+`}`, frame.RuleFrameType)
	if err != nil {
		return nil, err
	}
	return t, nil
}

func defines() (map[string]string, error) {
	g, err := generated()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("site: encode the generated constants: %w", err)
	}
	return map[string]string{"SNUG_GEN": string(b)}, nil
}

// bundleJS bundles src/main.js and its imports from the embedded sources.
func bundleJS() ([]byte, error) {
	define, err := defines()
	if err != nil {
		return nil, err
	}
	const ns = "site"
	plugin := api.Plugin{
		Name: "embedded-sources",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				if a.Kind == api.ResolveEntryPoint {
					return api.OnResolveResult{Path: path.Join("src", a.Path), Namespace: ns}, nil
				}
				if !strings.HasPrefix(a.Path, "./") && !strings.HasPrefix(a.Path, "../") {
					return api.OnResolveResult{}, fmt.Errorf("site: import %q from %s: only relative imports of files in site/src", a.Path, a.Importer)
				}
				return api.OnResolveResult{Path: path.Join(path.Dir(a.Importer), a.Path), Namespace: ns}, nil
			})
			b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: ns}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				data, err := fs.ReadFile(src, a.Path)
				if err != nil {
					return api.OnLoadResult{}, err
				}
				s := string(data)
				return api.OnLoadResult{Contents: &s, Loader: api.LoaderJS}, nil
			})
		},
	}
	res := api.Build(api.BuildOptions{
		EntryPoints:       []string{"main.js"},
		Bundle:            true,
		Write:             false,
		Format:            api.FormatIIFE,
		Platform:          api.PlatformBrowser,
		Target:            api.ES2022,
		MinifyWhitespace:  true,
		MinifySyntax:      true,
		MinifyIdentifiers: true,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		Outfile:           "runner.js",
		Plugins:           []api.Plugin{plugin},
		Define:            define,
		LogLevel:          api.LogLevelSilent,
	})
	if err := esbuildErr("bundle src/main.js", res.Errors); err != nil {
		return nil, err
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("site: bundle src/main.js: %d output files, want 1", len(res.OutputFiles))
	}
	return bytes.TrimSpace(res.OutputFiles[0].Contents), nil
}

func minifyCSS() ([]byte, error) {
	data, err := fs.ReadFile(src, "src/runner.css")
	if err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	res := api.Transform(string(data), api.TransformOptions{
		Loader:           api.LoaderCSS,
		MinifyWhitespace: true,
		MinifySyntax:     true,
		Charset:          api.CharsetUTF8,
		Sourcefile:       "src/runner.css",
		LegalComments:    api.LegalCommentsNone,
		LogLevel:         api.LogLevelSilent,
	})
	if err := esbuildErr("minify src/runner.css", res.Errors); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(res.Code), nil
}

func esbuildErr(what string, msgs []api.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	var b strings.Builder
	for _, m := range msgs {
		if m.Location != nil {
			fmt.Fprintf(&b, "\n%s:%d:%d: error: %s", m.Location.File, m.Location.Line, m.Location.Column, m.Text)
		} else {
			fmt.Fprintf(&b, "\nerror: %s", m.Text)
		}
	}
	return fmt.Errorf("site: %s:%s", what, b.String())
}
