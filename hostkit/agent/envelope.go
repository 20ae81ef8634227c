package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/snuggen/snuggen/hostkit/frame"
)

// EnvelopeJSON is the JSON half of the chat envelope (Part I §6):
// {snug: 1, appId, instanceId, requestId, action, payload?, state?, responseSchema?}.
// Optional members are raw JSON; nil means absent ("null" is a present null).
type EnvelopeJSON struct {
	Snug           int             `json:"snug"`
	AppID          string          `json:"appId"`
	InstanceID     string          `json:"instanceId"`
	RequestID      string          `json:"requestId"`
	Action         string          `json:"action"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
	ResponseSchema json.RawMessage `json:"responseSchema,omitempty"`
}

// Envelope builds the chat envelope for m: frame.EnvelopeTag, a newline, and
// the JSON object with snug: 1. Every key whose lowercase name is in
// frame.StripHeaders is removed at any depth of payload and state (C1); key
// order and all other values are kept. The responseSchema is passed as is.
func Envelope(m *frame.AppMessage) ([]byte, error) {
	env := EnvelopeJSON{
		Snug:           frame.Version,
		AppID:          m.AppID,
		InstanceID:     m.InstanceID,
		RequestID:      m.RequestID,
		Action:         m.Action,
		ResponseSchema: m.ResponseSchema,
	}
	var err error
	if env.Payload, err = StripCredentials(m.Payload); err != nil {
		return nil, fmt.Errorf("agent: envelope: payload: %w", err)
	}
	if env.State, err = StripCredentials(m.State); err != nil {
		return nil, fmt.Errorf("agent: envelope: state: %w", err)
	}
	var buf bytes.Buffer
	buf.WriteString(frame.EnvelopeTag)
	buf.WriteByte('\n')
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("agent: envelope: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// StripCredentials removes, at any depth of raw, every object member whose
// lowercase name is in frame.StripHeaders (C1). nil stays nil.
func StripCredentials(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil {
		return nil, nil
	}
	return stripKeys(raw, frame.IsStripHeader)
}

// Detect reports whether text is an app request: it must start with
// frame.EnvelopeTag and a newline, and the rest must be one JSON object that
// carries the marker snug: 1 and is a valid chat envelope. Text that merely
// quotes the tag, another snug version, or a missing marker is not an app
// request.
func Detect(text string) (*EnvelopeJSON, bool) {
	rest, ok := strings.CutPrefix(text, frame.EnvelopeTag+"\n")
	if !ok {
		return nil, false
	}
	raw := []byte(strings.TrimSpace(rest))
	// The marker: a member "snug" whose value is exactly the integer 1.
	var probe map[string]json.RawMessage
	if err := strictDecode(raw, &probe); err != nil || probe == nil {
		return nil, false
	}
	if string(bytes.TrimSpace(probe["snug"])) != fmt.Sprint(frame.Version) {
		return nil, false
	}
	if err := validateEnvelope(raw); err != nil {
		return nil, false
	}
	var env EnvelopeJSON
	if err := strictDecode(raw, &env); err != nil {
		return nil, false
	}
	return &env, true
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
