package frame

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/snuggen/snuggen/internal/jsstring"
)

// Marshal encodes f as a frame: v and type first, then its fields. It does not
// validate; call the frame's Validate for that.
func Marshal(f Frame) ([]byte, error) {
	body, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("frame: marshal %s: %w", f.FrameType(), err)
	}
	return withHeader("{\"v\":"+strconv.Itoa(Version)+",\"type\":", f.FrameType(), body), nil
}

// MarshalEnvelope encodes e in the envelope's wire form: the tag, a newline, the JSON.
func MarshalEnvelope(e *Envelope) ([]byte, error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("frame: marshal envelope: %w", err)
	}
	out := append([]byte(EnvelopeTag+"\n{\""+EnvelopeMarker+"\":"), strconv.Itoa(EnvelopeVersion)...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

func withHeader(prefix, typ string, body []byte) []byte {
	out := make([]byte, 0, len(prefix)+len(typ)+len(body)+4)
	out = append(out, prefix...)
	out = jsstring.Append(out, typ)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...)
}

// NewError builds an error object with Retryable filled from the registry.
func NewError(code, message string) *Error {
	return &Error{Code: code, Message: message, Retryable: Retryable(code)}
}

// IsStripHeader reports whether name (any case) is in StripHeaders.
func IsStripHeader(name string) bool { return inFold(StripHeaders, name) }

// ResponseHeaderAllowed reports whether a response header may cross to the app:
// ResponseHeaderWhitelist or a glob of ResponseHeaderGlobs, case-insensitively.
func ResponseHeaderAllowed(name string) bool {
	if inFold(ResponseHeaderWhitelist, name) {
		return true
	}
	for _, g := range ResponseHeaderGlobs {
		if prefix, ok := strings.CutSuffix(g, "*"); ok && len(name) >= len(prefix) && strings.EqualFold(name[:len(prefix)], prefix) {
			return true
		}
		if strings.EqualFold(g, name) {
			return true
		}
	}
	return false
}

// inFold reports whether s equals an entry of list case-insensitively (Unicode
// simple folding). Entries are ASCII, so an ASCII s of another length cannot match.
func inFold(list []string, s string) bool {
	ascii := isASCII(s)
	for _, x := range list {
		if ascii && len(x) != len(s) {
			continue
		}
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// CSPDirective is one directive of a Content-Security-Policy.
type CSPDirective struct {
	Name    string
	Sources []string
}

// MetaIgnores reports whether a policy delivered in a <meta
// http-equiv="Content-Security-Policy"> cannot carry the directive name:
// browsers ignore sandbox, frame-ancestors and the reporting directives
// there (CSP3 §3.3, §6.4.2); a host sends those in its header.
func MetaIgnores(name string) bool {
	switch name {
	case "sandbox", "frame-ancestors", "report-uri", "report-to":
		return true
	}
	return false
}

// CSPMeta renders the directives a meta tag can carry (MetaIgnores drops
// the others) as the content of a <meta http-equiv="Content-Security-Policy">.
func CSPMeta(d []CSPDirective) string {
	var keep []CSPDirective
	for _, x := range d {
		if !MetaIgnores(x.Name) {
			keep = append(keep, x)
		}
	}
	return CSPString(keep)
}

// CSPString renders directives as a Content-Security-Policy header value.
func CSPString(d []CSPDirective) string {
	var b strings.Builder
	for i, x := range d {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x.Name)
		for _, s := range x.Sources {
			b.WriteByte(' ')
			b.WriteString(s)
		}
	}
	return b.String()
}

// EventField is one field of a known event's data object.
type EventField struct {
	Name      string // key in data
	Type      string // string, integer, boolean or object
	MinLength int    // strings: code points; 0 = none
	MaxLength int    // strings: code points; 0 = none
	Minimum   *int64
	Maximum   *int64
	Enum      []string
}

// EventSpec is a known event: its name, direction and data fields.
type EventSpec struct {
	Name      string
	Direction string // "app->host" or "host->app"
	Data      []EventField
}

// NormativeRule is one rule of the spec a host is held to (rules.json
// normativeRules): its id (R1–R7, C1, C2, handshake, db, net, open-url),
// where the spec states it, and what it asks in one line.
type NormativeRule struct {
	ID     string
	Source string
	Title  string
}

// StringField is a string field of a frame: its key, whether it is required,
// and its maxLength in code points (0 = none).
type StringField struct {
	Name      string
	Required  bool
	MaxLength int
}

func int64p(v int64) *int64 { return &v }
