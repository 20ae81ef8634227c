package runtimejs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/internal/vectors"
)

// verdict is what both languages must agree on: everything a verdict holds,
// each violation's path, rule and message (sorted: their order is the
// walker's) and the whole answer frame, the message it carries included.
type verdict struct {
	Verdict    string          `json:"verdict"`
	Type       string          `json:"type,omitempty"`
	Code       string          `json:"code,omitempty"`
	RequestID  *string         `json:"requestId,omitempty"`
	Rules      []string        `json:"rules,omitempty"`
	AnswerType *string         `json:"answerType,omitempty"`
	Errors     []string        `json:"errors,omitempty"` // "path rule message", sorted
	Answer     json.RawMessage `json:"answer,omitempty"`
}

func goVerdict(raw []byte) verdict {
	f, err := frame.Parse(raw)
	if err == nil {
		if f != nil {
			return verdict{Verdict: "accept", Type: f.FrameType()}
		}
		var h struct{ Type string }
		json.Unmarshal(raw, &h)
		return verdict{Verdict: "ignore", Type: h.Type}
	}
	var re *frame.RejectError
	if !errors.As(err, &re) {
		return verdict{Verdict: "error: " + err.Error()}
	}
	v := verdict{Verdict: "reject", Code: re.Code, Rules: []string{}, Errors: []string{}}
	if re.HasRequestID {
		v.RequestID = &re.RequestID
	}
	seen := map[string]bool{}
	for _, x := range re.Violations {
		if !seen[x.Rule] {
			seen[x.Rule] = true
			v.Rules = append(v.Rules, x.Rule)
		}
		v.Errors = append(v.Errors, x.Path+" "+x.Rule+" "+x.Message)
	}
	sort.Strings(v.Rules)
	sort.Strings(v.Errors)
	if a := re.Answer(); a != nil {
		t := a.FrameType()
		v.AnswerType = &t
		b, err := frame.Marshal(a)
		if err != nil {
			return verdict{Verdict: "error: " + err.Error()}
		}
		v.Answer = canonical(b)
	}
	return v
}

// canonical is a JSON text with its object keys sorted, so two encoders'
// member order does not matter.
func canonical(b []byte) json.RawMessage {
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return json.RawMessage(`"not JSON"`)
	}
	out, _ := json.Marshal(x) // encoding/json sorts map keys
	return out
}

// jsVerdicts runs checkFrame under node on every text.
const jsVerdicts = `import { readFileSync } from "node:fs";
import { checkFrame } from %q;
const out = JSON.parse(readFileSync(process.argv[2], "utf8")).map((text) => {
  const v = checkFrame(text);
  if (v.verdict != "reject") return { verdict: v.verdict, type: v.type };
  // Go's sort order: bytes of UTF-8, which for these strings is code point order.
  const byCodePoint = (a, b) => { const x = [...a].map((c) => c.codePointAt(0)), y = [...b].map((c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] != y[i]) return x[i] - y[i];
    return x.length - y.length; };
  return { verdict: v.verdict, code: v.code, requestId: v.requestId ?? undefined,
    rules: [...new Set(v.errors.map((e) => e.rule))].sort(), answerType: v.answer?.type,
    errors: v.errors.map((e) => e.path + " " + e.rule + " " + e.message).sort(byCodePoint), answer: v.answer ?? undefined };
});
process.stdout.write(JSON.stringify(out));
`

var (
	oddValues = []any{"", "x", strings.Repeat("é", 129), strings.Repeat("🦊", 65), strings.Repeat("a", 4097),
		json.Number("-1"), json.Number("0"), json.Number("1.5"), json.Number("1e3"), json.Number("100001"),
		json.Number("2"), true, false, nil, map[string]any{}, []any{}, map[string]any{"a": json.Number("1")},
		[]any{"x", json.Number("1")}, "GET", "POST", "dark", "exec", "kvSet", "import", "opened", "base64"}
	oddKeys = []string{"extra", "URL", "Url", "requestid", "RequestId", "Authorization", "cookie", "X-Api-Key",
		"accept", "Accept", "body", "headers", "data", "value", "error", "text", "streaming", "ok", "seq", "v", "type"}
	oddTypes = []any{"snug:future-thing", "future", "snug:net-request", "snug:open-url-request", "snug:db-request",
		"snug:app-response", "snug:host-ready", "snug:net-response", "snug:host-event", json.Number("1"), nil}
	oddURLs = []any{"https://example.com/", "http://example.com/", "https://user@example.com/", "https://0x7f.1/",
		"https://[::1]:8080/x", "https://example.com/a b", "https://example.com:70000/", "https://example.com/%zz",
		"https://exämple.com/", "https:///x", "javascript:alert(1)", "https://1.2.3.4./", "https://a.b/#x#y"}
)

