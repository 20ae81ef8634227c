package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// maxErrorBody bounds how much of an error answer is read for its message.
const maxErrorBody = 8 << 10

// Post sends body as JSON to url with headers and returns the response when
// its status is 2xx; the caller closes its body. A 409 is an error wrapping
// agent.ErrThreadConflict; any other failure is an *agent.NetworkError whose
// message comes from the answer's JSON error (with every secret in redact
// replaced by "[REDACTED]", so a key an endpoint echoes never travels on).
func Post(ctx context.Context, client *http.Client, backend, url string, headers map[string]string, body any, redact ...string) (*http.Response, error) {
	buf, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s: encoding request: %w", backend, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(buf))
	if err != nil {
		return nil, &agent.NetworkError{Backend: backend, Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", backend, context.Cause(ctx))
		}
		return nil, &agent.NetworkError{Backend: backend, Err: Redact(err.Error(), redact)}
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	msg := errorMessage(resp.Body)
	if resp.StatusCode == http.StatusConflict {
		return nil, fmt.Errorf("%s: HTTP %d: %s: %w", backend, resp.StatusCode, Redact(msg, redact), agent.ErrThreadConflict)
	}
	return nil, &agent.NetworkError{Backend: backend, Status: resp.StatusCode, Err: Redact(msg, redact)}
}

// errorMessage reads an error answer's message: {"error":{"message":…}} as
// both APIs send it, else the start of the body.
func errorMessage(r io.Reader) string {
	b, _ := io.ReadAll(io.LimitReader(r, maxErrorBody))
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "\uFFFD"))
	if s == "" {
		return "no error message"
	}
	return s
}

// redactedError is an error message with secrets removed.
type redactedError string

func (e redactedError) Error() string { return string(e) }

// Redact returns msg as an error with every non-empty secret replaced by
// "[REDACTED]".
func Redact(msg string, secrets []string) error {
	for _, s := range secrets {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[REDACTED]")
		}
	}
	return redactedError(msg)
}
