package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/jsonscan"
)

// ReplyError is why a reply yielded no data; the Bridge answers it with
// PARSE_FAILED carrying RawExcerpt.
type ReplyError struct {
	Reason     string // "no JSON object in the reply", "data does not match responseSchema: ..."
	RawExcerpt string // the reply's first frame.MaxRawExcerpt code points
}

func (e *ReplyError) Error() string { return "agent reply: " + e.Reason }

// maxBalancedStarts bounds the balanced-object stage: it tries at most this
// many '{' positions, so a reply full of braces costs linear time, not
// quadratic.
const maxBalancedStarts = 128

// ParseReply extracts the reply's JSON object with graduated tolerance (Part
// I §6): the whole text, then each fenced code block, then each balanced
// {...} span, taking the first candidate that parses as an object and
// satisfies schema (a JSON Schema, nil for none). When the whole text is
// JSON, it is the answer: a reply that is null, an array or a scalar is
// rejected rather than mined for an object inside it. Failures are
// *ReplyError; a schema that does not compile is a *SchemaError. The work
// is bounded by a Meter of its own (NewMeter).
func ParseReply(text string, schema json.RawMessage) (json.RawMessage, error) {
	return parseReply(NewMeter(context.Background()), text, schema)
}

// parseReply is ParseReply within m: decoding the candidates and checking
// them against the schema are charged to it, and a reply that would cost
// more is a *ReplyError saying so (or m's context's error when it ended).
func parseReply(m *Meter, text string, schema json.RawMessage) (data json.RawMessage, err error) {
	s := &replySearch{m: m}
	if len(schema) > 0 {
		if s.sch, err = CompileSchema(schema); err != nil {
			return nil, err
		}
	}
	fail := func(reason string) error {
		return &ReplyError{Reason: reason, RawExcerpt: Excerpt(text)}
	}
	// A spent budget (or an ended context) ends the search wherever it is.
	defer func() {
		if r := recover(); r != nil {
			sp, ok := r.(replySpent)
			if !ok {
				panic(r)
			}
			if !errors.Is(sp.err, ErrValidationBudget) {
				data, err = nil, sp.err
				return
			}
			data, err = nil, fail(fmt.Sprintf("%v (the reply is %d bytes)", sp.err, len(text)))
		}
	}()

	trimmed := strings.TrimSpace(text)
	if json.Valid([]byte(trimmed)) {
		if !strings.HasPrefix(trimmed, "{") {
			return nil, fail("the reply is " + kindOf(trimmed) + ", not a JSON object")
		}
		if data, ok := s.try(trimmed); ok {
			return data, nil
		}
		if s.firstViolation == nil {
			return nil, fail("the reply's object names a key twice")
		}
		return nil, fail(violationReason(s.firstViolation))
	}
	data, rejected, ok := s.fenced(text)
	if !ok {
		data, ok = s.balanced(text, rejected)
	}
	if ok {
		return data, nil
	}
	if s.firstViolation != nil {
		return nil, fail(violationReason(s.firstViolation))
	}
	return nil, fail("no JSON object in the reply")
}

// replySpent is the panic that ends a replySearch when its meter's budget
// is spent (or its context ended); parseReply recovers it.
type replySpent struct{ err error }

// replySearch looks for the first candidate in a reply that is a JSON
// object (without a repeated key) valid against sch, charging m.
type replySearch struct {
	m   *Meter
	sch *Schema // nil: any object
	// firstViolation is why the first object that failed sch did.
	firstViolation error
}

// charge charges n to the meter, ending the search when it is spent.
func (s *replySearch) charge(n int64) {
	if err := s.m.Charge(n); err != nil {
		panic(replySpent{err})
	}
}