// mutate changes one random place of doc (a decoded JSON object) and
// returns it.
func mutate(rng *rand.Rand, doc any) any {
	type slot struct {
		obj map[string]any
		arr []any
		key string
		i   int
	}
	var slots []slot
	var objs []map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			objs = append(objs, x)
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys) // map order is random; the seed is not
			for _, k := range keys {
				slots = append(slots, slot{obj: x, key: k})
				walk(x[k])
			}
		case []any:
			for i, e := range x {
				slots = append(slots, slot{arr: x, i: i})
				walk(e)
			}
		}
	}
	walk(doc)
	set := func(s slot, v any) {
		if s.obj != nil {
			s.obj[s.key] = v
		} else {
			s.arr[s.i] = v
		}
	}
	switch op := rng.IntN(7); {
	case op == 0 && len(slots) > 0: // delete a key
		s := slots[rng.IntN(len(slots))]
		if s.obj != nil {
			delete(s.obj, s.key)
		}
	case op == 1 && len(slots) > 0: // another value
		set(slots[rng.IntN(len(slots))], oddValues[rng.IntN(len(oddValues))])
	case op == 2 && len(objs) > 0: // another key
		objs[rng.IntN(len(objs))][oddKeys[rng.IntN(len(oddKeys))]] = oddValues[rng.IntN(len(oddValues))]
	case op == 3 && len(slots) > 0: // a key in other case
		s := slots[rng.IntN(len(slots))]
		if s.obj != nil {
			v := s.obj[s.key]
			delete(s.obj, s.key)
			s.obj[strings.ToUpper(s.key[:1])+s.key[1:]] = v
		}
	case op == 4: // another type
		if m, ok := doc.(map[string]any); ok {
			m["type"] = oddTypes[rng.IntN(len(oddTypes))]
		}
	case op == 5: // another URL
		if m, ok := doc.(map[string]any); ok {
			m["url"] = oddURLs[rng.IntN(len(oddURLs))]
		}
	default: // a credential or duplicate-in-case header
		if m, ok := doc.(map[string]any); ok {
			h, _ := m["headers"].(map[string]any)
			if h == nil {
				h = map[string]any{}
				m["headers"] = h
			}
			h[oddKeys[5+rng.IntN(5)]] = "v"
		}
	}
	return doc
}

// jsVerdictsOf runs texts through the generated JS checkFrame under node
// (one process, within timeout) and returns a verdict per text, answers in
// canonical form.
func jsVerdictsOf(t *testing.T, node string, texts []string, timeout time.Duration) []verdict {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "texts.json")
	b, _ := json.Marshal(texts)
	if err := os.WriteFile(in, b, 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs("dist/frames.mjs")
	script := filepath.Join(dir, "verdicts.mjs")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(jsVerdicts, "file://"+filepath.ToSlash(abs))), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, script, in)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	var js []verdict
	if err := json.Unmarshal(out, &js); err != nil || len(js) != len(texts) {
		t.Fatalf("node gave %d verdicts for %d texts (%v)", len(js), len(texts), err)
	}
	for i := range js {
		if js[i].Answer != nil {
			js[i].Answer = canonical(js[i].Answer)
		}
	}
	return js
}

// TestDifferentialGoJS runs every vector and seeded random mutations of
// them through frame.Parse and through the generated JS checkFrame
// under node: verdict, type, code, recovered requestId, the set of rule ids
// and the answer's type must agree on every text.
func TestDifferentialGoJS(t *testing.T) {
	node := testenv.Node(t)
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 11))
	var texts []string
	for _, v := range vs {
		text, err := v.Text()
		if err != nil {
			t.Fatal(err)
		}
		if len(text) > 64<<10 {
			continue // the size-class vectors run in vectors.test.mjs
		}
		texts = append(texts, string(text))
		for i := 0; i < 24; i++ {
			d := json.NewDecoder(bytes.NewReader(text))
			d.UseNumber()
			var doc any
			if d.Decode(&doc) != nil {
				break // a raw vector that is not JSON
			}
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(mutate(rng, doc)); err != nil {
				t.Fatal(err)
			}
			texts = append(texts, strings.TrimSpace(b.String()))
		}
	}
	js := jsVerdictsOf(t, node, texts, time.Minute)
	kinds := map[string]int{}
	bad := 0
	for i, text := range texts {
		g := goVerdict([]byte(text))
		kinds[g.Verdict]++
		gj, _ := json.Marshal(g)
		jj, _ := json.Marshal(js[i])
		if !bytes.Equal(gj, jj) {
			bad++
			if bad <= 15 {
				short := text
				if len(short) > 300 {
					short = short[:300] + "…"
				}
				t.Errorf("Go %s\nJS %s\n%s", gj, jj, short)
			}
		}
	}
	t.Logf("%d texts (%d vectors and their mutations): %v; %d disagreements", len(texts), len(vs), kinds, bad)
	if bad > 0 {
		t.Errorf("%d of %d texts disagree", bad, len(texts))
	}
}
