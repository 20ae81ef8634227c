package agent_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
)

func TestParseReplyGraduated(t *testing.T) {
	cases := []struct {
		name, text, want string
	}{
		{"raw", `{"message":"hi","n":1}`, `{"message":"hi","n":1}`},
		{"raw with whitespace", "\n  {\"a\": [1, 2]}\n", `{"a":[1,2]}`},
		{"fenced json", "Here you go:\n```json\n{\"a\": 1}\n```\nEnjoy.", `{"a":1}`},
		{"fenced without info", "```\n{\"a\": 2}\n```", `{"a":2}`},
		{"fenced on one line", "```{\"a\": 3}```", `{"a":3}`},
		{"unclosed fence", "```json\n{\"a\": 4}", `{"a":4}`},
		{"second fence parses", "```\nnot json\n```\nthen\n```json\n{\"a\": 5}\n```", `{"a":5}`},
		{"fence holding an array is skipped", "```json\n[1]\n```\nso {\"a\": 6}", `{"a":6}`},
		{"embedded in prose", `Sure! The answer is {"a": 7, "b": {"c": "}"}} as requested.`, `{"a":7,"b":{"c":"}"}}`},
		{"braces in strings", `x {"s":"{{{\"}"} y`, `{"s":"{{{\"}"}`},
		{"first balanced span fails, inner parses", `{ note: {"a": 8} }`, `{"a":8}`},
		{"unbalanced start then object", `{ oops { "a": 9 }`, `{"a":9}`},
		{"object naming a key twice is skipped", `x {"a":1,"a":2} y {"b":1}`, `{"b":1}`},
	}
	for _, c := range cases {
		got, err := agent.ParseReply(c.text, nil)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestParseReplyRejects(t *testing.T) {
	cases := map[string]string{
		"null":          "null",
		"array":         `[{"a":1}]`,
		"string":        `"{\"a\":1}"`,
		"number":        "42",
		"boolean":       "true",
		"prose":         "I'm sorry, I can't help with that.",
		"empty":         "",
		"broken object": `{"a": 1,}`,
		"fenced array":  "Results:\n```json\n[{\"a\": 1}, {\"a\": 2}]\n```",
		"duplicate key": `{"a":1,"a":2}`,
		"nested dup":    `{"a":{"b":1,"b":2}}`,
	}
	for name, text := range cases {
		_, err := agent.ParseReply(text, nil)
		var re *agent.ReplyError
		if !errors.As(err, &re) {
			t.Errorf("%s: err = %v, want *ReplyError", name, err)
			continue
		}
		if re.RawExcerpt != text {
			t.Errorf("%s: rawExcerpt %q, want %q", name, re.RawExcerpt, text)
		}
	}
	_, err := agent.ParseReply("[1,2]", nil)
	if err == nil || !strings.Contains(err.Error(), "array") {
		t.Errorf("array reply: %v, want a reason naming the array", err)
	}
}

func TestParseReplyExcerptLimit(t *testing.T) {
	// Emoji are one code point each (and two UTF-16 units): the limit counts code points.
	text := strings.Repeat("😀", frame.MaxRawExcerpt+50) + "\xff"
	_, err := agent.ParseReply(text, nil)
	var re *agent.ReplyError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v", err)
	}
	if n := utf8.RuneCountInString(re.RawExcerpt); n != frame.MaxRawExcerpt {
		t.Errorf("excerpt has %d code points, want %d", n, frame.MaxRawExcerpt)
	}
	if !utf8.ValidString(re.RawExcerpt) {
		t.Errorf("excerpt is not valid UTF-8")
	}
	if got := agent.Excerpt("ab\xffc"); got != "ab\uFFFDc" {
		t.Errorf("Excerpt(invalid) = %q", got)
	}
}

const todoSchema = `{"type":"object","required":["title","done"],"properties":{"title":{"type":"string","minLength":1},"done":{"type":"boolean"}},"additionalProperties":false}`

func TestParseReplySchema(t *testing.T) {
	got, err := agent.ParseReply(`{"title":"milk","done":false}`, json.RawMessage(todoSchema))
	if err != nil || string(got) != `{"title":"milk","done":false}` {
		t.Fatalf("valid reply: %s, %v", got, err)
	}
	// An example object in the prose violates the schema; the real answer follows.
	got, err = agent.ParseReply("For example {\"title\":\"\"} — here it is: ```json\n{\"title\":\"eggs\",\"done\":true}\n```", json.RawMessage(todoSchema))
	if err != nil || string(got) != `{"title":"eggs","done":true}` {
		t.Fatalf("second candidate: %s, %v", got, err)
	}
	for name, text := range map[string]string{
		"wrong type":      `{"title":"milk","done":"no"}`,
		"missing":         `{"title":"milk"}`,
		"extra member":    `{"title":"milk","done":true,"x":1}`,
		"too short":       `Answer: {"title":"","done":true}`,
		"fenced mismatch": "```json\n{\"done\":1}\n```",
	} {
		_, err := agent.ParseReply(text, json.RawMessage(todoSchema))
		var re *agent.ReplyError
		if !errors.As(err, &re) {
			t.Errorf("%s: err = %v, want *ReplyError", name, err)
			continue
		}
		if !strings.Contains(re.Reason, "responseSchema") {
			t.Errorf("%s: reason %q does not name the schema", name, re.Reason)
		}
	}
}

// TestSchemaCannotReachOutside: a responseSchema comes from the app; its
// $ref must not make the host read a file or fetch a URL.
func TestSchemaCannotReachOutside(t *testing.T) {
	for _, schema := range []string{
		`{"$ref":"file:///etc/passwd"}`,
		`{"$ref":"http://127.0.0.1:1/x.json"}`,
		`{"$id":"https://evil.example/","$ref":"other.json"}`,
		`{"$schema":"file:///etc/hostname","type":"object"}`,
		`{"type":"object","properties":{"a":{"$ref":"../../etc/passwd"}}}`,
		`{"type":7}`,
		`not json`,
	} {
		_, err := agent.ParseReply(`{"a":1}`, json.RawMessage(schema))
		var se *agent.SchemaError
		if !errors.As(err, &se) {
			t.Errorf("schema %s: err = %v, want *SchemaError", schema, err)
		}
	}
	// Local references work.
	local := `{"$defs":{"t":{"type":"string"}},"type":"object","properties":{"a":{"$ref":"#/$defs/t"}}}`
	if _, err := agent.ParseReply(`{"a":"x"}`, json.RawMessage(local)); err != nil {
		t.Errorf("local $ref: %v", err)
	}
	if _, err := agent.ParseReply(`{"a":1}`, json.RawMessage(local)); err == nil {
		t.Errorf("local $ref was not enforced")
	}
}

func TestParseReplyManyBraces(t *testing.T) {
	// A reply full of unmatched braces stays linear-ish and fails cleanly.
	text := strings.Repeat("{", 200_000)
	if _, err := agent.ParseReply(text, nil); err == nil {
		t.Fatal("parsed an object out of braces")
	}
}
