package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

func runCheck(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestCheckReply(t *testing.T) {
	code, out, _ := runCheck(t, "Sure!\n```json\n{\"message\": \"hi\", \"n\": [1, 2]}\n```\n", "check", "reply", "-")
	if code != 0 || out != `{"ok":true,"data":{"message":"hi","n":[1,2]}}`+"\n" {
		t.Fatalf("fenced: exit %d, %q", code, out)
	}
	// No argument reads stdin too.
	code, out, _ = runCheck(t, `Here: {"a":{"b":"}"}} done`, "check", "reply")
	if code != 0 || out != `{"ok":true,"data":{"a":{"b":"}"}}}`+"\n" {
		t.Fatalf("embedded: exit %d, %q", code, out)
	}

	prose := "I'm sorry <b>Dave</b>, " + strings.Repeat("é", 300)
	code, out, errOut := runCheck(t, prose, "check", "reply", "-")
	if code != 1 {
		t.Fatalf("prose: exit %d", code)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("prose: %q: %v", out, err)
	}
	if len(got) != 3 || got["ok"] != false || got["code"] != frame.CodeParseFailed {
		t.Fatalf("prose: %q", out)
	}
	ex, _ := got["rawExcerpt"].(string)
	if utf8.RuneCountInString(ex) != frame.MaxRawExcerpt || !strings.HasPrefix(prose, ex) {
		t.Fatalf("prose: rawExcerpt %q", ex)
	}
	if !strings.Contains(out, "<b>") {
		t.Errorf("output HTML-escaped: %q", out)
	}
	if !strings.Contains(errOut, "no JSON object") {
		t.Errorf("stderr %q does not say why", errOut)
	}

	code, out, _ = runCheck(t, "[1,2]", "check", "reply")
	if code != 1 || out != `{"ok":false,"code":"PARSE_FAILED","rawExcerpt":"[1,2]"}`+"\n" {
		t.Fatalf("array: exit %d %q", code, out)
	}
}

func TestCheckReplyFileAndSchema(t *testing.T) {
	dir := t.TempDir()
	reply := filepath.Join(dir, "reply.txt")
	schema := filepath.Join(dir, "s.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(reply, []byte(`{"title":"milk"}`), 0o644)
	os.WriteFile(schema, []byte(`{"type":"object","required":["done"]}`), 0o644)
	os.WriteFile(bad, []byte(`{"$ref":"file:///etc/passwd"}`), 0o644)

	if code, out, _ := runCheck(t, "", "check", "reply", reply); code != 0 || !strings.Contains(out, `"ok":true`) {
		t.Fatalf("file: exit %d %q", code, out)
	}
	code, out, errOut := runCheck(t, "", "check", "reply", "--schema", schema, reply)
	if code != 1 || !strings.Contains(out, `"ok":false`) || !strings.Contains(errOut, "responseSchema") {
		t.Fatalf("schema violation: exit %d %q %q", code, out, errOut)
	}
	if code, _, errOut := runCheck(t, "", "check", "reply", "--schema", bad, reply); code != 2 || !strings.Contains(errOut, "bad.json") {
		t.Fatalf("outside $ref: exit %d %q", code, errOut)
	}
	if code, _, errOut := runCheck(t, "", "check", "reply", filepath.Join(dir, "missing.txt")); code != 2 || !strings.Contains(errOut, "missing.txt") {
		t.Fatalf("missing file: exit %d %q", code, errOut)
	}
	if code, _, _ := runCheck(t, "", "check", "reply", "a", "b"); code != 2 {
		t.Fatalf("two args: exit %d", code)
	}
}

func TestCheckEnvelope(t *testing.T) {
	msg := frame.EnvelopeTag + "\n" + `{"snug":1,"appId":"todo","instanceId":"i1","requestId":"r1","action":"add","payload":{"text":"milk"}}`
	code, out, _ := runCheck(t, msg, "check", "envelope", "-")
	if code != 0 {
		t.Fatalf("exit %d %q", code, out)
	}
	want := `{"app":true,"envelope":{"snug":1,"appId":"todo","instanceId":"i1","requestId":"r1","action":"add","payload":{"text":"milk"}}}` + "\n"
	if out != want {
		t.Fatalf("got  %s\nwant %s", out, want)
	}
	for name, text := range map[string]string{
		"quoted":             "the app said " + msg,
		"snug 2":             strings.Replace(msg, `"snug":1`, `"snug":2`, 1),
		"no mark":            strings.Replace(msg, `"snug":1,`, ``, 1),
		"prose":              "hello there",
		"snug \"1\"":         strings.Replace(msg, `"snug":1`, `"snug":"1"`, 1),
		"snug twice, last 1": strings.Replace(msg, `"snug":1`, `"snug":2,"snug":1`, 1),
		"leading space":      " " + msg,
	} {
		code, out, _ := runCheck(t, text, "check", "envelope")
		if code != 1 || out != `{"app":false}`+"\n" {
			t.Errorf("%s: exit %d %q", name, code, out)
		}
	}
	// The server applies the C1 strip to what it read (snug 1.0 is snug 1).
	withCred := frame.EnvelopeTag + "\n" + `{"snug":1.0,"appId":"todo","instanceId":"i1","requestId":"r1","action":"add","payload":{"text":"milk","Cookie":"c","deep":[{"X-Api-Key":"k"}]}}`
	want = `{"app":true,"envelope":{"snug":1,"appId":"todo","instanceId":"i1","requestId":"r1","action":"add","payload":{"text":"milk","deep":[{}]}}}` + "\n"
	if code, out, _ := runCheck(t, withCred, "check", "envelope"); code != 0 || out != want {
		t.Errorf("credentials: exit %d\ngot  %s\nwant %s", code, out, want)
	}
}

func TestCheckReplyDuplicateKey(t *testing.T) {
	code, out, errOut := runCheck(t, `{"a":1,"a":2}`, "check", "reply")
	if code != 1 || out != `{"ok":false,"code":"PARSE_FAILED","rawExcerpt":"{\"a\":1,\"a\":2}"}`+"\n" || !strings.Contains(errOut, "twice") {
		t.Errorf("duplicate key: exit %d %q %q", code, out, errOut)
	}
	if code, out, _ := runCheck(t, `x {"a":1,"a":2} then {"b":1}`, "check", "reply"); code != 0 || out != `{"ok":true,"data":{"b":1}}`+"\n" {
		t.Errorf("duplicate key then an object: exit %d %q", code, out)
	}
}

func TestCheckReplyHelp(t *testing.T) {
	for _, verb := range []string{"reply", "envelope"} {
		code, out, _ := runCheck(t, "", "check", verb, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") || !strings.Contains(out, "snuggen check "+verb) {
			t.Errorf("%s --help: exit %d %q", verb, code, out)
		}
	}
}
