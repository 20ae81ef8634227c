package frame

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/vectors"
)

// goSchemaVerdict is Parse's verdict on what JSON Schema can express: valid
// when it accepts or rejects only for a refinement (refinements run only on
// frames that passed every schema stage). comparable is false for the rules
// JSON Schema has no say in: the size class, duplicate keys, non-JSON text.
func goSchemaVerdict(raw []byte) (valid, comparable bool) {
	f, err := Parse(raw)
	if err == nil {
		return f != nil, f != nil
	}
	var re *RejectError
	if !errors.As(err, &re) {
		return false, false
	}
	for _, v := range re.Violations {
		switch {
		case v.Rule == RuleFrameSize || v.Rule == RuleFrameDuplicateKey || v.Rule == RuleFrameJSON || v.Rule == RuleFrameRequestID:
			return false, false
		case strings.HasPrefix(v.Rule, "net.") || strings.HasPrefix(v.Rule, "openurl."):
			return true, true
		}
	}
	return false, true
}

// TestDifferentialJSONSchema runs every vector and random mutations of them
// through Parse and through santhosh-tekuri/jsonschema/v5 compiled from
// schemas/: both must agree on every schema-expressible constraint.
func TestDifferentialJSONSchema(t *testing.T) {
	byType := compiledSchemas(t)
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(2, 7))
	compared, disagreements := 0, 0
	check := func(name string, raw []byte) {
		t.Helper()
		goValid, ok := goSchemaVerdict(raw)
		if !ok {
			return
		}
		sValid, known, err := schemaVerdict(byType, raw)
		if err != nil || !known {
			return
		}
		compared++
		if goValid != sValid {
			disagreements++
			if disagreements <= 20 {
				_, perr := Parse(raw)
				short := string(raw)
				if len(short) > 300 {
					short = short[:300] + "…"
				}
				t.Errorf("%s: generated valid=%v (%v), jsonschema valid=%v\n%s", name, goValid, perr, sValid, short)
			}
		}
	}
	for _, v := range vs {
		text, err := v.Text()
		if err != nil {
			t.Fatal(err)
		}
		if len(text) > 64<<10 {
			continue // the size-class vectors: JSON Schema has no say in them
		}
		check(v.Name, text)
		var doc any
		if json.Unmarshal(text, &doc) != nil {
			continue
		}
		if _, ok := doc.(map[string]any); !ok {
			continue
		}
		for i := 0; i < 30; i++ {
			m := mutate(rng, deepCopy(doc))
			raw, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			check(v.Name+" (mutated)", raw)
		}
	}
	if compared < 5000 {
		t.Errorf("compared only %d frames", compared)
	}
	t.Logf("compared %d frames, %d disagreements", compared, disagreements)
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

var mutantStrings = func() []any {
	var out []any
	for _, n := range []int{0, 1, 2, 7, 8, 9, 32, 33, 35, 36, 64, 65, 80, 81, 128, 129, 200, 201, 300, 301, 400, 401, 512, 513, 1000, 1001, 2048, 2049, 4096, 4097} {
		out = append(out, strings.Repeat("a", n), strings.Repeat("😀", n))
	}
	return append(out, "GET", "HEAD", "POST", "get", "exec", "kvSet", "kvGet", "import", "export", "light", "dark", "opened", "refused", "utf8", "base64", "sqlite3", "https://example.com/", "https://u@example.com/")
}()

var mutantNumbers = []any{-1, 0, 1, 2, 1.5, 99, 100, 599, 600, 999, 1000, 100000, 100001, 1e2}

var mutantValues = []any{nil, true, false, map[string]any{}, []any{}, []any{1}, map[string]any{"a": 1}}

// mutate changes one randomly chosen place of a decoded frame.
func mutate(rng *rand.Rand, doc any) any {
	type slot struct {
		parent any
		key    string
		index  int
	}
	var slots []slot
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				slots = append(slots, slot{parent: x, key: k})
				walk(c)
			}
			slots = append(slots, slot{parent: x, key: ""})
		case []any:
			for i, c := range x {
				slots = append(slots, slot{parent: x, index: i})
				walk(c)
			}
		}
	}
	walk(doc)
	if len(slots) == 0 {
		return doc
	}
	s := slots[rng.IntN(len(slots))]
	pick := func() any {
		switch rng.IntN(3) {
		case 0:
			return mutantStrings[rng.IntN(len(mutantStrings))]
		case 1:
			return mutantNumbers[rng.IntN(len(mutantNumbers))]
		}
		return mutantValues[rng.IntN(len(mutantValues))]
	}
	switch p := s.parent.(type) {
	case map[string]any:
		switch {
		case s.key == "":
			extra := []string{"extra", "URL", "Method", "appId", "requestId", "ok", "streaming", "text", "data", "error", "value", "sql", "key", "headers", "body", "status", "result", "seq", "tokens", "net"}
			p[extra[rng.IntN(len(extra))]] = pick()
		case rng.IntN(4) == 0:
			delete(p, s.key)
		case rng.IntN(6) == 0:
			v := p[s.key]
			delete(p, s.key)
			p[strings.ToUpper(s.key[:1])+s.key[1:]] = v
		default:
			p[s.key] = pick()
		}
	case []any:
		p[s.index] = pick()
	}
	return doc
}
