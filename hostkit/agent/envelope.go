package agent

import (
	"encoding/json"

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
// order and all other values are kept.
func Envelope(m *frame.AppMessage) ([]byte, error) {
	panic("unfinished")
}

// Detect reports whether text is an app request: it must start with
// frame.EnvelopeTag and a newline, and the rest must be one JSON object that
// carries snug: 1 and is a valid chat envelope. Text that merely quotes the
// tag, another snug version, or a missing marker is not an app request.
func Detect(text string) (*EnvelopeJSON, bool) {
	panic("unfinished")
}
