package agent_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/anthropic"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
)

// testKey is the backend's API key in these tests; it must only ever appear
// in the auth header.
const testKey = "sk-test-KEY-0123456789"

// wire is one agent API's streaming format, spoken by a fake server on
// loopback exactly as the real service sends it.
type wire struct {
	name string
	// path is where the backend posts.
	path string
	// backend returns a client of this API pointed at base.
	backend func(t *testing.T, base string) agent.Backend
	// stream writes chunks as the API's SSE events; complete adds the events
	// that end a reply ([DONE], message_stop).
	stream func(w http.ResponseWriter, chunks []string, complete bool)
	// delta writes one event adding text, noise one event that adds none
	// (an empty choices list, a ping), each as the API sends them, and
	// report the write's error.
	delta, noise func(w io.Writer, text string) error
}

var wires = []wire{
	{
		name: "openai",
		path: "/v1/chat/completions",
		backend: func(t *testing.T, base string) agent.Backend {
			b, err := openai.New(openai.Config{BaseURL: base + "/v1", Model: "gpt-test", APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		stream: func(w http.ResponseWriter, chunks []string, complete bool) {
			sseHeader(w)
			chunk := func(delta map[string]string, finish any) {
				c := map[string]any{
					"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
					"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
				}
				b, _ := json.Marshal(c)
				fmt.Fprintf(w, "data: %s\n\n", b)
				flush(w)
			}
			chunk(map[string]string{"role": "assistant", "content": ""}, nil)
			for _, s := range chunks {
				chunk(map[string]string{"content": s}, nil)
			}
			if complete {
				chunk(map[string]string{}, "stop")
				fmt.Fprint(w, "data: [DONE]\n\n")
				flush(w)
			}
		},
		delta: func(w io.Writer, text string) error {
			b, _ := json.Marshal(map[string]any{
				"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "delta": map[string]string{"content": text}, "logprobs": nil, "finish_reason": nil}},
			})
			_, err := fmt.Fprintf(w, "data: %s\n\n", b)
			return err
		},
		noise: func(w io.Writer, _ string) error {
			_, err := fmt.Fprint(w, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-test","choices":[]}`+"\n\n")
			return err
		},
	},
	{
		name: "anthropic",
		path: "/v1/messages",
		backend: func(t *testing.T, base string) agent.Backend {
			b, err := anthropic.New(anthropic.Config{BaseURL: base, Model: "claude-test", APIKey: testKey})
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		stream: func(w http.ResponseWriter, chunks []string, complete bool) {
			sseHeader(w)
			event := func(name string, data any) {
				b, _ := json.Marshal(data)
				fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
				flush(w)
			}
			event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
				"id": "msg_1", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-test",
				"stop_reason": nil, "stop_sequence": nil, "usage": map[string]int{"input_tokens": 25, "output_tokens": 1}}})
			event("content_block_start", map[string]any{"type": "content_block_start", "index": 0,
				"content_block": map[string]string{"type": "text", "text": ""}})
			event("ping", map[string]string{"type": "ping"})
			for _, s := range chunks {
				event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
					"delta": map[string]string{"type": "text_delta", "text": s}})
			}
			if complete {
				event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
				event("message_delta", map[string]any{"type": "message_delta",
					"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 15}})
				event("message_stop", map[string]string{"type": "message_stop"})
			}
		},
		delta: func(w io.Writer, text string) error {
			b, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]string{"type": "text_delta", "text": text}})
			_, err := fmt.Fprintf(w, "event: content_block_delta\ndata: %s\n\n", b)
			return err
		},
		noise: func(w io.Writer, _ string) error {
			_, err := fmt.Fprint(w, "event: ping\ndata: {\"type\": \"ping\"}\n\n")
			return err
		},
	},
}

func sseHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func flush(w http.ResponseWriter) { w.(http.Flusher).Flush() }

// fakeAgent is a loopback HTTP server playing an agent endpoint; serve
// decides each answer from the 1-based hit number.
type fakeAgent struct {
	srv *httptest.Server

	mu       sync.Mutex
	hits     int
	requests []recorded
}

type recorded struct {
	path   string
	header http.Header
	body   []byte
}

func newFakeAgent(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, hit int)) *fakeAgent {
	f := &fakeAgent{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.hits++
		hit := f.hits
		f.requests = append(f.requests, recorded{r.URL.Path, r.Header.Clone(), body})
		f.mu.Unlock()
		serve(w, r, hit)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAgent) Hits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits
}

func (f *fakeAgent) Request(i int) recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[i]
}

// chunked splits s into pieces of n bytes (the tests' replies are ASCII).
func chunked(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}
