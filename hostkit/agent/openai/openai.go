// Package openai is an agent.Backend for OpenAI-compatible chat completions
// with SSE streaming: OpenAI itself, Ollama, vLLM, llama.cpp's server,
// OpenRouter and anything else serving POST {base}/chat/completions. Its
// limit: one system and one user message per turn, text content only; the
// API key travels only in the Authorization header.
package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/internal/sse"
)

// DefaultBaseURL is OpenAI's own API.
const DefaultBaseURL = "https://api.openai.com/v1"

// Environment variables read by FromEnv.
const (
	EnvBaseURL = "OPENAI_BASE_URL" // default DefaultBaseURL; e.g. http://localhost:11434/v1 for Ollama
	EnvAPIKey  = "OPENAI_API_KEY"  // optional: local servers need none
	EnvModel   = "OPENAI_MODEL"    // required
)

// Config configures a Backend.
type Config struct {
	BaseURL   string       // up to and including the version path, e.g. https://api.openai.com/v1
	Model     string       // the model name the server knows
	APIKey    string       // sent as "Authorization: Bearer …" when non-empty
	MaxTokens int          // max_tokens when > 0
	JSONMode  bool         // ask for response_format {"type":"json_object"} (not every server has it)
	Client    *http.Client // nil uses http.DefaultClient
}

// Backend talks to one OpenAI-compatible endpoint.
type Backend struct{ cfg Config }

// New returns a Backend for cfg.
func New(cfg Config) (*Backend, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		return nil, errors.New("openai: no model: set " + EnvModel)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	return &Backend{cfg: cfg}, nil
}

// FromEnv returns a Backend configured from OPENAI_BASE_URL, OPENAI_API_KEY
// and OPENAI_MODEL, read through getenv (os.Getenv in a host).
func FromEnv(getenv func(string) string) (*Backend, error) {
	return New(Config{BaseURL: getenv(EnvBaseURL), APIKey: getenv(EnvAPIKey), Model: getenv(EnvModel)})
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	Model          string            `json:"model"`
	Messages       []message         `json:"messages"`
	Stream         bool              `json:"stream"`
	MaxTokens      int               `json:"max_tokens,omitempty"`
	ResponseFormat map[string]string `json:"response_format,omitempty"`
}

// chunk is one streamed chat.completion.chunk (or, with choices[].message,
// a whole non-streamed completion).
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

const name = "openai"

// Complete sends req as a streamed chat completion.
func (b *Backend) Complete(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
	body := request{
		Model:     b.cfg.Model,
		Messages:  []message{{"system", req.System}, {"user", req.User}},
		Stream:    true,
		MaxTokens: b.cfg.MaxTokens,
	}
	if b.cfg.JSONMode {
		body.ResponseFormat = map[string]string{"type": "json_object"}
	}
	headers := map[string]string{}
	if b.cfg.APIKey != "" {
		headers["Authorization"] = "Bearer " + b.cfg.APIKey
	}
	resp, err := sse.Post(ctx, b.cfg.Client, name, b.cfg.BaseURL+"/chat/completions", headers, body, b.cfg.APIKey)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	limit := req.ReplyLimit()
	stream := sse.Limit(resp.Body, limit)

	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// A server that ignored "stream": the whole completion at once.
		var c chunk
		if err := json.NewDecoder(stream).Decode(&c); err != nil {
			return "", b.streamError(ctx, fmt.Errorf("decoding completion: %w", err))
		}
		if c.Error != nil || len(c.Choices) == 0 {
			return "", &agent.NetworkError{Backend: name, Status: resp.StatusCode, Err: errors.New("completion without a choice")}
		}
		text := c.Choices[0].Message.Content
		if len(text) > limit {
			return "", b.streamError(ctx, fmt.Errorf("%w: more than %d bytes", agent.ErrReplyTooLarge, limit))
		}
		if onText != nil && text != "" {
			onText(text)
		}
		return text, nil
	}

	var text strings.Builder
	done, finished := false, false
	err = sse.Read(stream, func(ev sse.Event) error {
		if strings.TrimSpace(ev.Data) == "[DONE]" {
			done = true
			return sse.ErrStop // nothing after [DONE] is read
		}
		var c chunk
		if err := json.Unmarshal([]byte(ev.Data), &c); err != nil {
			return fmt.Errorf("decoding stream chunk: %w", err)
		}
		if c.Error != nil {
			return sse.Redact("the server reported: "+c.Error.Message, []string{b.cfg.APIKey})
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != "" {
				if text.Len()+len(ch.Delta.Content) > limit {
					return fmt.Errorf("%w: more than %d bytes", agent.ErrReplyTooLarge, limit)
				}
				text.WriteString(ch.Delta.Content)
				if onText != nil {
					onText(text.String())
				}
			}
			if ch.FinishReason != nil && *ch.FinishReason != "" {
				finished = true
			}
		}
		return nil
	})
	if err != nil {
		return "", b.streamError(ctx, err)
	}
	if !done && !finished {
		return "", b.streamError(ctx, errors.New("the stream ended before the reply was complete"))
	}
	return text.String(), nil
}

func (b *Backend) streamError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", name, context.Cause(ctx))
	}
	return &agent.NetworkError{Backend: name, Err: err}
}
