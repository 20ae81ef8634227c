package runtimejs

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/internal/vectors"
)

// member is one object member of a JSON text: where its key starts, where
// the key ends (after its closing quote) and where its value ends.
type member struct{ keyStart, keyEnd, valEnd int }

// members lists every object member of a valid JSON text, at any depth.
func members(text string) []member {
	var out []member
	var stack []byte
	expectKey := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch c {
		case '{':
			stack = append(stack, '{')
			expectKey = true
		case '[':
			stack = append(stack, '[')
		case '}', ']':
			stack = stack[:len(stack)-1]
		case ',':
			expectKey = len(stack) > 0 && stack[len(stack)-1] == '{'
		case '"':
			j := i + 1
			for ; text[j] != '"'; j++ {
				if text[j] == '\\' {
					j++
				}
			}
			if expectKey {
				// value end: scan to the , or } at this depth
				k := j + 1
				depth := 0
				for ; k < len(text); k++ {
					d := text[k]
					if d == '"' {
						for k++; text[k] != '"'; k++ {
							if text[k] == '\\' {
								k++
							}
						}
						continue
					}
					if d == '{' || d == '[' {
						depth++
					} else if d == '}' || d == ']' {
						if depth == 0 {
							break
						}
						depth--
					} else if d == ',' && depth == 0 {
						break
					}
				}
				out = append(out, member{i, j + 1, k})
				expectKey = false
			}
			i = j
		}
	}
	return out
}

// TestDifferentialOneKey is issue 26 item 11's "frames that differ by one
// key", as text (TestDifferentialGoJS mutates decoded JSON, which cannot
// name a key twice): every member of every small vector named again, right
// after itself and right before, with its own value and with values of
// every JSON type, and its key written with a \u escape (alone and beside
// the plain key). Go's frame.Parse and JS's checkFrame must agree on the
// whole verdict, the answer frame included.
func TestDifferentialOneKey(t *testing.T) {
	node := testenv.Node(t)
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			texts = append(texts, s)
		}
	}
	for _, v := range vs {
		b, err := v.Text()
		if err != nil || len(b) > 2048 || !json.Valid(b) {
			continue
		}
		text := string(b)
		for _, m := range members(text) {
			key := text[m.keyStart:m.keyEnd]
			// the member again, right after itself, with its own value and odd values
			for _, val := range []string{text[m.keyEnd+1 : m.valEnd], `null`, `1`, `"x"`, `{}`, `[]`, `true`} {
				add(text[:m.valEnd] + "," + key + ":" + val + text[m.valEnd:])
				add(text[:m.keyStart] + key + ":" + val + "," + text[m.keyStart:])
			}
			// the key escaped
			k := key[1 : len(key)-1]
			if len(k) > 0 && k[0] < 0x80 && !strings.Contains(k, `\`) {
				esc := fmt.Sprintf(`"\u%04x%s"`, k[0], k[1:])
				add(text[:m.keyStart] + esc + text[m.keyEnd:])
				add(text[:m.valEnd] + "," + esc + ":" + text[m.keyEnd+1:m.valEnd] + text[m.valEnd:])
			}
		}
	}
	js := jsVerdictsOf(t, node, texts, 2*time.Minute)
	bad := 0
	for i, text := range texts {
		g := goVerdict([]byte(text))
		gj, _ := json.Marshal(g)
		jj, _ := json.Marshal(js[i])
		if !bytes.Equal(gj, jj) {
			bad++
			if bad <= 12 {
				short := text
				if len(short) > 300 {
					short = short[:300] + "…"
				}
				t.Errorf("Go %s\nJS %s\n%s", gj, jj, short)
			}
		}
	}
	t.Logf("%d texts; %d disagreements", len(texts), bad)
	if bad > 0 {
		t.Errorf("%d of %d texts disagree", bad, len(texts))
	}
}
