package offline_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/internal/testenv"
)

// bombs are schemas within the schema limits that ask the generator for a
// value of billions of parts: before the work bound each took minutes or
// gigabytes, or crashed.
var bombs = map[string]string{
	"minItems 1e8":     `{"type":"object","required":["xs"],"properties":{"xs":{"type":"array","minItems":100000000}}}`,
	"minLength 1e9":    `{"type":"object","required":["s"],"properties":{"s":{"type":"string","minLength":1000000000}}}`,
	"minProperties":    `{"type":"object","minProperties":1000000000}`,
	"two of itself":    `{"$defs":{"n":{"type":"object","required":["a","b"],"properties":{"a":{"$ref":"#/$defs/n"},"b":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
	"nested minItems":  `{"type":"object","required":["g"],"properties":{"g":{"type":"array","minItems":3000,"items":{"type":"array","minItems":3000,"items":{"type":"array","minItems":3000}}}}}`,
	"unique 1e6 items": `{"type":"object","required":["xs"],"properties":{"xs":{"type":"array","minItems":1000000,"uniqueItems":true,"items":{"type":"integer"}}}}`,
}

// TestGeneratorIsBounded: each bomb is answered quickly with a short
// explanation, which the bridge reports as PARSE_FAILED.
func TestGeneratorIsBounded(t *testing.T) {
	testenv.SkipUnderRace(t, "the generator's CPU time")
	br := agent.NewBridge(offline.New(offline.Options{}), agent.Options{})
	defer runtime.GC() // the bombs' garbage is not the next test's to collect
	for name, schema := range bombs {
		t.Run(name, func(t *testing.T) {
			m := &frame.AppMessage{RequestID: "r", InstanceID: "i", AppID: "a", Action: "bomb", ResponseSchema: json.RawMessage(schema)}
			done := make(chan *frame.Error, 1)
			start, cpu0 := time.Now(), testenv.CPUTime()
			go func() {
				_, ferr := br.Ask(context.Background(), agent.Caller{App: "a", Instance: "k-" + name}, m, nil)
				done <- ferr
			}()
			select {
			case ferr := <-done:
				el, cpu := time.Since(start), testenv.CPUTime()-cpu0
				if ferr == nil || ferr.Code != frame.CodeParseFailed {
					t.Fatalf("%+v, want PARSE_FAILED", ferr)
				}
				if ferr.RawExcerpt == nil || !strings.Contains(*ferr.RawExcerpt, "offline agent stopped") {
					t.Errorf("excerpt %v: want the offline agent's explanation", ferr.RawExcerpt)
				}
				if cpu > 2*time.Second {
					t.Errorf("answered after %s of CPU", cpu)
				}
				t.Logf("answered after %s, %s of CPU", el, cpu)
			case <-time.After(20 * time.Second):
				t.Fatal("still generating after 20 s")
			}
		})
	}
}

// TestGeneratorOddCounts: counts too large for an int (maxLength 1e300)
// neither crash the generator nor take long; the bridge reports what the
// validator makes of them.
func TestGeneratorOddCounts(t *testing.T) {
	testenv.SkipUnderRace(t, "the generator's CPU time")
	br := agent.NewBridge(offline.New(offline.Options{}), agent.Options{})
	for _, schema := range []string{
		`{"type":"object","required":["s"],"properties":{"s":{"type":"string","maxLength":1e300}}}`,
		`{"type":"object","required":["xs"],"properties":{"xs":{"type":"array","maxItems":1e300,"minItems":-5}}}`,
		`{"type":"object","maxProperties":1e300,"minProperties":2}`,
	} {
		m := &frame.AppMessage{RequestID: "r", InstanceID: "i", AppID: "a", Action: "odd", ResponseSchema: json.RawMessage(schema)}
		cpu0 := testenv.CPUTime()
		if _, ferr := br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, m, nil); ferr != nil && ferr.Code != frame.CodeParseFailed && ferr.Code != frame.CodeMalformed {
			t.Errorf("%s: %+v", schema, ferr)
		}
		if cpu := testenv.CPUTime() - cpu0; cpu > 2*time.Second {
			t.Errorf("%s: answered after %s of CPU", schema, cpu)
		}
	}
}

// TestGeneratorEndsWithTheRequest: generating stops when the request's
// context ends.
func TestGeneratorEndsWithTheRequest(t *testing.T) {
	testenv.SkipUnderRace(t, "the CPU time after the request ends")
	b := offline.New(offline.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req := completion(t, "r", "", bombs["two of itself"])
	time.AfterFunc(5*time.Millisecond, cancel)
	cpu0 := testenv.CPUTime()
	_, err := b.Complete(ctx, req, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if cpu := testenv.CPUTime() - cpu0; cpu > 200*time.Millisecond {
		t.Errorf("returned after %s of CPU", cpu)
	}
}
