package frame

import (
	"errors"
	"slices"
	"testing"

	"github.com/snuggen/snuggen/internal/vectors"
)

// TestVectors runs every conformance vector of testdata/frames.json through
// Parse and compares the verdict, type, code, recovered requestId, the set of
// rule ids and the answer's type.
func TestVectors(t *testing.T) {
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) < 150 {
		t.Fatalf("only %d vectors", len(vs))
	}
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			text, err := v.Text()
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(text)
			var re *RejectError
			switch {
			case err == nil && f != nil:
				if v.Want.Verdict != "accept" || f.FrameType() != v.Want.Type {
					t.Fatalf("accepted as %s, want %+v", f.FrameType(), v.Want)
				}
			case err == nil:
				if v.Want.Verdict != "ignore" {
					t.Fatalf("ignored, want %+v", v.Want)
				}
			case errors.As(err, &re):
				if v.Want.Verdict != "reject" {
					t.Fatalf("rejected (%v), want %+v", err, v.Want)
				}
				checkReject(t, re, v.Want)
			default:
				t.Fatalf("Parse returned %T %v", err, err)
			}
		})
	}
}

func checkReject(t *testing.T, re *RejectError, w vectors.Want) {
	t.Helper()
	if re.Code != w.Code {
		t.Errorf("code %s, want %s (%v)", re.Code, w.Code, re)
	}
	switch {
	case w.RequestID == nil && re.HasRequestID:
		t.Errorf("requestId %q recovered, want none", re.RequestID)
	case w.RequestID != nil && (!re.HasRequestID || re.RequestID != *w.RequestID):
		t.Errorf("requestId %q (recovered %v), want %q", re.RequestID, re.HasRequestID, *w.RequestID)
	}
	var rules []string
	for _, v := range re.Violations {
		if !slices.Contains(rules, v.Rule) {
			rules = append(rules, v.Rule)
		}
	}
	slices.Sort(rules)
	if !slices.Equal(rules, w.Rules) {
		t.Errorf("rules %v, want %v (%v)", rules, w.Rules, re)
	}
	a := re.Answer()
	switch {
	case w.AnswerType == nil && a != nil:
		t.Errorf("answer %T, want none", a)
	case w.AnswerType != nil && (a == nil || a.FrameType() != *w.AnswerType):
		t.Errorf("answer %v, want type %s", a, *w.AnswerType)
	}
}
