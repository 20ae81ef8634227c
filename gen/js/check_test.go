package js

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/internal/urlread"
)

// checkValuesScript runs the committed checkFrame on values (not texts) that
// the vector file cannot hold, and prints one JSON line of results.
const checkValuesScript = `import { checkFrame } from "FRAMES";
const msg = (extra) => ({ v: 1, type: "snug:app-message", requestId: "r1", instanceId: "i1", appId: "a", action: "x", ...extra });
const safe = (input) => {
  try {
    const v = checkFrame(input);
    return { verdict: v.verdict, type: v.type, rules: v.errors?.map((e) => e.rule), message: v.answer?.error?.message };
  } catch (e) {
    return { threw: String(e) };
  }
};
let deep = [];
for (let i = 0; i < 5000; i++) deep = [deep];
let tooDeep = [];
for (let i = 0; i < MAXDEPTH; i++) tooDeep = [tooDeep];
const cyclic = msg({});
cyclic.payload = { self: cyclic };
const long = JSON.parse(process.argv[2]);
const out = {
  undefinedOptional: safe(msg({ state: undefined, payload: undefined })),
  undefinedRequired: safe(msg({ action: undefined })),
  undefinedInArray: safe(msg({ state: [undefined, () => 1] })),
  deepValue: safe(msg({ state: deep })),
  tooDeepValue: safe(msg({ state: tooDeep })),
  cyclic: safe(cyclic),
  bigint: safe(msg({ payload: { n: 1n } })),
  undefinedInput: safe(undefined),
  dateMember: safe(msg({ payload: { at: new Date(0) } })),
  toStringMembers: safe(msg({ payload: { toString: 1, valueOf: 2 }, state: { toString: "x" } })),
  typeConstructor: safe({ v: 1, type: "constructor" }),
  typeHasOwnProperty: safe('{"v":1,"type":"hasOwnProperty","requestId":"r1"}'),
  longMessage: safe(long),
  longMessageText: safe(JSON.stringify(long)),
};
console.log(JSON.stringify(out));
`

type jsResult struct {
	Verdict string   `json:"verdict"`
	Type    string   `json:"type"`
	Rules   []string `json:"rules"`
	Message string   `json:"message"`
	Threw   string   `json:"threw"`
}

// longNetRequest is a strict frame with four unknown keys of 400 code points:
// the answer's message lists three of them, over the error message's bound.
func longNetRequest() []byte {
	f := map[string]any{"v": 1, "type": "snug:net-request", "requestId": "r1", "instanceId": "i1",
		"url": "https://api.example.com/", "method": "GET"}
	for _, c := range []string{"a", "b", "c", "d"} {
		f[strings.Repeat(c, 400)] = 1
	}
	b, err := json.Marshal(f)
	if err != nil {
		panic(err)
	}
	return b
}

// TestCheckFrameOnValues: checkFrame takes a value as its JSON text (an
// undefined member is absent, a 5,000-deep state is no stack overflow, one
// deeper than jsonscan.MaxDepth is no JSON as in Go, a cycle is not JSON), never throws, ignores types that are Object
// built-ins, and cuts the answer's message exactly as Go's RejectError.Answer.
func TestCheckFrameOnValues(t *testing.T) {
	node := testenv.Node(t)
	abs, err := filepath.Abs(filepath.Join(repoRoot, PathFrames))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "values.mjs")
	if err := os.WriteFile(script, []byte(strings.NewReplacer("FRAMES", "file://"+filepath.ToSlash(abs), "MAXDEPTH", strconv.Itoa(jsonscan.MaxDepth)).Replace(checkValuesScript)), 0o644); err != nil {
		t.Fatal(err)
	}
	long := longNetRequest()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, script, string(long))
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	var got map[string]jsResult
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("node output %q: %v", stdout.Bytes(), err)
	}
	accept := jsResult{Verdict: "accept", Type: "snug:app-message"}
	for name, want := range map[string]jsResult{
		"undefinedOptional":  accept,
		"undefinedRequired":  {Verdict: "reject", Rules: []string{"required"}},
		"undefinedInArray":   accept,
		"deepValue":          accept,
		"tooDeepValue":       {Verdict: "reject", Rules: []string{"frame.json"}},
		"cyclic":             {Verdict: "reject", Rules: []string{"frame.json"}},
		"bigint":             {Verdict: "reject", Rules: []string{"frame.json"}},
		"undefinedInput":     {Verdict: "reject", Rules: []string{"frame.json"}},
		"dateMember":         accept,
		"toStringMembers":    accept,
		"typeConstructor":    {Verdict: "ignore", Type: "constructor"},
		"typeHasOwnProperty": {Verdict: "ignore", Type: "hasOwnProperty"},
	} {
		g := got[name]
		if g.Threw != "" {
			t.Errorf("%s: checkFrame threw %s", name, g.Threw)
			continue
		}
		g.Message = ""
		if g.Verdict != want.Verdict || g.Type != want.Type || strings.Join(g.Rules, ",") != strings.Join(want.Rules, ",") {
			t.Errorf("%s: got %+v, want %+v", name, g, want)
		}
	}

	// The answer's message: Go's cut, the same length in code points.
	_, perr := frame.Parse(long)
	var re *frame.RejectError
	if !errors.As(perr, &re) {
		t.Fatalf("Go Parse of the long frame: %v, want a rejection", perr)
	}
	goMsg := re.Answer().(*frame.NetResponse).Error.Message
	if n := utf8.RuneCountInString(goMsg); n != frame.ErrorMessageMaxLength || !strings.HasSuffix(goMsg, "…") {
		t.Fatalf("Go message: %d code points, want %d ending in …", n, frame.ErrorMessageMaxLength)
	}
	for _, name := range []string{"longMessage", "longMessageText"} {
		m := got[name].Message
		if n := utf8.RuneCountInString(m); n != frame.ErrorMessageMaxLength || !strings.HasSuffix(m, "…") {
			t.Errorf("%s: JS message of %d code points (%q…), want %d ending in …", name, n, m[:min(len(m), 80)], frame.ErrorMessageMaxLength)
		}
		if !strings.HasPrefix(goMsg, strings.TrimSuffix(m, "…")[:200]) {
			t.Errorf("%s: JS message starts %q, Go's %q", name, m[:200], goMsg[:200])
		}
	}
}

