package frame

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/violation"
)

// Violation is one broken rule: a JSON pointer, a stable rule id, a message.
type Violation = violation.Violation

// RejectError is a frame Parse or Validate refused. The host answers it (Answer)
// only when HasRequestID: R1 forbids answering otherwise.
type RejectError struct {
	Code         string      // CodeMalformed or CodeUnsupportedVersion
	Type         string      // the frame's type when it had a string one
	RequestID    string      // the recovered requestId
	HasRequestID bool        // a plausible requestId was recovered (R1)
	Violations   []Violation // sorted by path, then rule
}

func (e *RejectError) Error() string {
	t := e.Type
	if t == "" {
		t = "frame"
	}
	return "frame: " + t + " rejected (" + e.Code + "): " + e.summary(5)
}

// summary lists up to n violations.
func (e *RejectError) summary(n int) string {
	var parts []string
	for i, v := range e.Violations {
		if i == n {
			parts = append(parts, fmt.Sprintf("and %d more", len(e.Violations)-n))
			break
		}
		parts = append(parts, v.String())
	}
	return strings.Join(parts, "; ")
}

// Answer is the frame the host sends back for e: the response paired with the
// request type, carrying e.Code; nil when no requestId was recovered (R1).
// An answer type without an error object refuses with "CODE: message" as
// its reason, cut to the reason's maxLength, as ErrorAnswer does: the app
// learns why.
func (e *RejectError) Answer() Frame {
	if !e.HasRequestID {
		return nil
	}
	msg := e.summary(3)
	// Cut to the error schema's message maxLength, the last code point an ellipsis.
	if utf8.RuneCountInString(msg) > ErrorMessageMaxLength {
		msg = string([]rune(msg)[:ErrorMessageMaxLength-1]) + "…"
	}
	return ErrorAnswer(AnswerType(e.Type), e.RequestID, NewError(e.Code, msg))
}

// ErrorAnswer is the terminal answer of type answerType to requestId rid
// carrying e. An answer type without an error object (open-url-result)
// refuses instead, with "CODE: message" as its reason cut to the reason's
// maxLength. Nil when answerType answers nothing.
func ErrorAnswer(answerType, rid string, e *Error) Frame {
	return errorAnswer(answerType, rid, e, e.Code+": "+e.Message)
}

// AnswerFor is the error answer to the request req: ErrorAnswer of req's
// paired answer type (AnswerType) and requestId.
func AnswerFor(req Frame, e *Error) Frame {
	return ErrorAnswer(AnswerType(req.FrameType()), RequestIDOf(req), e)
}

// body is a frame Parse can decode: the generated decode reads the members
// after its '{' (the shape stage), check runs the value and refinement stages.
type body interface {
	Frame
	decode(d *jsonscan.Decoder, c *violation.Collector, got uint64)
	check(c *violation.Collector)
}

// Parse applies R1, R2, R6, the schemas and the rules to one frame's JSON text.
//
//	accept: (frame, nil)
//	ignore (R2, a type this version does not know, with a supported v): (nil, nil)
//	reject: (nil, *RejectError)
//
// Checks run in stages (the shape: types, required and unknown keys; then values;
// then refinements) and a rejection lists the violations of the first stage that
// has any.
func Parse(raw []byte) (Frame, error) { return parse(string(raw)) }

// parseState is what parse reads with, taken from parseStates: handed to a
// frame's decode through the Frame interface, a decoder and a collector of
// parse's own would be allocated for every frame.
type parseState struct {
	d jsonscan.Decoder
	c violation.Collector
}

var parseStates = sync.Pool{New: func() any { return new(parseState) }}

func parse(s string) (Frame, error) {
	st := parseStates.Get().(*parseState)
	f, err := st.parse(s)
	*st = parseState{} // the frame and the error hold nothing of it
	parseStates.Put(st)
	return f, err
}

