// Package fakemodel is a scripted model behind a real HTTP server on
// loopback that speaks the OpenAI chat-completions and Anthropic Messages
// streaming wire formats (SSE, as the services send them), for tests of
// code that talks to a model: the authoring loop, the runner's make boxes.
// A test gives it a function that answers each turn, and reads back every
// turn it was sent.
//
// Its limit: one system and one user message per turn, text only, which is
// what hostkit/agent's backends send; it is for tests and never listens
// anywhere but 127.0.0.1.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/anthropic"
	"github.com/snuggen/snuggen/hostkit/agent/openai"
)

// Key is the API key the backends send; a request without it is refused
// with 401 as the services do.
const Key = "sk-fake-model-KEY"

// Turn is one request the model was sent.
type Turn struct {
	System, User string
}

// Answer returns the model's reply to a turn; n counts turns from 1.
type Answer func(n int, t Turn) string

// Server is a model on loopback.
type Server struct {
	// Wire is "openai" or "anthropic".
	Wire string
	// URL is the base URL its backend takes (…/v1 for openai, the root for
	// anthropic), as OPENAI_BASE_URL or ANTHROPIC_BASE_URL would hold it.
	URL string

	srv    *httptest.Server
	answer Answer
	mu     sync.Mutex
	turns  []Turn
}

// Wires lists the formats New speaks.
var Wires = []string{"openai", "anthropic"}

// New starts a model speaking wire ("openai" or "anthropic") that answers
// with answer; it stops when the test ends.
func New(t testing.TB, wire string, answer Answer) *Server {
	t.Helper()
	s := &Server{Wire: wire, answer: answer}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	switch wire {
	case "openai":
		s.URL = s.srv.URL + "/v1"
	case "anthropic":
		s.URL = s.srv.URL
	default:
		t.Fatalf("fakemodel: unknown wire %q", wire)
	}
	return s
}

// Backend is hostkit/agent's client of this server, as a host configures it.
func (s *Server) Backend(t testing.TB) agent.Backend {
	t.Helper()
	var (
		b   agent.Backend
		err error
	)
	if s.Wire == "openai" {
		b, err = openai.New(openai.Config{BaseURL: s.URL, Model: "fake-model", APIKey: Key})
	} else {
		b, err = anthropic.New(anthropic.Config{BaseURL: s.URL, Model: "fake-model", APIKey: Key})
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Env is the environment that points agentenv at this server.
func (s *Server) Env() map[string]string {
	if s.Wire == "openai" {
		return map[string]string{"SNUG_AGENT": "openai", openai.EnvBaseURL: s.URL, openai.EnvModel: "fake-model", openai.EnvAPIKey: Key}
	}
	return map[string]string{"SNUG_AGENT": "anthropic", anthropic.EnvBaseURL: s.URL, anthropic.EnvModel: "fake-model", anthropic.EnvAPIKey: Key}
}

// Turns returns the turns received so far, in order.
func (s *Server) Turns() []Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Turn(nil), s.turns...)
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type request struct {
	System   string    `json:"system"`
	Messages []message `json:"messages"`
	Stream   bool      `json:"stream"`
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path, auth := "/v1/chat/completions", r.Header.Get("Authorization") == "Bearer "+Key
	if s.Wire == "anthropic" {
		path, auth = "/v1/messages", r.Header.Get("x-api-key") == Key
	}
	if r.Method != http.MethodPost || r.URL.Path != path {
		http.NotFound(w, r)
		return
	}
	if !auth {
		http.Error(w, `{"error":{"message":"invalid api key"}}`, http.StatusUnauthorized)
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Stream {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	turn := Turn{System: req.System}
	for _, m := range req.Messages {
		switch m.Role {
		case "system":
			turn.System = m.Content
		case "user":
			turn.User = m.Content
		}
	}
	s.mu.Lock()
	s.turns = append(s.turns, turn)
	n := len(s.turns)
	s.mu.Unlock()
	reply := s.answer(n, turn)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	if s.Wire == "openai" {
		streamOpenAI(w, chunks(reply))
	} else {
		streamAnthropic(w, chunks(reply))
	}
}

// chunks cuts text as a model streams it: a few dozen bytes at a time, on
// rune boundaries.
func chunks(text string) []string {
	var out []string
	for len(text) > 0 {
		n := min(len(text), 48)
		for n < len(text) && text[n]&0xC0 == 0x80 {
			n++
		}
		out = append(out, text[:n])
		text = text[n:]
	}
	return out
}

func event(w http.ResponseWriter, name string, data any) {
	b, _ := json.Marshal(data)
	if name != "" {
		fmt.Fprintf(w, "event: %s\n", name)
	}
	fmt.Fprintf(w, "data: %s\n\n", b)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func streamOpenAI(w http.ResponseWriter, parts []string) {
	chunk := func(delta map[string]string, finish any) {
		event(w, "", map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1700000000, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}},
		})
	}
	chunk(map[string]string{"role": "assistant", "content": ""}, nil)
	for _, p := range parts {
		chunk(map[string]string{"content": p}, nil)
	}
	chunk(map[string]string{}, "stop")
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func streamAnthropic(w http.ResponseWriter, parts []string) {
	event(w, "message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake-model", "content": []any{},
		"stop_reason": nil, "usage": map[string]int{"input_tokens": 10, "output_tokens": 1}}})
	event(w, "content_block_start", map[string]any{"type": "content_block_start", "index": 0,
		"content_block": map[string]string{"type": "text", "text": ""}})
	event(w, "ping", map[string]string{"type": "ping"})
	for _, p := range parts {
		event(w, "content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]string{"type": "text_delta", "text": p}})
	}
	event(w, "content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	event(w, "message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": "end_turn"}, "usage": map[string]int{"output_tokens": 100}})
	event(w, "message_stop", map[string]string{"type": "message_stop"})
}
