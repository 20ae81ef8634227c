package frame_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// TestParseEnvelope holds the generated envelope decoder to the envelope's
// schema: each refusal names its rule and path, numbers are read as
// JSON.parse reads them (the marker 1.0000000000000001 is the double 1, as a
// frame's v), and a payload past MAX_JSON_DEPTH is no JSON it reads.
func TestParseEnvelope(t *testing.T) {
	const good = `{"snug":1,"appId":"a","instanceId":"i","requestId":"r","action":"go","payload":{"q":[1,2]},"state":null,"x":1}`
	env, err := frame.ParseEnvelope([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if env.AppID != "a" || env.InstanceID != "i" || env.RequestID != "r" || env.Action != "go" || string(env.Payload) != `{"q":[1,2]}` || string(env.State) != "null" || env.ResponseSchema != nil {
		t.Fatalf("ParseEnvelope = %+v", env)
	}
	for _, one := range []string{"1.0", "1e0", "1.0000000000000001", "0.1e1"} {
		if _, err := frame.ParseEnvelope([]byte(strings.Replace(good, `"snug":1`, `"snug":`+one, 1))); err != nil {
			t.Errorf("snug %s: %v", one, err)
		}
	}
	deep := strings.Repeat("[", frame.MaxJSONDepth) + strings.Repeat("]", frame.MaxJSONDepth)
	for name, c := range map[string]struct{ text, rule, path string }{
		"not an object":      {`[1]`, frame.RuleFrameJSON, ""},
		"trailing text":      {good + "x", frame.RuleFrameJSON, ""},
		"deeper than limit":  {strings.Replace(good, `"state":null`, `"state":`+deep, 1), frame.RuleFrameJSON, ""},
		"key twice":          {strings.Replace(good, `"appId":"a"`, `"appId":"a","appId":"b"`, 1), frame.RuleFrameDuplicateKey, ""},
		"key twice nested":   {strings.Replace(good, `{"q"`, `{"k":1,"k":2,"q"`, 1), frame.RuleFrameDuplicateKey, ""},
		"marker twice":       {strings.Replace(good, `"snug":1`, `"snug":2,"snug":1`, 1), frame.RuleFrameDuplicateKey, ""},
		"marker missing":     {strings.Replace(good, `"snug":1,`, ``, 1), frame.RuleSchemaRequired, "/snug"},
		"marker 2":           {strings.Replace(good, `"snug":1`, `"snug":2`, 1), frame.RuleSchemaConst, "/snug"},
		"marker string":      {strings.Replace(good, `"snug":1`, `"snug":"1"`, 1), frame.RuleSchemaConst, "/snug"},
		"marker 1e400":       {strings.Replace(good, `"snug":1`, `"snug":1e400`, 1), frame.RuleSchemaConst, "/snug"},
		"requestId missing":  {strings.Replace(good, `"requestId":"r",`, ``, 1), frame.RuleSchemaRequired, "/requestId"},
		"action not string":  {strings.Replace(good, `"action":"go"`, `"action":7`, 1), frame.RuleSchemaType, "/action"},
		"payload an array":   {strings.Replace(good, `"payload":{"q":[1,2]}`, `"payload":[1]`, 1), frame.RuleSchemaType, "/payload"},
		"appId empty":        {strings.Replace(good, `"appId":"a"`, `"appId":""`, 1), frame.RuleSchemaMinLength, "/appId"},
		"appId 129 points":   {strings.Replace(good, `"appId":"a"`, `"appId":"`+strings.Repeat("é", frame.EnvelopeAppIDMaxLength+1)+`"`, 1), frame.RuleSchemaMaxLength, "/appId"},
		"APPID is not appId": {strings.Replace(good, `"appId":"a",`, `"APPID":"a",`, 1), frame.RuleSchemaRequired, "/appId"},
	} {
		_, err := frame.ParseEnvelope([]byte(c.text))
		var rej *frame.RejectError
		if !errors.As(err, &rej) {
			t.Errorf("%s: err = %v, want a *RejectError", name, err)
			continue
		}
		if rej.HasRequestID || rej.Type != "" || len(rej.Violations) != 1 || rej.Violations[0].Rule != c.rule || rej.Violations[0].Path != c.path || rej.Violations[0].Message == "" {
			t.Errorf("%s: %+v, want rule %s at %q", name, rej, c.rule, c.path)
		}
	}
}
