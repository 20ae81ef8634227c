package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/internal/testenv"
)

// allOfBomb is the schema of issue 11: n empty subschemas in one allOf, which
// compiled in time quadratic in n (6.2 s at 20,000).
func allOfBomb(n int) string {
	return `{"allOf":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`
}

// refChain is a schema of a few hundred bytes whose check of any value makes
// 2^depth evaluations: each level is anyOf two references to the level
// below, and the bottom level fails, so every path is tried.
func refChain(depth int) string {
	var defs []string
	defs = append(defs, `"l0":{"type":"string"}`)
	for i := 1; i <= depth; i++ {
		defs = append(defs, fmt.Sprintf(`"l%d":{"anyOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"$defs":{%s},"type":"object","properties":{"a":{"$ref":"#/$defs/l%d"}}}`, strings.Join(defs, ","), depth)
}

// lengthChain is a schema whose check of "s" measures the string's length
// 2^depth times: each level is allOf two references to the level below.
func lengthChain(depth int) string {
	defs := []string{`"l0":{"maxLength":100000000}`}
	for i := 1; i <= depth; i++ {
		defs = append(defs, fmt.Sprintf(`"l%d":{"allOf":[{"$ref":"#/$defs/l%d"},{"$ref":"#/$defs/l%d"}]}`, i, i-1, i-1))
	}
	return fmt.Sprintf(`{"$defs":{%s},"type":"object","properties":{"s":{"$ref":"#/$defs/l%d"}}}`, strings.Join(defs, ","), depth)
}

// within runs f and returns the CPU time the process spent meanwhile; it
// fails the test when f has not returned after d of the clock (f keeps
// running then: on the code before the bounds it runs for minutes).
func within(t *testing.T, d time.Duration, what string, f func()) time.Duration {
	t.Helper()
	testenv.SkipUnderRace(t, what)
	done := make(chan struct{})
	cpu0 := testenv.CPUTime()
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return testenv.CPUTime() - cpu0
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
		return 0
	}
}

// TestSchemaLimitsRefuseBeforeCompiling: schemas past the limits are refused
// with a message naming the limit, at once, without being compiled.
func TestSchemaLimitsRefuseBeforeCompiling(t *testing.T) {
	deep := strings.Repeat(`{"items":`, 5000) + `{}` + strings.Repeat(`}`, 5000)
	enum := `{"enum":[` + strings.TrimSuffix(strings.Repeat("1,", 30000), ",") + `]}`
	big := `{"description":"` + strings.Repeat("d", agent.MaxSchemaBytes) + `"}`
	for _, c := range []struct{ name, schema, want string }{
		{"allOf of 20,000", allOfBomb(20000), "more than"},
		{"allOf of 1,001", allOfBomb(agent.MaxSubschemas + 1), "more than 1000 subschemas"},
		{"nesting 5,000 deep", deep, "nests deeper than 64"},
		{"enum of 30,000", enum, "more than 20000 JSON values"},
		{"64 KiB of text", big, "bytes; the host accepts at most 65536"},
		{"long pattern", `{"properties":{"a":{"pattern":"` + strings.Repeat("a", 1001) + `"}}}`, "at most 1000"},
		{"expanding pattern", `{"properties":{"a":{"pattern":"(a{1000}){1000}"}}}`, "pattern"},
		{"expanding pattern 2", `{"properties":{"a":{"pattern":"` + strings.Repeat("[a-z]{1,100}", 8) + `"}}}`, "instructions"},
		{"expanding patternProperties", `{"patternProperties":{"` + strings.Repeat("x{999}", 3) + `":{}}}`, "instructions"},
		{"huge exponent", `{"properties":{"a":{"multipleOf":1e-999999}}}`, "exponent"},
		{"long number", `{"properties":{"a":{"maximum":` + strings.Repeat("9", 200) + `}}}`, "number"},
		{"dynamic ref", `{"$dynamicRef":"#x"}`, "dynamic references are refused"},
		{"anchor", `{"$defs":{"a":{"$anchor":"x"}},"$ref":"#x"}`, "anchors are refused"},
		{"nested $id", `{"properties":{"a":{"$id":"https://example.com/a","$ref":"#/$defs/b"}}}`, "$id is allowed only at the schema's root"},
		{"ref into enum", `{"enum":[{"pattern":"x"}],"properties":{"a":{"$ref":"#/enum/0"}}}`, "does not point at a subschema"},
		{"ref elsewhere", `{"$ref":"https://example.com/s.json"}`, "only references inside the schema"},
		{"regexProperties", `{"regexProperties":true}`, "regexProperties"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var err error
			el := within(t, 5*time.Second, c.name, func() { _, err = agent.CompileSchema(json.RawMessage(c.schema)) })
			var se *agent.SchemaError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want a *SchemaError containing %q", err, c.want)
			}
			if el > 300*time.Millisecond {
				t.Errorf("refused after %s of CPU", el)
			}
		})
	}
}

