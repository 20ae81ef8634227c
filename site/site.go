// Package site is the runner page: the browser side of snuggen serve and of
// any host built on hostkit. Its sources (src/: plain HTML, CSS and ES
// modules, no framework) are bundled and minified by snuggen gen into
// dist/runner.js and dist/runner.css (committed, like runtime-js/dist, and
// checked by gen --check), so a host does not run esbuild when it starts:
// Build only puts them into src/index.html with the values the frame
// package computes (SNUG_GEN, defined before the bundle) and hashes them
// for the page's CSP.
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
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/csscolor"
)

//go:embed src/index.html
var indexHTML []byte

// The bundled script and minified style snuggen gen builds from src/.
var (
	//go:embed dist/runner.js
	bundledJS []byte
	//go:embed dist/runner.css
	bundledCSS []byte
)

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
	html := indexHTML
	js, err := pageScript()
	if err != nil {
		return nil, err
	}
	css := withoutHeader(bundledCSS)
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
// package instead of restating it: pageScript defines SNUG_GEN as this
// object before the bundle (src/gen.js reads it).
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
		// The requests a user's click raises (a link, an <a download>):
		// the page marks one as the user's own when it has transient user
		// activation as the frame arrives, and the host lets it wait its
		// turn instead of refusing it (hostkit/openurl, hostkit/savefile).
		"clickTypes":  []string{frame.TypeOpenURLRequest, frame.TypeSaveFileRequest},
		"eventResize": frame.EventResize,
		"themeTokens": frame.ThemeTokens,
		// The app iframe's allow attribute: the features the runner's
		// Permissions-Policy lets it delegate, and nothing more.
		"frameAllow": strings.Join(frame.PermissionsPolicyDelegated, "; "),
		// An app's icon colour: a colour and nothing else.
		"iconColor": csscolor.Pattern,
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

// tooLargeAnswers computes the tooLarge table from the host's own
// rejections of stand-in frames.
func tooLargeAnswers() (*tooLarge, error) {
	tb := &tooLargeBuilder{t: &tooLarge{
		Versions:   frame.ProtocolVersions,
		RecoverMin: frame.RecoverMinCodePoints,
		RecoverMax: frame.RecoverMaxCodePoints,
		ByType:     map[string][3]int{},
	}, index: map[string]int{}}
	t := tb.t
	// The size rejection is the same for every type but for its answer's
	// type: it is read once, from a frame of the smallest class, and
	// answered as each type's.
	small := slices.MinFunc(frame.Types, func(a, b string) int { return frame.SizeClass(a) - frame.SizeClass(b) })
	q, err := json.Marshal(small)
	if err != nil {
		return nil, err
	}
	stand := tooLargeHead + `,"type":` + string(q) + `,"v":` + strconv.Itoa(frame.Version)
	size, err := standInReject(stand+strings.Repeat(" ", frame.SizeClass(small)-len(stand))+"}", frame.RuleFrameSize)
	if err != nil {
		return nil, err
	}
	for _, typ := range frame.Types {
		q, err := json.Marshal(typ)
		if err != nil {
			return nil, err
		}
		row, err := tb.versionRow(`,"type":` + string(q))
		if err != nil {
			return nil, err
		}
		rej := *size
		rej.Type = typ
		if row[2], err = tb.add(rej.Answer()); err != nil {
			return nil, err
		}
		t.ByType[typ] = row
	}
	if t.Other, err = tb.versionRow(""); err != nil {
		return nil, err
	}
	t.Other[2], err = tb.answer(tooLargeHead+`,"v":`+strconv.Itoa(frame.Version)+`}`, frame.RuleFrameType)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// tooLargeHead opens every stand-in frame.
const tooLargeHead = `{"requestId":"` + tooLargeID + `"`

// tooLargeBuilder fills a tooLarge, each distinct answer kept once.
type tooLargeBuilder struct {
	t     *tooLarge
	index map[string]int // an answer's JSON -> its index in t.Answers
}

// add keeps the answer a and returns its index.
func (tb *tooLargeBuilder) add(a frame.Frame) (int, error) {
	b, err := frame.Marshal(a)
	if err != nil {
		return 0, fmt.Errorf("site: the host's answer %T: %w", a, err)
	}
	if i, ok := tb.index[string(b)]; ok {
		return i, nil
	}
	tb.index[string(b)] = len(tb.t.Answers)
	tb.t.Answers = append(tb.t.Answers, b)
	return len(tb.t.Answers) - 1, nil
}

// answer keeps the host's answer to the stand-in frame raw, which it must
// reject under rule alone, and returns its index.
func (tb *tooLargeBuilder) answer(raw, rule string) (int, error) {
	rej, err := standInReject(raw, rule)
	if err != nil {
		return 0, err
	}
	return tb.add(rej.Answer())
}

// versionRow keeps the answers to a stand-in frame with the fields typ
// (`,"type":"…"` or none) and v missing, then v unsupported, and returns
// their indexes.
func (tb *tooLargeBuilder) versionRow(typ string) (row [3]int, err error) {
	if row[0], err = tb.answer(tooLargeHead+typ+`}`, frame.RuleFrameVersion); err != nil {
		return row, err
	}
	unsupported := strconv.Itoa(slices.Max(frame.ProtocolVersions) + 1)
	row[1], err = tb.answer(tooLargeHead+typ+`,"v":`+unsupported+`}`, frame.RuleFrameUnsupportedVersion)
	return row, err
}

// standInReject is the host's rejection of the stand-in frame raw, which
// must break rule alone.
func standInReject(raw, rule string) (*frame.RejectError, error) {
	_, err := frame.Parse([]byte(raw))
	var rej *frame.RejectError
	if !errors.As(err, &rej) || !rej.HasRequestID || rej.RequestID != tooLargeID || len(rej.Violations) != 1 || rej.Violations[0].Rule != rule {
		return nil, fmt.Errorf("site: the host does not answer %.60s… for %s (%v)", raw, rule, err)
	}
	return rej, nil
}

// pageScript is the page's one script: SNUG_GEN, the generated values
// (JSON, which escapes <, > and & so it cannot end the element), then the
// bundle that reads it.
func pageScript() ([]byte, error) {
	g, err := generated()
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return nil, fmt.Errorf("site: encode the generated constants: %w", err)
	}
	js := append([]byte("const SNUG_GEN="), b...)
	js = append(js, ';')
	return append(js, withoutHeader(bundledJS)...), nil
}

// withoutHeader is a generated file without its first line (the
// generated-code header) and surrounding space.
func withoutHeader(b []byte) []byte {
	if _, rest, ok := bytes.Cut(b, []byte("\n")); ok && bytes.HasPrefix(b, []byte("/")) {
		b = rest
	}
	return bytes.TrimSpace(b)
}
