package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/snuggen/snuggen/frame"
)

// Envelope builds the chat envelope for m, sent by the installed app the
// host knows as app: frame.EnvelopeTag, a newline, and the JSON object with
// snug: 1. Its appId is app, the host's own key for the app (R4: the iframe
// the frame came from); the appId the frame carries is only what the app
// claims to be and is not passed. Every key whose lowercase name is in
// frame.StripHeaders is removed at any depth of payload, state and
// responseSchema (C1); key order and all other values are kept.
func Envelope(app string, m *frame.AppMessage) ([]byte, error) {
	_, out, err := envelope(app, m)
	return out, err
}

// envelope is Envelope that also returns the envelope's struct.
func envelope(app string, m *frame.AppMessage) (*frame.Envelope, []byte, error) {
	if app == "" {
		return nil, nil, errors.New("agent: envelope: no app key: the host must name the app the request came from")
	}
	env := &frame.Envelope{
		AppID:      app,
		InstanceID: m.InstanceID,
		RequestID:  m.RequestID,
		Action:     m.Action,
	}
	var err error
	if env.Payload, err = StripCredentials(m.Payload); err != nil {
		return nil, nil, fmt.Errorf("agent: envelope: payload: %w", err)
	}
	if env.State, err = StripCredentials(m.State); err != nil {
		return nil, nil, fmt.Errorf("agent: envelope: state: %w", err)
	}
	if env.ResponseSchema, err = StripCredentials(m.ResponseSchema); err != nil {
		return nil, nil, fmt.Errorf("agent: envelope: responseSchema: %w", err)
	}
	out, err := frame.MarshalEnvelope(env)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: envelope: %w", err)
	}
	return env, out, nil
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
// one JSON object that frame.ParseEnvelope accepts (the decoder generated
// from the chat envelope's schema: the marker snug: 1, required members of
// their types and lengths, no key twice at any depth). Text that merely
// quotes the tag, another snug version, or a missing marker is not an app
// request. The returned payload, state and responseSchema have had the C1
// strip applied (StripCredentials).
func Detect(text string) (*frame.Envelope, bool) {
	rest, ok := strings.CutPrefix(text, frame.EnvelopeTag+"\n")
	if !ok {
		return nil, false
	}
	env, err := frame.ParseEnvelope([]byte(strings.TrimSpace(rest)))
	if err != nil {
		return nil, false
	}
	// C1 at the envelope boundary: the server strips credential-shaped keys
	// from what it read too, whoever built the envelope.
	if env.Payload, err = StripCredentials(compact(env.Payload)); err != nil {
		return nil, false
	}
	if env.State, err = StripCredentials(compact(env.State)); err != nil {
		return nil, false
	}
	if env.ResponseSchema, err = StripCredentials(compact(env.ResponseSchema)); err != nil {
		return nil, false
	}
	return env, true
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
