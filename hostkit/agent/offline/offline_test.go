package offline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
)

// schemas the mock must satisfy, checked with an independently compiled
// validator.
var schemas = map[string]string{
	"flashcards": `{"type":"object","required":["cards"],"properties":{"cards":{"type":"array","minItems":3,"maxItems":5,
		"items":{"type":"object","required":["front","back"],"properties":{"front":{"type":"string","minLength":1,"maxLength":80},"back":{"type":"string"}},"additionalProperties":false}}}}`,
	"enum and const": `{"type":"object","required":["mood","v"],"properties":{"mood":{"enum":["happy","sad","😀"]},"v":{"const":2}}}`,
	"numbers": `{"type":"object","required":["i","n","m","e","neg"],"properties":{"i":{"type":"integer","minimum":10,"maximum":12},
		"n":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},"m":{"type":"integer","multipleOf":7,"minimum":50},
		"e":{"type":"integer","exclusiveMinimum":5,"exclusiveMaximum":7},"neg":{"type":"number","maximum":-3.5}}}`,
	"string lengths": `{"type":"object","required":["short","long","exact"],"properties":{"short":{"type":"string","maxLength":3},
		"long":{"type":"string","minLength":120},"exact":{"type":"string","minLength":5,"maxLength":5}}}`,
	"formats": `{"type":"object","required":["when","day","mail","link","id"],"properties":{"when":{"type":"string","format":"date-time"},
		"day":{"type":"string","format":"date"},"mail":{"type":"string","format":"email"},"link":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"}}}`,
	"nested arrays":     `{"type":"object","required":["grid"],"properties":{"grid":{"type":"array","minItems":2,"items":{"type":"array","minItems":2,"maxItems":2,"items":{"type":"boolean"}}}}}`,
	"unique enum items": `{"type":"object","required":["tags"],"properties":{"tags":{"type":"array","minItems":3,"uniqueItems":true,"items":{"enum":["a","b","c","d"]}}}}`,
	"tuple":             `{"type":"object","required":["pair"],"properties":{"pair":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false,"minItems":2}}}`,
	"refs and defs": `{"$defs":{"item":{"type":"object","required":["name","price"],"properties":{"name":{"type":"string"},"price":{"type":"number","minimum":0}}}},
		"type":"object","required":["items","best"],"properties":{"items":{"type":"array","items":{"$ref":"#/$defs/item"}},"best":{"$ref":"#/$defs/item"}}}`,
	"recursive": `{"$defs":{"node":{"type":"object","required":["label"],"properties":{"label":{"type":"string"},"children":{"type":"array","maxItems":2,"items":{"$ref":"#/$defs/node"}}}}},"$ref":"#/$defs/node"}`,
	"allOf":     `{"allOf":[{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},{"required":["b"],"properties":{"b":{"type":"integer","minimum":3}}}]}`,
	"oneOf": `{"type":"object","required":["shape"],"properties":{"shape":{"oneOf":[{"type":"object","required":["r"],"properties":{"r":{"type":"number","minimum":1}},"additionalProperties":false},
		{"type":"object","required":["w","h"],"properties":{"w":{"type":"integer"},"h":{"type":"integer"}},"additionalProperties":false}]}}}`,
	"anyOf nullable": `{"type":"object","required":["x","y"],"properties":{"x":{"anyOf":[{"type":"null"},{"type":"string","minLength":2}]},"y":{"type":["null","integer"]}}}`,
	"minProperties":  `{"type":"object","minProperties":3,"additionalProperties":{"type":"integer"}}`,
	"maxProperties":  `{"type":"object","maxProperties":1,"required":["only"],"properties":{"only":{"type":"string"},"other":{"type":"string"}}}`,
	"contains":       `{"type":"object","required":["xs"],"properties":{"xs":{"type":"array","contains":{"const":42},"items":{"type":"integer"}}}}`,
	"untyped object": `{"required":["message","score"],"properties":{"message":{},"score":{"minimum":1,"maximum":5}}}`,
	"draft-07": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["n","t"],"properties":{"n":{"type":"number","exclusiveMinimum":10},
		"t":{"type":"array","items":[{"type":"string"},{"type":"boolean"}],"additionalItems":false}}}`,
	"empty": `{}`,
}

func validator(t *testing.T, schema string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	if err := c.AddResource("test.json", strings.NewReader(schema)); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("test.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func instance(t *testing.T, raw []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

func TestGenerateIsValid(t *testing.T) {
	for name, schema := range schemas {
		v := validator(t, schema)
		for seed := range uint64(20) {
			raw, err := offline.Generate(json.RawMessage(schema), seed*7919, "act")
			if err != nil {
				t.Fatalf("%s seed %d: %.300v (%.300s)", name, seed, err, raw)
			}
			inst := instance(t, raw)
			if err := v.Validate(inst); err != nil {
				t.Fatalf("%s seed %d: %.300s is invalid: %.300v", name, seed, raw, err)
			}
			if _, ok := inst.(map[string]any); !ok {
				t.Fatalf("%s: %s is not an object", name, raw)
			}
		}
	}
}

func TestGenerateUnsatisfiable(t *testing.T) {
	// A pattern the mock cannot guess: it says so instead of claiming success.
	raw, err := offline.Generate(json.RawMessage(`{"type":"object","required":["zip"],"properties":{"zip":{"type":"string","pattern":"^[0-9]{5}$"}}}`), 1, "")
	if err == nil {
		t.Fatalf("claimed %s is valid", raw)
	}
	if raw == nil {
		t.Fatalf("no best attempt returned")
	}
}

func completion(t *testing.T, requestID, payload, schema string) agent.Completion {
	m := &frame.AppMessage{RequestID: requestID, InstanceID: "i1", AppID: "app", Action: "make-cards"}
	if payload != "" {
		m.Payload = json.RawMessage(payload)
	}
	if schema != "" {
		m.ResponseSchema = json.RawMessage(schema)
	}
	env, err := agent.Envelope("todo", m)
	if err != nil {
		t.Fatal(err)
	}
	return agent.Completion{System: agent.DefaultSystemPrompt(m.ResponseSchema), User: string(env), Schema: m.ResponseSchema}
}

func TestMockStreamsDeterministically(t *testing.T) {
	b := offline.New(offline.Options{ChunkSize: 5})
	req := completion(t, "r1", `{"topic":"café ☕"}`, schemas["flashcards"])
	var frames []string
	text, err := b.Complete(context.Background(), req, func(s string) { frames = append(frames, s) })
	if err != nil {
		t.Fatal(err)
	}
	if err := validator(t, schemas["flashcards"]).Validate(instance(t, []byte(text))); err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	if len(frames) < 2 || frames[len(frames)-1] != text {
		t.Fatalf("frames %q", frames)
	}
	for i, f := range frames {
		if !utf8.ValidString(f) {
			t.Fatalf("frame %d splits a rune: %q", i, f)
		}
		if i > 0 && (!strings.HasPrefix(f, frames[i-1]) || len(f) == len(frames[i-1])) {
			t.Fatalf("frame %d is not cumulative", i)
		}
	}
	// Same request (another requestId) → same answer; another payload may differ.
	again, err := b.Complete(context.Background(), completion(t, "r2", `{"topic":"café ☕"}`, schemas["flashcards"]), nil)
	if err != nil || again != text {
		t.Fatalf("not deterministic:\n%s\n%s", text, again)
	}
	// Without a schema: {"message": …} naming the action.
	plain, err := b.Complete(context.Background(), completion(t, "r3", "", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	var msg map[string]string
	if err := json.Unmarshal([]byte(plain), &msg); err != nil || len(msg) != 1 || !strings.Contains(msg["message"], "make-cards") {
		t.Fatalf("plain answer %s", plain)
	}
}

// TestMockHonoursContext: the offline agent stops streaming when its
// context ends, between steps and during a step's delay.
func TestMockHonoursContext(t *testing.T) {
	// Between steps: the caller gives up at the first frame, and no other
	// frame follows.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := offline.New(offline.Options{ChunkSize: 1}).Complete(ctx, completion(t, "r1", "", ""), func(string) { n++; cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if n != 1 {
		t.Errorf("%d frames, want 1: the agent streamed on after its context ended", n)
	}

	// During a delay of an hour: only the context can end it. The caller
	// gives up once the agent waits on the context (reads its Done).
	waiting := make(chan struct{})
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	watched := &doneWatcher{Context: ctx, first: waiting}
	go func() {
		<-waiting
		cancel()
	}()
	result := make(chan error, 1)
	n = 0
	go func() {
		_, err := offline.New(offline.Options{ChunkSize: 1, Delay: time.Hour}).Complete(watched, completion(t, "r1", "", ""), func(string) { n++ })
		result <- err
	}()
	select {
	case err := <-result:
		if !errors.Is(err, context.Canceled) || n != 0 {
			t.Errorf("err %v after %d frames, want the context's end before the first", err, n)
		}
	case <-time.After(30 * time.Second): // a hang, not a speed: the delay is an hour
		t.Fatal("the agent waited out its delay after its context ended")
	}

	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	if _, err := offline.New(offline.Options{}).Complete(done, completion(t, "r1", "", ""), nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

// doneWatcher is a context that closes first the first time its Done is
// read: a waiter that honours the context reads it when it starts to wait.
type doneWatcher struct {
	context.Context
	first chan struct{}
	once  sync.Once
}

func (d *doneWatcher) Done() <-chan struct{} {
	d.once.Do(func() { close(d.first) })
	return d.Context.Done()
}

// TestBridgeWithMock: the default offline agent answers every schema through
// the bridge, so apps run with no key.
func TestBridgeWithMock(t *testing.T) {
	br := agent.NewBridge(offline.New(offline.Options{}), agent.Options{})
	for name, schema := range schemas {
		m := &frame.AppMessage{RequestID: "r", InstanceID: "i", AppID: "a", Action: name, ResponseSchema: json.RawMessage(schema)}
		streamed := ""
		data, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, m, func(s string) { streamed = s })
		if ferr != nil {
			t.Fatalf("%s: %+v", name, ferr)
		}
		if err := validator(t, schema).Validate(instance(t, data)); err != nil {
			t.Fatalf("%s: %s: %v", name, data, err)
		}
		if streamed == "" {
			t.Errorf("%s: nothing streamed", name)
		}
	}
}

func BenchmarkMockAsk(b *testing.B) {
	br := agent.NewBridge(offline.New(offline.Options{}), agent.Options{})
	m := &frame.AppMessage{RequestID: "r", InstanceID: "i", AppID: "a", Action: "cards", ResponseSchema: json.RawMessage(schemas["flashcards"])}
	for b.Loop() {
		if _, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, m, func(string) {}); ferr != nil {
			b.Fatal(ferr)
		}
	}
}

// TestBridgeEnvelopeIsDetect: the envelope the Bridge hands a backend
// (Completion.Envelope, which the offline agent reads instead of parsing
// User again) is what Detect reads from User, so the answer is the same
// either way; a host key past the envelope's length gives none, and the
// agent reads User as before.
func TestBridgeEnvelopeIsDetect(t *testing.T) {
	cases := []struct {
		app                    string
		payload, state, schema string
	}{
		{"todo", `{"text":"a short note"}`, "", ""},
		{"todo", `{"html":"<b>&amp;</b>","Authorization":"Bearer x","n":1.50}`, `[{"cookie":"c"},"s"]`, ""},
		{"todo", `{ "spaced" : "\u00e9\u2028" }`, `{"x-api-key":{"deep":1}}`, schemas["flashcards"]},
		{"todo", "", "", schemas["enum and const"]},
		{strings.Repeat("k", 129), `{"a":1}`, "", ""},
	}
	for _, c := range cases {
		m := &frame.AppMessage{RequestID: "r", InstanceID: "i", AppID: "claimed", Action: "summarize"}
		if c.payload != "" {
			m.Payload = json.RawMessage(c.payload)
		}
		if c.state != "" {
			m.State = json.RawMessage(c.state)
		}
		if c.schema != "" {
			m.ResponseSchema = json.RawMessage(c.schema)
		}
		var got agent.Completion
		br := agent.NewBridge(agent.BackendFunc(func(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
			got = req
			return offline.New(offline.Options{}).Complete(ctx, req, onText)
		}), agent.Options{})
		if _, ferr := br.Ask(context.Background(), agent.Caller{App: c.app, Instance: "k"}, m, nil); ferr != nil {
			t.Fatalf("%+v: %+v", c, ferr)
		}
		want, ok := agent.Detect(got.User)
		switch {
		case !ok && got.Envelope != nil:
			t.Fatalf("%+v: an envelope Detect refuses was handed over: %+v", c, got.Envelope)
		case !ok:
			continue
		case got.Envelope == nil:
			t.Fatalf("%+v: no envelope handed over", c)
		}
		g, w := *got.Envelope, *want
		if g.AppID != w.AppID || g.InstanceID != w.InstanceID || g.RequestID != w.RequestID || g.Action != w.Action ||
			!bytes.Equal(g.Payload, w.Payload) || !bytes.Equal(g.State, w.State) || !bytes.Equal(g.ResponseSchema, w.ResponseSchema) {
			t.Errorf("handed over %+v\nDetect reads %+v", g, w)
		}
		withEnv, err1 := offline.Answer(got)
		got.Envelope = nil
		withoutEnv, err2 := offline.Answer(got)
		if withEnv != withoutEnv || err1 != nil || err2 != nil {
			t.Errorf("%+v: answer with the envelope %q (%v), by Detect %q (%v)", c, withEnv, err1, withoutEnv, err2)
		}
	}
}

// TestMessageAnswerIsTheMapsJSON: without a schema the answer is
// {"message": …} written as encoding/json writes that map without HTML
// escaping, whatever the action holds.
func TestMessageAnswerIsTheMapsJSON(t *testing.T) {
	for _, action := range []string{"summarize", `say "hi" <b>&amp;</b>`, "ctl\x01 é 😀 \u2028"} {
		req := completion(t, "r", `{"a":1}`, "")
		env, ok := agent.Detect(req.User)
		if !ok {
			t.Fatal("no envelope")
		}
		env.Action = action
		req.Envelope = env
		got, err := offline.Answer(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]string{"message": "Mock agent reply (offline, no model) to " + strconv.Quote(action) + "."})
		if want := strings.TrimSuffix(buf.String(), "\n"); got != want {
			t.Errorf("%q: answered %s, want %s", action, got, want)
		}
	}
}
