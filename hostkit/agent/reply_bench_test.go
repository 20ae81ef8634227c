package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

const benchObject = `{"message":"Here are your cards.","cards":[{"front":"la casa","back":"the house"},{"front":"el perro","back":"the dog"},{"front":"el gato","back":"the cat"}]}`

const benchSchema = `{"type":"object","required":["message","cards"],"properties":{"message":{"type":"string"},
	"cards":{"type":"array","minItems":1,"items":{"type":"object","required":["front","back"],"properties":{"front":{"type":"string"},"back":{"type":"string"}}}}}}`

// BenchmarkParseReply reports each stage of the graduated parser against the
// baseline of a plain json.Unmarshal of the same object, in the same run:
//
//	go test -run '^$' -bench ParseReply -benchmem ./hostkit/agent/
func BenchmarkParseReply(b *testing.B) {
	prose := strings.Repeat("Let me think about this carefully. ", 20)
	inputs := []struct {
		name, text, schema string
	}{
		{"raw", benchObject, ""},
		{"raw+schema", benchObject, benchSchema},
		{"fenced", "Sure!\n```json\n" + benchObject + "\n```\n", ""},
		{"embedded", prose + benchObject + " Hope that helps!", ""},
		{"embedded+schema", prose + benchObject + " Hope that helps!", benchSchema},
		{"prose (fails)", prose, ""},
	}
	b.Run("baseline json.Unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(benchObject)))
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal([]byte(benchObject), &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			b.SetBytes(int64(len(in.text)))
			for b.Loop() {
				agent.ParseReply(in.text, json.RawMessage(in.schema))
			}
		})
	}
}

// FuzzParseReply: whatever the agent says, the parser never panics, answers
// only with a JSON object, and keeps rawExcerpt within its limit.
func FuzzParseReply(f *testing.F) {
	for _, s := range []string{benchObject, "```json\n{\"a\":1}\n```", `x {"a":"}"} y`, "null", "[1]", "{{{", `{"a":"\"}`, "😀 {}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		data, err := agent.ParseReply(text, nil)
		if err != nil {
			re, ok := err.(*agent.ReplyError)
			if !ok {
				t.Fatalf("error %T", err)
			}
			if utf8.RuneCountInString(re.RawExcerpt) > frame.MaxRawExcerpt {
				t.Fatalf("excerpt too long")
			}
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
			t.Fatalf("data %q is not an object", data)
		}
	})
}

// FuzzStripCredentials: no key in frame.StripHeaders survives at any depth,
// and the output stays valid JSON.
func FuzzStripCredentials(f *testing.F) {
	for _, s := range []string{`{"Authorization":"x","a":[{"cookie":1}]}`, `[{"X-API-KEY":{"set-cookie":2}}]`, `"s"`, `{"\u0061uthorization":1}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) {
			return
		}
		out, err := agent.StripCredentials(json.RawMessage(raw))
		if err != nil {
			return
		}
		var v any
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("output %q is not JSON: %v", out, err)
		}
		var walk func(any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if frame.IsStripHeader(k) {
						t.Fatalf("%q survived in %s", k, out)
					}
					walk(e)
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(v)
	})
}

// BenchmarkValidate is one check of a typical reply against its schema
// (compiled once, as the cache keeps it), without the reply's parsing:
//
//	go test -run '^$' -bench Validate -benchmem ./hostkit/agent/
func BenchmarkValidate(b *testing.B) {
	sch, err := agent.CompileSchema(json.RawMessage(benchSchema))
	if err != nil {
		b.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(benchObject))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := sch.Validate(agent.NewMeter(context.Background()), v); err != nil {
			b.Fatal(err)
		}
	}
}
