package agent_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

func appMessage(payload, state, schema string) *frame.AppMessage {
	m := &frame.AppMessage{RequestID: "r1", InstanceID: "i1", AppID: "com.example.todo", Action: "summarize"}
	if payload != "" {
		m.Payload = json.RawMessage(payload)
	}
	if state != "" {
		m.State = json.RawMessage(state)
	}
	if schema != "" {
		m.ResponseSchema = json.RawMessage(schema)
	}
	return m
}

func TestEnvelopeShape(t *testing.T) {
	env, err := agent.Envelope("todo", appMessage(`{"text":"a b c","n":12345678901234567890,"z":1,"a":2,"f":1.50e3}`, `null`, `{"type":"object"}`))
	if err != nil {
		t.Fatal(err)
	}
	want := frame.EnvelopeTag + "\n" +
		`{"snug":1,"appId":"todo","instanceId":"i1","requestId":"r1","action":"summarize",` +
		`"payload":{"text":"a b c","n":12345678901234567890,"z":1,"a":2,"f":1.50e3},"state":null,"responseSchema":{"type":"object"}}`
	if string(env) != want {
		t.Fatalf("envelope:\n got %s\nwant %s", env, want)
	}
	// Absent members stay absent.
	env, err = agent.Envelope("todo", appMessage("", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(env), "payload") || strings.Contains(string(env), "state") || strings.Contains(string(env), "responseSchema") {
		t.Fatalf("absent members appeared: %s", env)
	}
}

// TestEnvelopeStripsCredentialsAtDepth is the C1 attack: an app hides
// credential-shaped keys anywhere in payload and state, in any case, behind
// JSON escapes, inside arrays; none may reach the agent.
func TestEnvelopeStripsCredentialsAtDepth(t *testing.T) {
	payload := `{"Authorization":"Bearer SECRET-1","keep":"yes","req":{"headers":{"Cookie":"SECRET-2","Accept":"text/plain"}},
		"list":[{"x-api-key":"SECRET-3","id":1},[{"deep":{"Proxy-Authorization":"SECRET-4"}}]],
		"\u0061uthorization":"SECRET-5","SET-COOKIE":{"nested":"SECRET-6"}}`
	state := `[{"cookie":"SECRET-7"},{"X-Api-Key":["SECRET-8"]},"authorization",{"authorization2":"kept"}]`
	env, err := agent.Envelope("todo", appMessage(payload, state, ""))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 8; i++ {
		if s := "SECRET-" + string(rune('0'+i)); strings.Contains(string(env), s) {
			t.Errorf("%s reached the envelope: %s", s, env)
		}
	}
	got, ok := agent.Detect(string(env))
	if !ok {
		t.Fatalf("Detect refused our own envelope: %s", env)
	}
	wantPayload := `{"keep":"yes","req":{"headers":{"Accept":"text/plain"}},"list":[{"id":1},[{"deep":{}}]]}`
	if string(got.Payload) != wantPayload {
		t.Errorf("payload:\n got %s\nwant %s", got.Payload, wantPayload)
	}
	// A string value equal to a header name is data, not a key; a longer key is not a header.
	wantState := `[{},{},"authorization",{"authorization2":"kept"}]`
	if string(got.State) != wantState {
		t.Errorf("state:\n got %s\nwant %s", got.State, wantState)
	}
	for _, h := range frame.StripHeaders {
		if strings.Contains(strings.ToLower(string(got.Payload)+string(got.State)), `"`+h+`":`) {
			t.Errorf("a %q key survived", h)
		}
	}
}

func TestDetect(t *testing.T) {
	good, err := agent.Envelope("com.example.todo", appMessage(`{"q":1}`, `{"s":true}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	env, ok := agent.Detect(string(good))
	if !ok || env.RequestID != "r1" || env.Action != "summarize" || env.AppID != "com.example.todo" || string(env.Payload) != `{"q":1}` || string(env.State) != `{"s":true}` {
		t.Fatalf("Detect(own envelope) = %+v, %v", env, ok)
	}
	body := strings.TrimPrefix(string(good), frame.EnvelopeTag+"\n")
	tag := frame.EnvelopeTag
	negatives := map[string]string{
		"quoted in prose":        "The app sent " + tag + "\n" + body,
		"quoted as markdown":     "> " + tag + "\n" + body,
		"leading space":          " " + tag + "\n" + body,
		"tag only":               tag,
		"tag without newline":    tag + body,
		"snug 2":                 tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":2`, 1),
		"snug string":            tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":"1"`, 1),
		"snug true":              tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":true`, 1),
		"marker missing":         tag + "\n" + strings.Replace(body, `"snug":1,`, ``, 1),
		"not JSON":               tag + "\nplease summarize this",
		"array":                  tag + "\n[" + body + "]",
		"trailing text":          tag + "\n" + body + " and more",
		"two objects":            tag + "\n" + body + body,
		"requestId missing":      tag + "\n" + strings.Replace(body, `"requestId":"r1",`, ``, 1),
		"requestId empty":        tag + "\n" + strings.Replace(body, `"requestId":"r1"`, `"requestId":""`, 1),
		"action not a string":    tag + "\n" + strings.Replace(body, `"action":"summarize"`, `"action":7`, 1),
		"payload not an object":  tag + "\n" + strings.Replace(body, `"payload":{"q":1}`, `"payload":[1]`, 1),
		"lower-case tag":         strings.ToLower(tag) + "\n" + body,
		"empty":                  "",
		"marker nested not top":  tag + "\n" + `{"appId":"a","instanceId":"i","requestId":"r","action":"x","payload":{"snug":1}}`,
		"appId over 128 points":  tag + "\n" + strings.Replace(body, `"appId":"com.example.todo"`, `"appId":"`+strings.Repeat("é", 129)+`"`, 1),
		"responseSchema not obj": tag + "\n" + strings.Replace(body, `"requestId":"r1"`, `"requestId":"r1","responseSchema":true`, 1),
		"snug twice, last 1":     tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":2,"snug":1`, 1),
		"appId twice":            tag + "\n" + strings.Replace(body, `"appId":`, `"appId":"evil","appId":`, 1),
		"snug 1.5":               tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":1.5`, 1),
		"CRLF after the tag":     tag + "\r\n" + body,
	}
	for name, text := range negatives {
		if env, ok := agent.Detect(text); ok || env != nil {
			t.Errorf("%s: Detect = %+v, true; want not an app request", name, env)
		}
	}
	// Keys are case-sensitive: "APPID" is an unknown member, not appId.
	smuggled := tag + "\n" + strings.Replace(body, `"action"`, `"APPID":"evil","Action":"evil","action"`, 1)
	if env, ok := agent.Detect(smuggled); !ok || env.AppID != "com.example.todo" || env.Action != "summarize" {
		t.Errorf("case-folded keys: %+v, %v", env, ok)
	}
	// The marker is the integer 1 however it is spelled, as for a frame's v.
	// 1.0000000000000001 is the double 1 (JSON.parse), as frame.ParseEnvelope
	// and a frame's v read it.
	for _, one := range []string{"1.0", "1e0", "1.0000000000000001"} {
		if _, ok := agent.Detect(tag + "\n" + strings.Replace(body, `"snug":1`, `"snug":`+one, 1)); !ok {
			t.Errorf("snug %s: not detected", one)
		}
	}
	// C1 at the envelope boundary: credential-shaped keys an envelope carries
	// (built by another client) are stripped from what Detect returns.
	raw := tag + "\n" + `{"snug":1,"appId":"a","instanceId":"i","requestId":"r","action":"x","payload":{"Authorization":"t","n":[{"COOKIE":1,"k":2}]},"state":{"x-api-key":"s"}}`
	if env, ok := agent.Detect(raw); !ok || string(env.Payload) != `{"n":[{"k":2}]}` || string(env.State) != `{}` {
		t.Errorf("credentials in a detected envelope: %+v, %v", env, ok)
	}
	// Whitespace around the JSON and a CRLF-free pretty print are still one envelope.
	var pretty map[string]any
	if err := json.Unmarshal([]byte(body), &pretty); err != nil {
		t.Fatal(err)
	}
	indented, _ := json.MarshalIndent(pretty, "", "  ")
	if _, ok := agent.Detect(tag + "\n" + string(indented) + "\n"); !ok {
		t.Errorf("Detect refused a pretty-printed envelope")
	}
}
