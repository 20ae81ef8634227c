// Package agent is the host's agent bridge (host-obligations "The agent
// bridge", Part I §6): it turns an app-message into the tagged chat envelope,
// sends it with the JSON-only reply contract to a Backend, streams cumulative
// text, parses the reply with graduated tolerance, enforces the request's
// responseSchema, and keeps the per-instance parse-failure budget.
//
// Its limit: it answers one app-message with data or an error object and
// nothing else. Terminal frames, cancellation bookkeeping and supersession
// belong to the broker; which agent endpoint is used belongs to the host
// (backends live in the subpackages openai, anthropic and offline; agentenv
// picks one from the environment). Each app request is sent alone, without
// thread history: the envelope is self-contained through its state (Part I §6).
//
// Credentials never enter the envelope: keys whose lowercase name is in
// frame.StripHeaders are removed at any depth of payload and state (C1), and a
// backend's own API key only ever travels in its request's auth header.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/snuggen/snuggen/frame"
)

// Completion is one turn sent to a Backend.
type Completion struct {
	// System is the system prompt: the reply contract and any responseSchema.
	System string
	// User is the chat envelope, "[SNUG_APP_REQUEST]\n{json}".
	User string
	// Schema is the request's responseSchema (nil without one). Backends that
	// can constrain their output (the offline agent, JSON modes) may use it; the Bridge
	// enforces it on the reply whatever the backend does.
	Schema json.RawMessage
	// Envelope is the chat envelope User carries, as the Bridge built it, set
	// when it is one Detect accepts (its names within their lengths); nil
	// otherwise. It is what Detect(User) returns, so a backend that reads
	// the app's request (the offline agent) need not parse User again.
	Envelope *frame.Envelope
	// MaxReplyBytes is the most reply text, in bytes, the host accepts (the
	// Bridge sets it from Options.MaxReplyBytes; 0 means
	// DefaultMaxReplyBytes). A backend stops reading as soon as the reply
	// passes it and returns an error wrapping ErrReplyTooLarge; the Bridge
	// also refuses a longer text from a backend that does not.
	MaxReplyBytes int
}

// DefaultMaxReplyBytes bounds an agent's reply text when Options and
// Completion leave it 0: 4 MiB, some twenty times the longest reply today's
// models write in one turn, and far below what would strain the host.
const DefaultMaxReplyBytes = 4 << 20

// ErrReplyTooLarge marks a reply that passed Completion.MaxReplyBytes; the
// backend stopped reading it (the Bridge answers PARSE_FAILED).
var ErrReplyTooLarge = errors.New("the agent's reply passed the host's size limit")

// ReplyLimit is c.MaxReplyBytes, or DefaultMaxReplyBytes when it is 0 or
// less.
func (c Completion) ReplyLimit() int {
	if c.MaxReplyBytes > 0 {
		return c.MaxReplyBytes
	}
	return DefaultMaxReplyBytes
}

// Backend is one agent endpoint. Complete sends req and returns the whole
// reply text. While the reply streams it calls onText (when non-nil) with the
// cumulative text so far, from the calling goroutine, never after returning.
//
// Complete must return promptly once ctx ends, with an error wrapping
// ctx.Err(). An agent whose thread is busy (HTTP 409 and the like) is reported
// with an error wrapping ErrThreadConflict; any other failure to obtain a
// complete reply (connect, non-2xx status, a stream that ends early) is a
// network error, ideally a *NetworkError.
type Backend interface {
	Complete(ctx context.Context, req Completion, onText func(cumulative string)) (string, error)
}

// BackendFunc adapts a function to Backend.
type BackendFunc func(ctx context.Context, req Completion, onText func(cumulative string)) (string, error)

// Complete calls f.
func (f BackendFunc) Complete(ctx context.Context, req Completion, onText func(string)) (string, error) {
	return f(ctx, req, onText)
}

// ErrThreadConflict marks a backend error meaning the agent's thread is busy;
// the Bridge retries it after frame.ThreadConflictBackoff, then answers
// THREAD_CONFLICT.
var ErrThreadConflict = errors.New("agent thread busy")

// NetworkError is a failure to get a complete reply from the agent endpoint.
// The Bridge answers it with NETWORK_ERROR. Message never holds a credential.
type NetworkError struct {
	Backend string // "openai", "anthropic", ...
	Status  int    // the HTTP status, 0 when none was received
	Err     error
}

func (e *NetworkError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %v", e.Backend, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Backend, e.Err)
}

func (e *NetworkError) Unwrap() error { return e.Err }
