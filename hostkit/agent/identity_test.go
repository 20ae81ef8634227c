package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// capture is a backend that keeps the completion it was sent and answers
// reply.
func capture(got *agent.Completion, reply string) agent.Backend {
	return agent.BackendFunc(func(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
		*got = req
		return reply, nil
	})
}

// An app that calls itself another app (the appId in its own frame) is
// named to the agent by the host's key for it: the claimed appId does not
// reach the agent as if it were the app's identity.
func TestAskNamesTheAppByTheHostsKey(t *testing.T) {
	var got agent.Completion
	br := agent.NewBridge(capture(&got, `{"message":"ok"}`), agent.Options{})
	m := appMessage(`{"q":1}`, "", "")
	m.AppID = "com.example.bank"
	if _, ferr := br.Ask(context.Background(), agent.Caller{App: "notes", Instance: "i1"}, m, nil); ferr != nil {
		t.Fatalf("Ask: %+v", ferr)
	}
	env, ok := agent.Detect(got.User)
	if !ok || env.AppID != "notes" {
		t.Fatalf("the envelope names the app %q (detected %v), want the host's key %q:\n%s", env.AppID, ok, "notes", got.User)
	}
	if strings.Contains(got.User, "com.example.bank") || strings.Contains(got.System, "com.example.bank") {
		t.Fatalf("the claimed appId reached the agent:\n%s\n%s", got.System, got.User)
	}
	if !strings.Contains(got.System, "appId") || !strings.Contains(got.System, "host") {
		t.Errorf("the system prompt does not say whose name appId is:\n%s", got.System)
	}
	// Without the host's key there is no one to name: the host's own bug.
	if _, ferr := br.Ask(context.Background(), agent.Caller{Instance: "i1"}, m, nil); ferr == nil || ferr.Code != "HOST_ERROR" {
		t.Fatalf("Ask without an app key: %+v", ferr)
	}
}

// C1 holds for the responseSchema too: credential-shaped keys an app hides
// in its schema, at any depth, reach neither the system prompt (where the
// schema is quoted), nor the envelope, nor a backend's structured-output
// schema; the stripped schema is the one enforced.
func TestAskStripsCredentialsFromTheSchema(t *testing.T) {
	schema := `{"type":"object","required":["message"],"properties":{"message":{"type":"string"},
		"Authorization":{"const":"Bearer SCHEMA-SECRET-1"}},
		"$defs":{"h":{"headers":{"cookie":"SCHEMA-SECRET-2","keep":"x"}}},
		"allOf":[{"X-Api-Key":"SCHEMA-SECRET-3"},{"type":"object"}],"\u0073et-cookie":"SCHEMA-SECRET-4"}`
	var got agent.Completion
	br := agent.NewBridge(capture(&got, `{"message":"ok"}`), agent.Options{})
	data, ferr := br.Ask(context.Background(), agent.Caller{App: "notes", Instance: "i1"}, appMessage("", "", schema), nil)
	if ferr != nil || string(data) != `{"message":"ok"}` {
		t.Fatalf("Ask = %s, %+v", data, ferr)
	}
	for where, text := range map[string]string{"system prompt": got.System, "envelope": got.User, "schema": string(got.Schema)} {
		if strings.Contains(text, "SCHEMA-SECRET") {
			t.Errorf("a credential from the schema reached the agent's %s:\n%s", where, text)
		}
	}
	if !strings.Contains(got.System, `"keep":"x"`) || !strings.Contains(string(got.Schema), `"required":["message"]`) {
		t.Errorf("the rest of the schema is gone:\n%s", got.System)
	}
	// The same for a host's own system prompt builder: it gets the
	// stripped schema.
	var seen string
	br = agent.NewBridge(capture(&got, `{"message":"ok"}`), agent.Options{SystemPrompt: func(s json.RawMessage) string { seen = string(s); return "x" }})
	if _, ferr := br.Ask(context.Background(), agent.Caller{App: "notes", Instance: "i1"}, appMessage("", "", schema), nil); ferr != nil {
		t.Fatal(ferr)
	}
	if seen == "" || strings.Contains(seen, "SCHEMA-SECRET") {
		t.Errorf("SystemPrompt was given %s", seen)
	}
}

// An envelope built by another client is read with its responseSchema
// stripped too (C1 at the envelope boundary).
func TestDetectStripsTheSchema(t *testing.T) {
	raw := "[SNUG_APP_REQUEST]\n" + `{"snug":1,"appId":"a","instanceId":"i","requestId":"r","action":"x","responseSchema":{"type":"object","properties":{"Cookie":{"const":"SCHEMA-SECRET"}},"required":["m"]}}`
	env, ok := agent.Detect(raw)
	if !ok || strings.Contains(string(env.ResponseSchema), "SCHEMA-SECRET") || string(env.ResponseSchema) != `{"type":"object","properties":{},"required":["m"]}` {
		t.Fatalf("Detect = %+v, %v", env, ok)
	}
}
