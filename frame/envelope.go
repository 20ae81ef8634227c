package frame

import (
	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/violation"
)

// ParseEnvelope reads the chat envelope's JSON, what follows EnvelopeTag and
// a newline in an app-originated chat turn, with the decoder generated from
// the envelope's schema (rules.json envelopeSchema): one JSON object no
// deeper than MAX_JSON_DEPTH that names no key twice at any depth, its
// EnvelopeMarker an integer equal to EnvelopeVersion as JSON.parse reads it
// (1.0 is 1), every required member present, of its type and within its
// lengths, payload and responseSchema objects; other members are ignored.
// Members are read by their exact names (no case folding). Anything else is
// a *RejectError (Type "": an envelope is not a frame and is never answered)
// whose violations say what is wrong where.
func ParseEnvelope(raw []byte) (*Envelope, error) {
	s := string(raw)
	var d jsonscan.Decoder
	d.Reset(s)
	marker, ok := envelopeMarker(&d)
	if !ok {
		return nil, envelopeReject(RuleFrameJSON)
	}
	env := new(Envelope)
	var c violation.Collector
	d.Reset(s)
	d.BeginObject()
	env.decode(&d, &c)
	if !d.End() {
		return nil, envelopeReject(RuleFrameJSON)
	}
	if d.Dup {
		return nil, envelopeReject(RuleFrameDuplicateKey)
	}
	switch marker {
	case markerMissing:
		c.Add(EnvelopeMarker, RuleSchemaRequired, msgRequired)
	case markerWrong:
		c.Add(EnvelopeMarker, RuleSchemaConst, msgEnvelopeMarker)
	}
	if c.Len() == 0 {
		env.validate(&c)
	}
	if c.Len() > 0 {
		return nil, &RejectError{Code: CodeMalformed, Violations: c.List()}
	}
	return env, nil
}

// Validate checks the values of an Envelope a host built (the lengths of its
// names), as ParseEnvelope does after decoding, so that an envelope built
// from a parsed app-message is known to be one ParseEnvelope accepts
// without encoding and reading it back. It does not allocate when e is
// valid.
func (e *Envelope) Validate() error {
	var c violation.Collector
	e.validate(&c)
	if c.Len() > 0 {
		return &RejectError{Code: CodeMalformed, Violations: c.List()}
	}
	return nil
}

// envelopeReject is the rejection of a rule about the envelope's text as a
// whole (rules.json frameRules, the words a frame's would say).
func envelopeReject(rule string) *RejectError {
	code, msg := frameRule(rule)
	return &RejectError{Code: code, Violations: []Violation{{Message: msg, Rule: rule}}}
}

type markerState int

const (
	markerMissing markerState = iota
	markerWrong
	markerOK
)

// envelopeMarker reads the top-level members for EnvelopeMarker; ok is false
// when the text is not a JSON object. A marker named twice is left to the
// decoder, which refuses the key twice.
func envelopeMarker(d *jsonscan.Decoder) (m markerState, ok bool) {
	if !d.BeginObject() {
		return markerMissing, false
	}
	for first := true; d.ObjMore(first); first = false {
		k, ok := d.Key()
		if !ok {
			return markerMissing, false
		}
		if k != EnvelopeMarker || m != markerMissing {
			if _, ok := d.Skip(); !ok {
				return markerMissing, false
			}
			continue
		}
		m = markerWrong
		v, isInt, isNum := d.Int()
		if !isNum {
			if _, ok := d.Skip(); !ok {
				return markerMissing, false
			}
		} else if isInt && v == EnvelopeVersion {
			m = markerOK
		}
	}
	return m, d.Err == nil && d.End()
}
