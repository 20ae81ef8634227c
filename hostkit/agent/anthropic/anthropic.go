// Package anthropic is an agent.Backend for the Anthropic Messages API with
// SSE streaming. Its limit: one system prompt and one user message per turn,
// text content only; the API key travels only in the x-api-key header.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/internal/sse"
)

// DefaultBaseURL is Anthropic's API; requests go to {base}/v1/messages.
const DefaultBaseURL = "https://api.anthropic.com"

// Version is the anthropic-version header this client speaks.
const Version = "2023-06-01"

// DefaultMaxTokens is max_tokens (required by the API) when Config leaves it 0.
const DefaultMaxTokens = 4096

// Environment variables read by FromEnv.
const (
	EnvBaseURL = "ANTHROPIC_BASE_URL" // default DefaultBaseURL
	EnvAPIKey  = "ANTHROPIC_API_KEY"  // required by Anthropic's own API
	EnvModel   = "ANTHROPIC_MODEL"    // required
	// EnvMaxTokens is max_tokens (default DefaultMaxTokens); snuggen make
	// raises it, as a whole app is a long reply.
	EnvMaxTokens = "ANTHROPIC_MAX_TOKENS"
)

// Config configures a Backend.
type Config struct {
	BaseURL   string       // without the /v1 path, e.g. https://api.anthropic.com
	Model     string       // e.g. a claude-* model name
	APIKey    string       // sent as x-api-key
	MaxTokens int          // default DefaultMaxTokens
	Client    *http.Client // nil uses http.DefaultClient
}

// Backend talks to one Messages endpoint.
type Backend struct{ cfg Config }

// New returns a Backend for cfg.
func New(cfg Config) (*Backend, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		return nil, errors.New("anthropic: no model: set " + EnvModel)
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = DefaultMaxTokens
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Backend{cfg: cfg}, nil
}

// FromEnv returns a Backend configured from ANTHROPIC_BASE_URL,
// ANTHROPIC_API_KEY and ANTHROPIC_MODEL, read through getenv.
func FromEnv(getenv func(string) string) (*Backend, error) {
	maxTokens, _ := strconv.Atoi(getenv(EnvMaxTokens))
	return New(Config{BaseURL: getenv(EnvBaseURL), APIKey: getenv(EnvAPIKey), Model: getenv(EnvModel), MaxTokens: maxTokens})
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model     string    `json:"model"`
	MaxTokens int       `json:"max_tokens"`
	System    string    `json:"system,omitempty"`
	Messages  []message `json:"messages"`
	Stream    bool      `json:"stream"`
}

// event is the data of one stream event; only the members used are decoded.
type event struct {
	Type  string `json:"type"`
	Delta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
	Error struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

const name = "anthropic"

// Complete sends req as a streamed message.
func (b *Backend) Complete(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
	body := request{
		Model:     b.cfg.Model,
		MaxTokens: b.cfg.MaxTokens,
		System:    req.System,
		Messages:  []message{{"user", req.User}},
		Stream:    true,
	}
	headers := map[string]string{"anthropic-version": Version}
	if b.cfg.APIKey != "" {
		headers["x-api-key"] = b.cfg.APIKey
	}
	resp, err := sse.Post(ctx, b.cfg.Client, name, b.cfg.BaseURL+"/v1/messages", headers, body, b.cfg.APIKey)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	limit := req.ReplyLimit()

	var text strings.Builder
	stopped := false
	err = sse.Read(sse.Limit(resp.Body, limit), func(ev sse.Event) error {
		var e event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return fmt.Errorf("decoding %q event: %w", ev.Name, err)
		}
		if e.Type == "" {
			e.Type = ev.Name
		}
		switch e.Type {
		case "content_block_delta":
			if e.Delta.Type == "text_delta" && e.Delta.Text != "" {
				if text.Len()+len(e.Delta.Text) > limit {
					return fmt.Errorf("%w: more than %d bytes", agent.ErrReplyTooLarge, limit)
				}
				text.WriteString(e.Delta.Text)
				if onText != nil {
					onText(text.String())
				}
			}
		case "message_stop":
			stopped = true
			return sse.ErrStop // nothing after message_stop is read
		case "error":
			return sse.Redact(fmt.Sprintf("the server reported %s: %s", e.Error.Type, e.Error.Message), []string{b.cfg.APIKey})
		}
		return nil
	})
	if err != nil {
		return "", b.streamError(ctx, err)
	}
	if !stopped {
		return "", b.streamError(ctx, errors.New("the stream ended before message_stop"))
	}
	return text.String(), nil
}

func (b *Backend) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	return &agent.NetworkError{Backend: name, Err: err}
}
