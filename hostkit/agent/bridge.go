package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/snuggen/snuggen/hostkit/frame"
)

// Options configure a Bridge. The zero value is the spec's behaviour.
type Options struct {
	// SystemPrompt builds the system prompt for a request; nil uses
	// DefaultSystemPrompt.
	SystemPrompt func(schema json.RawMessage) string
	// SuppressSchemaStreaming drops streaming text for requests that carry a
	// responseSchema (R3 allows it): the app then sees only the terminal data.
	SuppressSchemaStreaming bool
	// Backoff overrides frame.ThreadConflictBackoff (tests only).
	Backoff []time.Duration
}

// Bridge answers app-messages through one Backend. It is safe for concurrent
// use; its per-instance state is the parse-failure budget.
type Bridge struct {
	backend Backend
	opts    Options
}

// NewBridge returns a Bridge over backend.
func NewBridge(backend Backend, opts Options) *Bridge {
	return &Bridge{backend: backend, opts: opts}
}

// DefaultSystemPrompt is the reply contract: answer with ONLY a JSON object,
// with a human-readable "message" member recommended, matching schema when
// one is given.
func DefaultSystemPrompt(schema json.RawMessage) string {
	panic("unfinished")
}

// Ask answers m for the instance the host knows as instanceKey (the host's
// own key, never the frame's appId). stream, when non-nil, receives
// cumulative text while the reply streams (not for schema requests when
// SuppressSchemaStreaming is set); it is called from Ask's goroutine and
// never after Ask returns.
//
// It returns the reply's data object, or an error object with the spec's
// code: PARSE_FAILED (rawExcerpt, attemptsRemaining; after
// frame.ParseFailureBudget consecutive failures the instance is refused
// without calling the agent until Reset), THREAD_CONFLICT (after retrying
// frame.ThreadConflictBackoff), NETWORK_ERROR, MALFORMED (a responseSchema
// that is not a usable JSON Schema), or CANCELLED when ctx ended first (Ask
// returns promptly; the broker decides what to send).
func (b *Bridge) Ask(ctx context.Context, instanceKey string, m *frame.AppMessage, stream func(text string)) (json.RawMessage, *frame.Error) {
	panic("unfinished")
}

// Reset is the explicit user reset of instanceKey's parse-failure budget. An
// error means the reset failed (RESET_FAILED).
func (b *Bridge) Reset(instanceKey string) error {
	panic("unfinished")
}

// Forget drops everything the Bridge holds for instanceKey (the instance is
// gone).
func (b *Bridge) Forget(instanceKey string) {}
