package cli

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/vectors"
)

// TestCheckFrameVectors runs every conformance vector through
// "snuggen check frame -" and checks the printed verdict and the exit status.
func TestCheckFrameVectors(t *testing.T) {
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			text, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := Main([]string{"check", "frame", "-"}, bytes.NewReader(text), &out, &errOut)
			if !json.Valid(text) {
				if code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "not JSON") {
					t.Fatalf("not JSON: exit %d, stdout %q, stderr %q; want exit 2 and a message", code, out.String(), errOut.String())
				}
				return
			}
			var got struct {
				Verdict   string          `json:"verdict"`
				Type      string          `json:"type"`
				Code      string          `json:"code"`
				RequestID *string         `json:"requestId"`
				Answer    json.RawMessage `json:"answer"`
				Errors    []struct {
					Path, Rule, Message string
				} `json:"errors"`
			}
			if strings.Count(out.String(), "\n") != 1 {
				t.Fatalf("want one line, got %q", out.String())
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("output %q: %v", out.String(), err)
			}
			w := v.Want
			wantCode := map[string]int{"accept": 0, "ignore": 0, "reject": 1}[w.Verdict]
			if code != wantCode || got.Verdict != w.Verdict {
				t.Fatalf("exit %d verdict %s, want %d %s: %s", code, got.Verdict, wantCode, w.Verdict, out.String())
			}
			if w.Verdict != "reject" {
				if got.Type != w.Type {
					t.Errorf("type %q, want %q", got.Type, w.Type)
				}
				return
			}
			if got.Code != w.Code {
				t.Errorf("code %s, want %s", got.Code, w.Code)
			}
			if (got.RequestID == nil) != (w.RequestID == nil) || (got.RequestID != nil && *got.RequestID != *w.RequestID) {
				t.Errorf("requestId %v, want %v", got.RequestID, w.RequestID)
			}
			var rules []string
			for _, e := range got.Errors {
				if e.Path == "" && e.Rule == "" {
					t.Errorf("error entry without path and rule: %+v", e)
				}
				if !slices.Contains(rules, e.Rule) {
					rules = append(rules, e.Rule)
				}
			}
			slices.Sort(rules)
			if !slices.Equal(rules, w.Rules) {
				t.Errorf("rules %v, want %v", rules, w.Rules)
			}
			var answer struct {
				V         int    `json:"v"`
				Type      string `json:"type"`
				RequestID string `json:"requestId"`
			}
			if w.AnswerType == nil {
				if string(got.Answer) != "null" {
					t.Errorf("answer %s, want null", got.Answer)
				}
				return
			}
			if err := json.Unmarshal(got.Answer, &answer); err != nil || answer.Type != *w.AnswerType || answer.V != 1 || answer.RequestID != *w.RequestID {
				t.Errorf("answer %s, want a v:1 %s to %s", got.Answer, *w.AnswerType, *w.RequestID)
			}
			// What the host sends back is itself a valid frame (R1 answers
			// are frames like any other: the app checks them too).
			if av, err := CheckFrame(got.Answer); err != nil || av.Verdict != "accept" {
				t.Errorf("the answer %s is no valid frame: %+v %v", got.Answer, av, err)
			}
		})
	}
}

func TestCheckFrameOutputShape(t *testing.T) {
	cases := []struct {
		in, want string
		code     int
	}{
		{`{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1"}`, `{"verdict":"accept","type":"snug:app-cancel"}`, 0},
		{`{"v":1,"type":"snug:future-thing"}`, `{"verdict":"ignore","type":"snug:future-thing"}`, 0},
		{`{"v":1,"type":"snug:future-thing","TYPE":"snug:app-cancel"}`, `{"verdict":"ignore","type":"snug:future-thing"}`, 0},
		{`{"v":2,"type":"snug:app-cancel"}`, `{"verdict":"reject","code":"UNSUPPORTED_VERSION","requestId":null,"answer":null,"errors":[{"path":"/v","rule":"frame.unsupported-version","message":"v is an integer other than a supported protocol version"}]}`, 1},
		{`{"v":1,"type":"snug:open-url-request","requestId":"r1","instanceId":"i1","url":"https://u@example.com/"}`, `{"verdict":"reject","code":"MALFORMED","requestId":"r1","answer":{"v":1,"type":"snug:open-url-result","requestId":"r1","status":"refused","reason":"MALFORMED: /url: @ in the authority: no username or password, empty userinfo included (openurl.url.userinfo)"},"errors":[{"path":"/url","rule":"openurl.url.userinfo","message":"@ in the authority: no username or password, empty userinfo included"}]}`, 1},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := Main([]string{"check", "frame"}, strings.NewReader(c.in), &out, &errOut)
		if code != c.code || strings.TrimSpace(out.String()) != c.want {
			t.Errorf("check frame %s\n got %d %s\nwant %d %s", c.in, code, out.String(), c.code, c.want)
		}
	}
}

func TestCheckFrameUnusableInput(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := Main([]string{"check", "frame", "/nonexistent/frame.json"}, nil, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "/nonexistent/frame.json") {
		t.Errorf("missing file: exit %d, stderr %q", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"check", "frame", "-"}, strings.NewReader("{\n  \"v\": 1,\n  oops\n}"), &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "<stdin>:3:3") {
		t.Errorf("not JSON: exit %d, stderr %q", code, errOut.String())
	}
	// Invalid UTF-8 is not JSON either (RFC 8259 §8.1), though encoding/json
	// lets it through inside a string.
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"check", "frame", "-"}, strings.NewReader("{\"v\":1,\n\"type\":\"snug:app-announce\",\"appId\":\"\xff\",\"displayName\":\"x\"}"), &out, &errOut); code != 2 || out.Len() != 0 || !strings.Contains(errOut.String(), "<stdin>:2:37: not JSON: invalid UTF-8") {
		t.Errorf("invalid UTF-8: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