// TestSchemaAtTheLimitsCompilesQuickly: a schema just inside every limit
// compiles, and fast: the limits bound compile time, not only refuse.
func TestSchemaAtTheLimitsCompilesQuickly(t *testing.T) {
	var props []string
	for i := range 400 {
		props = append(props, fmt.Sprintf(`"p%d":{"type":"string","pattern":"^[a-z]{1,64}$"}`, i))
	}
	for name, schema := range map[string]string{
		"400 properties with patterns": `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`,
		"allOf at the subschema limit": allOfBomb(agent.MaxSubschemas - 1),
		"nesting at the depth limit":   strings.Repeat(`{"items":`, 31) + `{}` + strings.Repeat(`}`, 31),
		"reference chain":              refChain(40),
	} {
		var err error
		el := within(t, 10*time.Second, name, func() { _, err = agent.CompileSchema(json.RawMessage(schema)) })
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		t.Logf("%s (%d bytes): compiled in %s of CPU", name, len(schema), el)
		if el > time.Second {
			t.Errorf("%s: compiled in %s of CPU", name, el)
		}
	}
}

// TestValidationIsMetered: replies whose check against a schema would take
// minutes (references that double the work at each level, a pattern over a
// long string, numbers the validator makes exact rationals of, compared with
// an enum of such numbers, a string compiled as a regular expression) are answered PARSE_FAILED within the
// budget, through the bridge and a real agent server.
func TestValidationIsMetered(t *testing.T) {
	longPattern := strings.Repeat("[a-z]{1,64}", 6) + "$"
	huge := strings.TrimSuffix(strings.Repeat("1e999999,", 200), ",")
	regexes := `"` + strings.Repeat("(a|b)*", 100000) + `"`
	var bigs []string
	for i := range 9000 {
		bigs = append(bigs, fmt.Sprintf("%de99%d", i%9+1, i%10))
	}
	for _, c := range []struct {
		name, schema, reply, want string
	}{
		{"2^40 references", refChain(40), `{"a":1}`, "more work than the host allows"},
		{"pattern over 1 MiB", `{"type":"object","properties":{"message":{"type":"string","pattern":"` + longPattern + `"}}}`,
			`{"message":"` + strings.Repeat("a", 1<<20) + `!"}`, "more work than the host allows"},
		{"numbers of a million digits", `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"}}}}`,
			`{"xs":[` + huge + `]}`, "beyond what the host checks"},
		{"an enum of 9,000 numbers near 1e999", `{"type":"object","properties":{"xs":{"type":"array","items":{"enum":[` + strings.Join(bigs, ",") + `]}}}}`,
			`{"xs":[` + strings.TrimSuffix(strings.Repeat("1e-999,", 500), ",") + `]}`, "more work than the host allows"},
		{"regex format", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"rs":{"type":"array","items":{"format":"regex"}}}}`,
			`{"rs":[` + regexes + `,` + regexes + `,` + regexes + `]}`, "not valid"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fa := newFakeAgent(t, func(w http.ResponseWriter, r *http.Request, hit int) {
				wires[0].stream(w, chunked(c.reply, 64<<10), true)
			})
			br := agent.NewBridge(wires[0].backend(t, fa.srv.URL), agent.Options{})
			var ferr *frame.Error
			el := within(t, 20*time.Second, c.name, func() {
				_, ferr = br.Ask(context.Background(), agent.Caller{App: "todo", Instance: "k"}, appMessage("", "", c.schema), nil)
			})
			if ferr == nil || ferr.Code != frame.CodeParseFailed || !strings.Contains(ferr.Message, c.want) {
				t.Fatalf("%+v, want PARSE_FAILED containing %q", ferr, c.want)
			}
			t.Logf("answered after %s of CPU: %.160s", el, ferr.Message)
			if el > agent.MaxValidationTime+time.Second {
				t.Errorf("answered after %s of CPU", el)
			}
		})
	}
}

// TestDeepErrorsAreCharged: each error the validator makes holds its
// location in the reply, so a reply 3,000 levels deep with an error at each
// level made errors of 3,000 locations each, uncharged (1.9 s of CPU and
// hundreds of megabytes after the last charge). Each step is charged the
// reply's depth: the check ends at once, with the budget's error.
func TestDeepErrorsAreCharged(t *testing.T) {
	sch, err := agent.CompileSchema(json.RawMessage(`{"properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	const levels = 3000
	dec := json.NewDecoder(strings.NewReader(`{"a":` + strings.Repeat(`[1,`, levels) + `[]` + strings.Repeat(`]`, levels) + `}`))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	var verr error
	el := within(t, 20*time.Second, "validation", func() { verr = sch.Validate(agent.NewMeter(context.Background()), v) })
	if !errors.Is(verr, agent.ErrValidationBudget) {
		t.Fatalf("err = %.200v, want ErrValidationBudget", verr)
	}
	if el > 300*time.Millisecond {
		t.Errorf("ended after %s of CPU", el)
	}
}

// TestLengthsAreCharged: the budget's units count a string's length each
// time a schema measures it, so the bound does not rest on the clock alone:
// 1,024 checks of a 64 KiB string's length (a fifth of a second here) are
// past the 30 M units, on any machine.
func TestLengthsAreCharged(t *testing.T) {
	sch, err := agent.CompileSchema(json.RawMessage(lengthChain(10)))
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{"s": strings.Repeat("a", 64<<10)}
	if err := sch.Validate(agent.NewMeter(context.Background()), v); !errors.Is(err, agent.ErrValidationBudget) {
		t.Fatalf("err = %.200v, want ErrValidationBudget", err)
	}
}

// TestValidationEndsWithTheRequest: a metered check stops as soon as the
// request's context ends, not at the end of its budget. The request ends
// while the check runs, at a point counted in the check's own work (the
// meter's looks at the context, one per 64 units charged), not after a time:
// against a clock the budget could run out first on a fast machine, or the
// deadline pass before the check started on a loaded one.
func TestValidationEndsWithTheRequest(t *testing.T) {
	sch, err := agent.CompileSchema(json.RawMessage(refChain(40)))
	if err != nil {
		t.Fatal(err)
	}
	const looks = 100 // some 6,400 units: a fraction of MaxValidationCost
	ctx := endingAfter(looks)
	defer ctx.cancel()
	verr := sch.Validate(agent.NewMeter(ctx), map[string]any{"a": json.Number("1")})
	if !errors.Is(verr, context.Canceled) {
		t.Fatalf("err = %v, want the context's (the request ended after %d of the meter's looks at it)", verr, looks)
	}
	// The look that found it ended, and context.Cause's, and no more.
	if n := ctx.seen.Load(); n > looks+1 {
		t.Errorf("the context was asked %d times, want at most %d: the check went on after the request ended", n, looks+1)
	}
}

// endingAfter is a request context that ends the n-th time Err is asked.
func endingAfter(n int64) *countedCtx {
	ctx, cancel := context.WithCancel(context.Background())
	return &countedCtx{Context: ctx, cancel: cancel, n: n}
}

type countedCtx struct {
	context.Context
	cancel context.CancelFunc
	n      int64
	seen   atomic.Int64
}

func (c *countedCtx) Err() error {
	if c.seen.Add(1) == c.n {
		c.cancel()
	}
	return c.Context.Err()
}

// TestOrdinarySchemasStillValidate: the bounds change nothing for schemas as
// apps write them: formats, patterns, references, uniqueItems.
func TestOrdinarySchemasStillValidate(t *testing.T) {
	schema := `{"$defs":{"card":{"type":"object","required":["front","back"],"properties":{"front":{"type":"string","minLength":1},"back":{"type":"string"}}}},
		"type":"object","required":["cards","id","when","tags"],"properties":{
		"cards":{"type":"array","items":{"$ref":"#/$defs/card"},"minItems":1},
		"id":{"type":"string","pattern":"^[a-z]{3}-[0-9]{4}$"},
		"when":{"type":"string","format":"date-time"},
		"tags":{"type":"array","uniqueItems":true,"items":{"enum":["a","b","c"]}}}}`
	good := `{"cards":[{"front":"a","back":"b"}],"id":"abc-1234","when":"2026-01-02T03:04:05Z","tags":["a","b"]}`
	if _, err := agent.ParseReply(good, json.RawMessage(schema)); err != nil {
		t.Fatalf("valid reply refused: %v", err)
	}
	for _, bad := range []string{
		`{"cards":[],"id":"abc-1234","when":"x","tags":[]}`,
		`{"cards":[{"front":"a","back":"b"}],"id":"ABC-1234","when":"x","tags":[]}`,
		`{"cards":[{"front":"a","back":"b"}],"id":"abc-1234","when":"x","tags":["a","a"]}`,
		`{"cards":[{"front":"","back":"b"}],"id":"abc-1234","when":"x","tags":[]}`,
	} {
		_, err := agent.ParseReply(bad, json.RawMessage(schema))
		var re *agent.ReplyError
		if !errors.As(err, &re) || !strings.Contains(re.Reason, "does not match responseSchema") {
			t.Errorf("%s: err = %v", bad, err)
		} else if strings.Contains(re.Reason, "snug-meter") {
			t.Errorf("the meter's format leaks into the reason: %s", re.Reason)
		}
	}
	// A draft-07 schema asserts its formats; the reason names the format.
	d7 := `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"when":{"type":"string","format":"date-time"}}}`
	_, err := agent.ParseReply(`{"when":"not a date"}`, json.RawMessage(d7))
	var re *agent.ReplyError
	if !errors.As(err, &re) || !strings.Contains(re.Reason, `date-time`) || strings.Contains(re.Reason, "snug-meter") {
		t.Errorf("draft-07 format: %v", err)
	}
}

// TestLargeReplyFitsTheBudget: a reply of 400 records of 100 fields
// (about 700 KB) against a schema that names the 100 fields is checked, not
// refused: each member is charged the subschemas that may apply to it (one
// of properties), not all of its object's.
func TestLargeReplyFitsTheBudget(t *testing.T) {
	testenv.SkipUnderRace(t, "a check within MaxValidationTime")
	var props, fields []string
	for i := range 100 {
		props = append(props, fmt.Sprintf(`"f%d":{"type":"string","maxLength":40}`, i))
		fields = append(fields, fmt.Sprintf(`"f%d":"value %d"`, i, i))
	}
	schema := `{"type":"object","properties":{"rows":{"type":"array","items":{"type":"object","required":["f0"],"properties":{` + strings.Join(props, ",") + `}}}}}`
	row := "{" + strings.Join(fields, ",") + "}"
	reply := `{"rows":[` + strings.TrimSuffix(strings.Repeat(row+",", 400), ",") + `]}`
	if _, err := agent.ParseReply(reply, json.RawMessage(schema)); err != nil {
		t.Fatalf("a %d-byte reply: %v", len(reply), err)
	}
}

// TestViolationIsTheSameEveryTime: a reply that breaks its schema in
// several places is answered with one reason, path and why, the same every
// time: the first place in the reply (the library meets properties in map
// order).
func TestViolationIsTheSameEveryTime(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"array","items":{"enum":["x","y"]}},"d":{"type":"integer"}}}`)
	reply := `{"a":1,"b":2,"c":["x","z"],"d":"4"}`
	for range 30 {
		_, err := agent.ParseReply(reply, schema)
		var re *agent.ReplyError
		if !errors.As(err, &re) || re.Reason != "data does not match responseSchema: at /a: got number, want string" {
			t.Fatalf("err = %v, want the reason at /a", err)
		}
	}
}

// TestParseReplyWorstCaseIsBounded: a 4 MiB reply built so that every one
// of the 128 balanced candidates is a valid object of almost the whole text
// that is then refused (a key named twice at every level) would be decoded
// 128 times, half a gigabyte of JSON; the meter ends the search.
func TestParseReplyWorstCaseIsBounded(t *testing.T) {
	testenv.SkipUnderRace(t, "the CPU time of parsing the worst reply")
	const depth = 128
	text := "Here: " + strings.Repeat(`{"k":1,"k":2,"n":`, depth) + `"` + strings.Repeat("z", agent.DefaultMaxReplyBytes-depth*20) + `"` + strings.Repeat("}", depth)
	var err error
	cpu := within(t, 60*time.Second, "ParseReply", func() { _, err = agent.ParseReply(text, nil) })
	var re *agent.ReplyError
	if !errors.As(err, &re) {
		t.Fatalf("err = %v, want a *ReplyError", err)
	}
	t.Logf("%d-byte reply: %s of CPU: %.120s", len(text), cpu, re.Reason)
	if cpu > agent.MaxValidationTime+time.Second {
		t.Errorf("%s of CPU", cpu)
	}
}