// try returns cand compacted when it is the object sought.
func (s *replySearch) try(cand string) (json.RawMessage, bool) {
	s.charge(int64(len(cand))/2 + 1)
	v, ok := decodeObject(cand)
	if !ok {
		return nil, false
	}
	// An object naming a key twice has two readings (the app's JSON.parse
	// keeps the last, other decoders the first) and would make the
	// app-response carrying it MALFORMED: it is no candidate.
	if dup, _ := jsonscan.DuplicateKeys(strings.TrimSpace(cand)); dup {
		return nil, false
	}
	if s.sch != nil {
		if err := s.sch.Validate(s.m, v); err != nil {
			var ve *ValidationError
			var ne *NumberError
			if !errors.As(err, &ve) && !errors.As(err, &ne) {
				panic(replySpent{err}) // the budget or the context
			}
			if s.firstViolation == nil {
				s.firstViolation = err
			}
			return nil, false
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(cand)); err != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// fenced tries each fenced block of text. A fenced block that is JSON but
// not an object (an array of results, say) is the agent's answer in the
// wrong shape: it is returned in rejected, and no object is mined out of
// it.
func (s *replySearch) fenced(text string) (data json.RawMessage, rejected []span, ok bool) {
	for _, b := range fencedBlocks(text) {
		body := text[b.start:b.end]
		if data, ok := s.try(body); ok {
			return data, nil, true
		}
		if t := strings.TrimSpace(body); t != "" && t[0] != '{' && json.Valid([]byte(t)) {
			rejected = append(rejected, b)
		}
	}
	return nil, rejected, false
}

// balanced tries the balanced {…} of text outside rejected, from each of
// its first maxBalancedStarts opening braces.
func (s *replySearch) balanced(text string, rejected []span) (json.RawMessage, bool) {
	starts := 0
	for i := 0; i < len(text) && starts < maxBalancedStarts; i++ {
		if text[i] != '{' || inside(rejected, i) {
			continue
		}
		starts++
		end := balancedEnd(text, i)
		scanned := end - i
		if end < 0 {
			scanned = len(text) - i
		}
		s.charge(int64(scanned)/16 + 1) // a byte scanned costs about 1 ns
		if end < 0 {
			// No closing brace from here; none from a later start either
			// unless a string quote misled the scan, so keep looking.
			continue
		}
		if data, ok := s.try(text[i:end]); ok {
			return data, true
		}
	}
	return nil, false
}

func violationReason(err error) string {
	var ve *ValidationError
	if errors.As(err, &ve) {
		loc := ve.InstanceLocation
		if loc == "" {
			loc = "/"
		}
		msg := ve.Message
		if len(msg) > 300 {
			// Keep the start and the verdict after a quoted value
			// ("… is not valid \"date-time\"").
			msg = msg[:120] + "…" + msg[len(msg)-120:]
			msg = strings.ToValidUTF8(msg, "")
		}
		return fmt.Sprintf("data does not match responseSchema: at %s: %s", loc, msg)
	}
	return fmt.Sprintf("data does not match responseSchema: %v", err)
}

// decodeObject parses s as exactly one JSON value that is an object, with
// numbers kept as json.Number for the schema validator.
func decodeObject(s string) (any, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	_, ok := v.(map[string]any)
	return v, ok
}

func kindOf(jsonText string) string {
	switch jsonText[0] {
	case 'n':
		return "null"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// span is a byte range [start, end) of the reply.
type span struct{ start, end int }

func inside(spans []span, i int) bool {
	for _, s := range spans {
		if i >= s.start && i < s.end {
			return true
		}
	}
	return false
}

// fencedBlocks returns the byte ranges of the bodies of the Markdown code
// fences in text, in order; the info string after the opening ``` (json,
// JSON, jsonc, …) is left out. An unclosed fence runs to the end of the text.
func fencedBlocks(text string) []span {
	var blocks []span
	pos := 0
	for {
		i := strings.Index(text[pos:], "```")
		if i < 0 {
			return blocks
		}
		start := pos + i + 3
		// Skip the info string: the rest of the opening line.
		if nl := strings.IndexByte(text[start:], '\n'); nl >= 0 && !strings.Contains(text[start:start+nl], "{") {
			start += nl + 1
		}
		j := strings.Index(text[start:], "```")
		if j < 0 {
			return append(blocks, span{start, len(text)})
		}
		blocks = append(blocks, span{start, start + j})
		pos = start + j + 3
	}
}

// balancedEnd returns the index just past the '}' that closes the '{' at
// text[start], skipping braces inside JSON strings, or -1.
func balancedEnd(text string, start int) int {
	depth := 0
	inString := false
	for i := start; i < len(text); i++ {
		c := text[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// Excerpt returns text's first frame.MaxRawExcerpt code points (invalid
// UTF-8 replaced), the rawExcerpt of a PARSE_FAILED error.
func Excerpt(text string) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) <= frame.MaxRawExcerpt {
		return text
	}
	n := 0
	for i := range text {
		if n == frame.MaxRawExcerpt {
			return text[:i]
		}
		n++
	}
	return text
}
