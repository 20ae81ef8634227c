package agent_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/snuggen/snuggen/hostkit/agent"
)

// stripCases are values an app sends, as JSON.stringify writes them and
// otherwise: the ones with nothing to strip or rewrite take the pass that
// returns them as they are; the others are rewritten by the decoder.
var stripCases = []string{
	`{"text":"a short note to summarize"}`,
	`{"items":[{"id":1,"done":false,"title":"Milk"},{"id":2,"done":true,"title":"Bread"}],"n":-0.5e+10,"z":null}`,
	`[]`, `{}`, `"s"`, `0`, `-1.25E-3`, `true`, `null`, `[[[{"a":[{}]}]]]`,
	`{"ünïcödé":"日本語 😀","k":"\u00e9"}`,
	`{"Authorization":"Bearer x","keep":1}`,
	`{"a":{"b":[{"COOKIE":"x"}]}}`,
	`{"\u0061uthorization":"x"}`,
	`{"a": 1}`, ` {"a":1}`, `{"a":1} `, "{\"a\":\"line\u2028sep\"}", "{\"a\":\"\xff\"}",
	`{"a":"<b>&amp;</b>"}`, `{"a":"tab\there"}`, `{"a":"q\"uote"}`, "{\"a\":\"\x01\"}",
	`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":tru}`, `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":1`, `[1`, `"open`, ``,
	`{"a":1}{"b":2}`, `{"a":1,"a":2}`, `{1:2}`,
}

// TestStripCredentialsIsTheDecoder: whatever StripCredentials returns as it
// is, the decoder's path returns byte for byte too, and a value with a
// credential-shaped key, whitespace or an escape is rewritten as before.
// Every case, and every case with one byte changed, is checked.
func TestStripCredentialsIsTheDecoder(t *testing.T) {
	check := func(raw string) {
		got, gotErr := agent.StripCredentials(json.RawMessage(raw))
		want, wantErr := agent.StripDecoded(json.RawMessage(raw))
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("StripCredentials(%q) = %q, %v; the decoder's path gives %q, %v", raw, got, gotErr, want, wantErr)
		}
	}
	subst := []byte(" \t\"\\{}[]:,0-.eE+a\x01\xff")
	for _, c := range stripCases {
		check(c)
		for i := range len(c) {
			for _, b := range subst {
				m := []byte(c)
				m[i] = b
				check(string(m))
			}
			check(c[:i])
		}
	}
	// The common case is returned as it is: no copy, no decoding.
	raw := json.RawMessage(stripCases[1])
	if got, _ := agent.StripCredentials(raw); &got[0] != &raw[0] {
		t.Errorf("a payload with nothing to strip was copied")
	}
}

// FuzzStripCredentialsIsTheDecoder is TestStripCredentialsIsTheDecoder on
// any input.
func FuzzStripCredentialsIsTheDecoder(f *testing.F) {
	for _, c := range stripCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, gotErr := agent.StripCredentials(json.RawMessage(raw))
		want, wantErr := agent.StripDecoded(json.RawMessage(raw))
		if (gotErr == nil) != (wantErr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("StripCredentials(%q) = %q, %v; the decoder's path gives %q, %v", raw, got, gotErr, want, wantErr)
		}
	})
}

func BenchmarkStripCredentials(b *testing.B) {
	raw := json.RawMessage(stripCases[1])
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			agent.StripCredentials(raw)
		}
	})
	b.Run("decoder", func(b *testing.B) {
		for b.Loop() {
			agent.StripDecoded(raw)
		}
	})
}