func (st *parseState) parse(s string) (Frame, error) {
	d, c := &st.d, &st.c
	d.Reset(s)
	var h header
	if !h.scan(d) {
		return nil, frameReject(s, "", RuleFrameJSON, "")
	}
	switch {
	case !h.seenV || !h.vInt:
		return nil, frameReject(s, h.typ, RuleFrameVersion, "/v")
	case !supported(h.v):
		return nil, frameReject(s, h.typ, RuleFrameUnsupportedVersion, "/v")
	case !h.hasType:
		return nil, frameReject(s, "", RuleFrameType, "/type")
	}
	f, limit := newBody(h.typ)
	if f == nil {
		// R2: a supported v with a type this version does not know is ignored
		// once the text is known to be JSON with one reading of v and type; a key
		// twice anywhere else is the unknown frame's business, not a reason to answer.
		if !headerOnce(s) {
			return nil, frameReject(s, h.typ, RuleFrameDuplicateKey, "")
		}
		return nil, nil
	}
	if len(s) > limit {
		return nil, frameReject(s, h.typ, RuleFrameSize, "")
	}
	if h.lead {
		// v and type led the object and were read once, by the header: the
		// frame's decoder goes on after them.
		f.decode(d, c, 1<<0|1<<1)
	} else {
		d.Reset(s)
		d.BeginObject()
		f.decode(d, c, 0)
	}
	if !d.End() {
		return nil, frameReject(s, "", RuleFrameJSON, "")
	}
	if d.Dup {
		return nil, frameReject(s, h.typ, RuleFrameDuplicateKey, "")
	}
	// Some string had an unpaired surrogate escape (rare: only then is the
	// text read again): in the requestId it has no reading an answer could
	// echo, and the frame is refused unanswered.
	if d.Lone {
		if _, isStr, lone := requestIDOf(s); isStr && lone {
			return nil, frameReject(s, h.typ, RuleFrameRequestID, "/"+requestIDField)
		}
	}
	if c.Len() == 0 {
		f.check(c)
	}
	if c.Len() > 0 {
		return nil, reject(s, h.typ, c)
	}
	return f, nil
}

// header is what Parse needs before it picks a decoder: v, type.
type header struct {
	seenV, vInt, seenType, hasType bool
	v                              int64
	typ                            string
	// lead: v (an integer) and type (a string) are the object's first two
	// members, in either order, and the decoder stands right after them.
	lead bool
}

// scan reads top-level members until it has seen v and type; false when the
// text is not a JSON object.
func (h *header) scan(d *jsonscan.Decoder) bool {
	if !d.BeginObject() {
		return false
	}
	lead := true
	for first := true; d.ObjMore(first); first = false {
		k, ok := d.Key()
		if !ok {
			return false
		}
		switch {
		case k == "v" && !h.seenV:
			h.seenV = true
			v, isInt, isNum := d.Int()
			if !isNum {
				d.Skip()
			}
			h.v, h.vInt = v, isInt
		case k == "type" && !h.seenType:
			h.seenType = true
			if t, ok := d.String(); ok {
				h.typ, h.hasType = t, true
			} else {
				d.Skip()
			}
		default:
			lead = false
			d.Skip()
		}
		if d.Err != nil {
			return false
		}
		if h.seenV && h.seenType {
			h.lead = lead && h.vInt && h.hasType
			return true
		}
	}
	return d.End()
}

// validJSON reports whether s is one JSON value.
func validJSON(s string) bool {
	var d jsonscan.Decoder
	d.Reset(s)
	_, ok := d.Skip()
	return ok && d.End()
}

// headerOnce reports whether s is one JSON object that names v and type at
// most once at its top level.
func headerOnce(s string) bool {
	nv, nt, ok := headerCounts(s)
	return ok && nv <= 1 && nt <= 1
}