// aceScript prints, for each URL on stdin (a JSON array), whether the JS
// open-url refinement refuses its host.
const aceScript = `import { readFileSync } from "node:fs";
import { validateOpenURLRequest } from "VALIDATE";
const urls = JSON.parse(readFileSync(0, "utf8"));
const frame = (url) => ({ v: 1, type: "snug:open-url-request", requestId: "r1", instanceId: "i1", url });
console.log(JSON.stringify(urls.map((u) => validateOpenURLRequest(frame(u)).some((e) => e.rule == "openurl.url.host"))));
`

// knownToGo reports whether an xn-- label decodes to code points Go's
// Unicode tables assign (or does not decode): the engine's tables may be
// newer, and a code point assigned in between is where the two may differ
// (urlread.ACELabelOK's doc).
func knownToGo(label string) bool {
	rs, ok := urlread.PunycodeDecode(label[4:])
	if !ok {
		return true
	}
	for _, r := range rs {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) {
			return false
		}
	}
	return true
}

// TestACELabelsGoJS: internal/urlread (Go) and the generated JS validator
// reach the same verdict on the xn-- labels of thousands of hosts: random
// Punycode-alphabet labels and the encodings of random strings drawn from
// letters, marks, digits, symbols, joiners, right-to-left and mapped
// characters.
func TestACELabelsGoJS(t *testing.T) {
	node := testenv.Node(t)
	abs, err := filepath.Abs(filepath.Join(repoRoot, PathValidate))
	if err != nil {
		t.Fatal(err)
	}
	pool := []rune("abzé߷üÜßıα例えไ💩🚀⒈ａﬁ\u0301\u0308\u200d\u200c-0١۱مثالשלוםÅΩẞǅᾈ\u00ad\u0080·")
	r := rand.New(rand.NewSource(2))
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	var urls []string
	for i := 0; i < 3000; i++ {
		var label string
		if i%3 == 0 {
			b := make([]byte, 1+r.Intn(10))
			for j := range b {
				b[j] = alphabet[r.Intn(len(alphabet))]
			}
			label = "xn--" + string(b)
		} else {
			rs := make([]rune, 1+r.Intn(5))
			for j := range rs {
				rs[j] = pool[r.Intn(len(pool))]
			}
			enc, err := idna.Punycode.ToASCII(string(rs))
			if err != nil || !strings.HasPrefix(enc, "xn--") {
				continue
			}
			label = enc
		}
		if !knownToGo(label) {
			continue
		}
		urls = append(urls, "https://"+label+".example/")
	}
	in, _ := json.Marshal(urls)
	dir := t.TempDir()
	script := filepath.Join(dir, "ace.mjs")
	if err := os.WriteFile(script, []byte(strings.Replace(aceScript, "VALIDATE", "file://"+filepath.ToSlash(abs), 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(in), &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.Bytes())
	}
	var js []bool
	if err := json.Unmarshal(stdout.Bytes(), &js); err != nil || len(js) != len(urls) {
		t.Fatalf("node gave %d verdicts for %d URLs (%v)", len(js), len(urls), err)
	}
	refused, bad := 0, 0
	for i, u := range urls {
		goRefuses := urlread.Check(u) == urlread.Host
		if goRefuses {
			refused++
		}
		if goRefuses != js[i] {
			bad++
			if bad <= 10 {
				t.Errorf("%s: Go refuses the host %v, JS %v", u, goRefuses, js[i])
			}
		}
	}
	if refused == 0 || refused == len(urls) {
		t.Fatalf("%d of %d refused: the sample does not exercise both verdicts", refused, len(urls))
	}
	t.Logf("%d URLs, %d refused, %d disagreements", len(urls), refused, bad)
}
