package frame

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// recorder records which frames reached the handler (through HandlerFunc,
// the generated adapter, so a new frame type needs nothing here).
type recorder struct{ got []Frame }

func (r *recorder) handlers() Handlers {
	return HandlerFunc(func(_ context.Context, f Frame) { r.got = append(r.got, f) })
}

func TestDispatch(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, raw   string
		handled     string // FrameType the handler must see, "" for none
		replyType   string // answer type sent through reply, "" for none
		wantErr     bool
		replyReason string
	}{
		{"accepted app→host frame goes to its handler", `{"v":1,"type":"snug:db-request","requestId":"r1","instanceId":"i1","op":"kvGet","key":"k"}`, TypeDBRequest, "", false, ""},
		{"ignored type does nothing", `{"v":1,"type":"snug:future","requestId":"r1"}`, "", "", false, ""},
		{"host→app frame from an app is ignored", `{"v":1,"type":"snug:app-response","requestId":"r1","ok":false,"error":{"code":"X","message":"","retryable":false}}`, "", "", false, ""},
		{"reject with requestId is answered", `{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","url":"https://x.example/","method":"GET","headers":{"Cookie":"a"}}`, "", TypeNetResponse, true, ""},
		{"open-url reject answers refused", `{"v":2,"type":"snug:open-url-request","requestId":"r1","instanceId":"i1","url":"https://x.example/"}`, "", TypeOpenURLResult, true, CodeUnsupportedVersion},
		{"reject without requestId is not answered (R1)", `{"v":1,"type":"snug:app-cancel","instanceId":"i1"}`, "", "", true, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &recorder{}
			var replies []Frame
			err := Dispatch(ctx, []byte(c.raw), h.handlers(), func(f Frame) { replies = append(replies, f) })
			var re *RejectError
			if c.wantErr != errors.As(err, &re) {
				t.Fatalf("err = %v", err)
			}
			if c.handled == "" && len(h.got) != 0 || c.handled != "" && (len(h.got) != 1 || h.got[0].FrameType() != c.handled) {
				t.Fatalf("handled %v, want %q", h.got, c.handled)
			}
			if c.replyType == "" && len(replies) != 0 || c.replyType != "" && (len(replies) != 1 || replies[0].FrameType() != c.replyType) {
				t.Fatalf("replies %v, want %q", replies, c.replyType)
			}
			if c.replyReason != "" {
				r := replies[0].(*OpenURLResult)
				if r.Status != StatusRefused || r.Reason == nil || !strings.HasPrefix(*r.Reason, c.replyReason+": ") || r.RequestID != "r1" {
					t.Fatalf("answer %+v", r)
				}
			}
		})
	}
}

func TestAnswerIsAValidFrame(t *testing.T) {
	for _, raw := range []string{
		`{"v":1,"type":"snug:db-request","requestId":"r1","instanceId":"i1","op":"nope"}`,
		`{"v":1,"type":"snug:net-request","requestId":"r1","instanceId":"i1","url":"https://x.example/","method":"GET","body":"x"}`,
		`{"v":1,"type":"snug:open-url-request","requestId":"r1","instanceId":"i1","url":"http://x.example/"}`,
		`{"v":1,"type":"snug:app-message","requestId":"r1","instanceId":"i1","appId":"a","action":""}`,
	} {
		_, err := Parse([]byte(raw))
		re := err.(*RejectError)
		a := re.Answer()
		b, err := Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := Parse(b); err != nil || f == nil {
			t.Errorf("answer %s does not parse: %v", b, err)
		}
	}
}

func TestHelpers(t *testing.T) {
	if !IsStripHeader("Proxy-Authorization") || IsStripHeader("x-api-key2") {
		t.Error("IsStripHeader")
	}
	for _, h := range []string{"Content-Type", "x-ratelimit-remaining", "X-RateLimit-Reset", "ETag"} {
		if !ResponseHeaderAllowed(h) {
			t.Errorf("ResponseHeaderAllowed(%q) = false", h)
		}
	}
	for _, h := range []string{"set-cookie", "x-ratelimit", "server"} {
		if ResponseHeaderAllowed(h) {
			t.Errorf("ResponseHeaderAllowed(%q) = true", h)
		}
	}
	if !Retryable(CodeNetFetchFailed) || Retryable(CodeMalformed) || Retryable("NEW_CODE") {
		t.Error("Retryable")
	}
	if e := NewError(CodeDBTimeout, "slow"); !e.Retryable || e.Code != CodeDBTimeout {
		t.Errorf("NewError = %+v", e)
	}
	if SizeClass(TypeDBResponse) != MaxDBFrameBytes || SizeClass(TypeNetRequest) != MaxNetFrameBytes || SizeClass("snug:x") != MaxFrameBytes {
		t.Error("SizeClass")
	}
	want := "default-src 'none'; script-src 'unsafe-inline' https://cdn.jsdelivr.net https://cdnjs.cloudflare.com https://unpkg.com; style-src 'unsafe-inline' https://cdn.jsdelivr.net https://cdnjs.cloudflare.com https://unpkg.com; img-src data: blob: https://cdn.jsdelivr.net https://cdnjs.cloudflare.com https://unpkg.com; font-src data: blob: https://cdn.jsdelivr.net https://cdnjs.cloudflare.com https://unpkg.com; connect-src 'none'; frame-src 'none'; form-action 'none'; object-src 'none'; worker-src 'none'; base-uri 'none'"
	if got := CSPString(SandboxCSP); got != want {
		t.Errorf("CSPString = %s", got)
	}
	if len(SandboxTokens) != 1 || SandboxTokens[0] != "allow-scripts" {
		t.Errorf("SandboxTokens = %v", SandboxTokens)
	}
	b, err := MarshalEnvelope(&Envelope{AppID: "a", InstanceID: "i", RequestID: "r", Action: "go"})
	if err != nil || string(b) != EnvelopeTag+"\n"+`{"snug":1,"appId":"a","instanceId":"i","requestId":"r","action":"go"}` {
		t.Errorf("MarshalEnvelope = %s, %v", b, err)
	}
}