// headerCounts counts the top-level v and type members of s; ok is false
// when s is not one JSON object.
func headerCounts(s string) (nv, nt int, ok bool) {
	if !validJSON(s) {
		return 0, 0, false
	}
	var d jsonscan.Decoder
	d.Reset(s)
	if !d.BeginObject() {
		return 0, 0, false
	}
	for first := true; d.ObjMore(first); first = false {
		k, _ := d.Key()
		switch k {
		case "v":
			nv++
		case "type":
			nt++
		}
		d.Skip()
	}
	return nv, nt, true
}

// recoverRequestID finds a top-level string requestIdField of a plausible
// length (R1) in a text that is a JSON object, one that reads exactly (no
// unpaired surrogate escape: U+FFFD in its place would not match the app's
// id); ok is false otherwise.
func recoverRequestID(s string) (id string, ok bool) {
	id, isStr, lone := requestIDOf(s)
	return id, isStr && !lone && plausibleID(id)
}

// requestIDOf reads the top-level requestIdField of a text that is a JSON
// object: isStr when it is a string, lone when that string held an unpaired
// surrogate escape. The last occurrence wins, as in JSON.parse.
func requestIDOf(s string) (id string, isStr, lone bool) {
	if !validJSON(s) {
		return "", false, false
	}
	var d jsonscan.Decoder
	d.Reset(s)
	if !d.BeginObject() {
		return "", false, false
	}
	for first := true; d.ObjMore(first); first = false {
		k, _ := d.Key()
		if k == requestIDField {
			d.Lone = false
			if id, isStr = d.String(); isStr {
				lone = d.Lone
				continue
			}
			id, lone = "", false
		}
		d.Skip()
	}
	return id, isStr, lone
}

// plausibleID reports whether s has a length R1 recovers (rules.json
// requestIdRecovery).
func plausibleID(s string) bool {
	return jsonscan.LenAtLeast(s, RecoverMinCodePoints) && jsonscan.LenAtMost(s, RecoverMaxCodePoints)
}

// frameReject builds the rejection of a frame-level rule, recovering the
// requestId from s; a text that is no JSON object is always RuleFrameJSON.
// The code and message are the rule's (rules.json frameRules), the words
// the JS checkFrame says too (a syntax error's place is the CLI's to tell).
func frameReject(s, typ, rule, path string) *RejectError {
	// A text that is no JSON is that first; a key twice comes next.
	if rule != RuleFrameJSON {
		dup, valid := jsonscan.DuplicateKeys(s)
		switch {
		case !valid:
			typ, rule, path = "", RuleFrameJSON, ""
		case dup:
			rule, path = RuleFrameDuplicateKey, ""
		}
	}
	if rule == RuleFrameDuplicateKey {
		// A frame that names type twice has no type: its answer is the
		// default one, whichever type came first or last.
		if _, nt, _ := headerCounts(s); nt > 1 {
			typ = ""
		}
	}
	code, msg := frameRule(rule)
	e := &RejectError{
		Code:       code,
		Type:       typ,
		Violations: []Violation{{Message: msg, Path: path, Rule: rule}},
	}
	if rule != RuleFrameJSON {
		e.RequestID, e.HasRequestID = recoverRequestID(s)
	}
	return e
}

// reject builds the rejection of a frame that failed its schema or refinements.
func reject(s, typ string, c *violation.Collector) *RejectError {
	e := &RejectError{Code: CodeMalformed, Type: typ, Violations: c.List()}
	e.RequestID, e.HasRequestID = recoverRequestID(s)
	return e
}

// validated is the end of a frame's Validate: nil when its check found
// nothing, else the rejection.
func validated(c *violation.Collector, typ, rid string) error {
	if c.Len() == 0 {
		return nil
	}
	return &RejectError{Code: CodeMalformed, Type: typ, RequestID: rid, HasRequestID: plausibleID(rid), Violations: c.List()}
}

func supported(v int64) bool {
	for _, x := range ProtocolVersions {
		if int64(x) == v {
			return true
		}
	}
	return false
}
