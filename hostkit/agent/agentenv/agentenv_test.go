package agentenv_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/agentenv"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	if _, name, err := agentenv.FromEnv(env(nil)); err != nil || name != "offline" {
		t.Fatalf("default: %s %v", name, err)
	}
	for _, bad := range []map[string]string{
		{"SNUG_AGENT": "gpt"},
		{"SNUG_AGENT": "openai"},    // no model
		{"SNUG_AGENT": "anthropic"}, // no key, no model
		{"SNUG_AGENT": "anthropic", "ANTHROPIC_MODEL": "m"},
	} {
		if _, _, err := agentenv.FromEnv(env(bad)); err == nil || !strings.Contains(err.Error(), "SNUG_AGENT") {
			t.Errorf("%v: err %v", bad, err)
		}
	}
	// A configured OpenAI-compatible backend reaches its server (an Ollama-like
	// local one needs no key: no Authorization header goes out).
	var auth []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Values("Authorization")
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"{}\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	b, name, err := agentenv.FromEnv(env(map[string]string{"SNUG_AGENT": "OpenAI", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "llama3"}))
	if err != nil || name != "openai" {
		t.Fatalf("%s %v", name, err)
	}
	text, err := b.Complete(context.Background(), agent.Completion{System: "s", User: "u"}, nil)
	if err != nil || text != "{}" {
		t.Fatalf("%q %v", text, err)
	}
	if len(auth) != 0 {
		t.Errorf("sent Authorization %q without a key", auth)
	}
}
