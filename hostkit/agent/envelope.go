package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/jsonscan"
)

// Envelope builds the chat envelope for m, sent by the installed app the
// host knows as app: frame.EnvelopeTag, a newline, and the JSON object with
// snug: 1. Its appId is app, the host's own key for the app (R4: the iframe
// the frame came from); the appId the frame carries is only what the app
// claims to be and is not passed. Every key whose lowercase name is in
// frame.StripHeaders is removed at any depth of payload, state and
// responseSchema (C1); key order and all other values are kept.
func Envelope(app string, m *frame.AppMessage) ([]byte, error) {
	if app == "" {
		return nil, errors.New("agent: envelope: no app key: the host must name the app the request came from")
	}
	env := frame.Envelope{
		AppID:      app,
		InstanceID: m.InstanceID,
		RequestID:  m.RequestID,
		Action:     m.Action,
	}
	var err error
	if env.Payload, err = StripCredentials(m.Payload); err != nil {
		return nil, fmt.Errorf("agent: envelope: payload: %w", err)
	}
	if env.State, err = StripCredentials(m.State); err != nil {
		return nil, fmt.Errorf("agent: envelope: state: %w", err)
	}
	if env.ResponseSchema, err = StripCredentials(m.ResponseSchema); err != nil {
		return nil, fmt.Errorf("agent: envelope: responseSchema: %w", err)
	}
	out, err := frame.MarshalEnvelope(&env)
	if err != nil {
		return nil, fmt.Errorf("agent: envelope: %w", err)
	}
	return out, nil
}

// StripCredentials removes, at any depth of raw, every object member whose
// lowercase name is in frame.StripHeaders (C1). nil stays nil.
func StripCredentials(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	return stripKeys(raw, frame.IsStripHeader)
}

// Detect reports whether text is an app request and returns its envelope:
// text must start with frame.EnvelopeTag and a newline, and the rest must be
// one JSON object that carries the marker snug: 1 and is valid against the
// chat envelope's schema and names no key twice. Text that merely quotes the
// tag, another snug version, or a missing marker is not an app request. The
// returned payload, state and responseSchema have had the C1 strip applied
// (StripCredentials).
func Detect(text string) (*frame.Envelope, bool) {
	rest, ok := strings.CutPrefix(text, frame.EnvelopeTag+"\n")
	if !ok {
		return nil, false
	}
	raw := []byte(strings.TrimSpace(rest))
	// A key twice has two readings (encoding/json keeps the last, other
	// decoders the first): {"snug":2,"snug":1} must not pass as snug: 1.
	if dup, valid := jsonscan.DuplicateKeys(string(raw)); dup || !valid {
		return nil, false
	}
	// The marker: a member "snug" whose value is the integer 1 (1.0 too, as
	// for a frame's v and the schema's const).
	var probe map[string]json.RawMessage
	if err := strictDecode(raw, &probe); err != nil || probe == nil {
		return nil, false
	}
	if !isVersion(probe[frame.EnvelopeMarker]) {
		return nil, false
	}
	if err := validateEnvelope(raw); err != nil {
		return nil, false
	}
	// C1 at the envelope boundary: the server strips credential-shaped keys
	// from what it read too, whoever built the envelope.
	payload, err := StripCredentials(compact(probe["payload"]))
	if err != nil {
		return nil, false
	}
	state, err := StripCredentials(compact(probe["state"]))
	if err != nil {
		return nil, false
	}
	schema, err := StripCredentials(compact(probe["responseSchema"]))
	if err != nil {
		return nil, false
	}
	// Members are read by their exact names: encoding/json would also fill
	// AppID from "APPID", a key the schema ignores.
	str := func(name string) string {
		var s string
		_ = json.Unmarshal(probe[name], &s) // the schema checked the type
		return s
	}
	return &frame.Envelope{
		AppID:          str("appId"),
		InstanceID:     str("instanceId"),
		RequestID:      str("requestId"),
		Action:         str("action"),
		Payload:        payload,
		State:          state,
		ResponseSchema: schema,
	}, true
}

// isVersion reports whether raw is a JSON number equal to the envelope version.
func isVersion(raw json.RawMessage) bool {
	t := string(bytes.TrimSpace(raw))
	if t == "" || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return false
	}
	v, ok := jsonscan.ParseInt(t)
	return ok && v == frame.EnvelopeVersion
}

// compact returns raw compacted, nil for nil.
func compact(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}

// strictDecode decodes exactly one JSON value from raw into v.
func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("trailing data after JSON value")
	}
	return nil
}
