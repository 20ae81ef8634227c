// Package offline is the offline agent.Backend, the embedded default: it needs
// no key and no network. For a request with a responseSchema it answers a
// JSON object generated to be valid against that schema; without one it
// answers {"message": …}. The answer streams in chunks and is a function of
// the request alone (its action, payload, state and schema), so a test or a
// demo sees the same reply every time.
//
// Its limit: it generates from the schema keywords that describe values
// (type, properties, required, additionalProperties, min/maxProperties,
// items, prefixItems, min/maxItems, uniqueItems, contains, enum, const,
// min/maxLength, format, minimum, maximum, exclusive bounds, multipleOf,
// allOf, anyOf, oneOf, local $ref) and checks the result with the real
// validator, retrying other choices; a schema it cannot satisfy (a pattern
// it does not guess, contradictory keywords) yields its best attempt, which
// the bridge then reports as PARSE_FAILED like any other invalid reply.
// Its work is bounded (MaxWork, and the validator's agent.Meter) and ends
// with the request's context: a schema asking for billions of items gets a
// short explanation instead.
package offline

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"time"
	"unicode/utf8"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// DefaultChunkSize is how many bytes of the answer each streamed step adds.
const DefaultChunkSize = 24

// Options configure a Backend. The zero value streams DefaultChunkSize-byte
// chunks with no delay.
type Options struct {
	ChunkSize int           // bytes per streamed step (rune-aligned); 0 = DefaultChunkSize
	Delay     time.Duration // pause before each step, to imitate a slow model; 0 = none
}

// Backend is the offline agent.
type Backend struct{ opts Options }

// New returns the offline backend.
func New(opts Options) *Backend {
	if opts.ChunkSize <= 0 {
		opts.ChunkSize = DefaultChunkSize
	}
	return &Backend{opts: opts}
}

// Complete answers req: a JSON object valid against req.Schema (or
// {"message": …}), streamed cumulatively through onText.
func (b *Backend) Complete(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("offline: %w", err)
	}
	answer, err := answer(ctx, req)
	if err != nil {
		return "", fmt.Errorf("offline: %w", err)
	}
	if limit := req.ReplyLimit(); len(answer) > limit {
		return "", fmt.Errorf("offline: %w: %d bytes, more than %d", agent.ErrReplyTooLarge, len(answer), limit)
	}
	// At most maxSteps steps: each streamed text is the whole answer so far.
	chunk := max(b.opts.ChunkSize, len(answer)/maxSteps)
	for end := 0; end < len(answer); {
		next := min(end+chunk, len(answer))
		for next < len(answer) && !utf8.RuneStart(answer[next]) {
			next++
		}
		end = next
		if b.opts.Delay > 0 {
			t := time.NewTimer(b.opts.Delay)
			select {
			case <-ctx.Done():
				t.Stop()
				return "", fmt.Errorf("offline: %w", ctx.Err())
			case <-t.C:
			}
		}
		// Also after the delay: when the timer and the context end
		// together, select may pick either.
		if err := ctx.Err(); err != nil {
			return "", fmt.Errorf("offline: %w", err)
		}
		if onText != nil {
			onText(answer[:end])
		}
	}
	return answer, nil
}

// maxSteps bounds how many cumulative texts one answer streams in.
const maxSteps = 256

// Answer is the reply text the offline agent gives to req, without streaming.
func Answer(req agent.Completion) (string, error) {
	return answer(context.Background(), req)
}

// answer is Answer ending when ctx does.
func answer(ctx context.Context, req agent.Completion) (string, error) {
	action, seed := "", hashOf(req.User)
	env, ok := req.Envelope, req.Envelope != nil
	if !ok {
		env, ok = agent.Detect(req.User)
	}
	if ok {
		action = env.Action
		seed = hashOf(env.Action, string(env.Payload), string(env.State), string(env.ResponseSchema))
	}
	var data json.RawMessage
	if len(req.Schema) > 0 {
		var err error
		if data, err = GenerateContext(ctx, req.Schema, seed, action); err != nil && data == nil {
			return "", err
		}
	} else {
		msg := "Mock agent reply (offline, no model): received the request."
		if action != "" {
			msg = fmt.Sprintf("Mock agent reply (offline, no model) to %q.", action)
		}
		data = mustJSON(struct {
			Message string `json:"message"`
		}{msg}) // the bytes of map[string]string{"message": msg}, without the map
	}
	return string(data), nil
}

func hashOf(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

func mustJSON(v any) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only called with maps of strings and generated values
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
