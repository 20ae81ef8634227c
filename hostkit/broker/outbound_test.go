package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/events"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// Options that would put an invalid host-ready on the wire (the runtime
// drops it, and snug.ready never resolves in any app) are refused when the
// broker is made, naming the option and the fix.
func TestOptionsThatWouldFreezeEveryAppAreRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		opts broker.Options
		want []string
	}{
		{"theme in another case", broker.Options{Theme: "Dark"}, []string{"Options.Theme", `"Dark"`, "light, dark", "frame.ModeDark"}},
		{"theme not a mode", broker.Options{Theme: "blue"}, []string{"Options.Theme", `"blue"`, "frame.ModeLight"}},
		{"one-character locale", broker.Options{Locale: "e"}, []string{"Options.Locale", `"e"`, "BCP 47"}},
		{"locale too long", broker.Options{Locale: strings.Repeat("a", 400)}, []string{"Options.Locale", "BCP 47"}},
		{"negative in-flight limit", broker.Options{MaxInFlight: -1}, []string{"Options.MaxInFlight", "below zero"}},
	} {
		b, err := broker.NewChecked(c.opts)
		if err == nil {
			b.Shutdown(context.Background())
			t.Errorf("%s: NewChecked accepted %+v", c.name, c.opts)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), c.want[0]) {
					t.Errorf("%s: New did not panic naming %s (%v)", c.name, c.want[0], r)
				}
			}()
			broker.New(c.opts)
		}()
	}

	// Valid options go out as given.
	h := newHost(t, broker.Options{Theme: frame.ModeDark, Locale: "pt-BR"}, relay.Options{})
	p := h.page(t)
	p.start("s1", "a")
	m, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "frame" && m.f.Type == frame.TypeHostReady })
	var hr struct {
		Theme  frame.Theme `json:"theme"`
		Locale string      `json:"locale"`
	}
	if err := json.Unmarshal(m.Frame, &hr); err != nil || hr.Theme.Mode != frame.ModeDark || hr.Locale != "pt-BR" {
		t.Fatalf("host-ready %s (%v)", m.Frame, err)
	}
}

// A host-event the event table does not allow never leaves: not from
// Session.Event, Broadcast or SendToApp. A hint is a doorbell (R7): one
// built by hand with content in it is refused, as is an event name past the
// frame's limit or one the table does not know.
func TestHostEventsOutsideTheTableNeverLeave(t *testing.T) {
	h := newHost(t, broker.Options{}, relay.Options{})
	p := h.page(t)
	p.start("s1", "mail")
	hand := func(event, data string) *frame.HostEvent {
		return &frame.HostEvent{Event: event, Data: json.RawMessage(data)}
	}
	bad := map[string]*frame.HostEvent{
		"hint with content":     hand(frame.EventHint, `{"topic":"inbox","ref":"msg/7","body":"Your code is 481-223"}`),
		"hint ref too long":     hand(frame.EventHint, `{"topic":"inbox","ref":"`+strings.Repeat("r", 257)+`"}`),
		"65-character event":    hand(strings.Repeat("e", 65), `{}`),
		"unknown event":         hand("new-mail", `{"from":"ann@example.com","subject":"hi"}`),
		"theme-change bad mode": hand(frame.EventThemeChange, `{"theme":{"mode":"Dark"}}`),
	}
	for name, ev := range bad {
		if err := h.b.SendToApp("mail", ev); err == nil {
			t.Errorf("SendToApp: %s accepted", name)
		}
		if err := h.b.Broadcast(ev); err == nil {
			t.Errorf("Broadcast: %s accepted", name)
		}
	}
	// A valid one follows on the same path: once it is in, none of the
	// refused ones can be on its way.
	hint, err := events.Hint("inbox", "msg/7")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.b.SendToApp("mail", hint); err != nil {
		t.Fatalf("a hint built by hostkit/events: %v", err)
	}
	p.wait(0, waitLimit, func(m msg) bool { return m.T == "frame" && m.f.Event == frame.EventHint })
	var got []string
	p.mu.Lock()
	for _, m := range p.log {
		if m.T == "frame" && m.f.Type == frame.TypeHostEvent {
			got = append(got, string(m.Frame))
		}
	}
	p.mu.Unlock()
	if len(got) != 1 || !strings.Contains(got[0], `"ref":"msg/7"`) || strings.Contains(got[0], "body") {
		t.Fatalf("host-events on the wire: %q, want the one valid hint", got)
	}
}

// Every frame the broker sends passes the generated parser before it
// leaves: host-ready, host-events and every response type. An answer a
// handler builds wrong is replaced by the pair's HOST_ERROR, so the app's
// request still ends.
func TestEveryFrameTheHostSendsIsValid(t *testing.T) {
	long := strings.Repeat("m", frame.ErrorMessageMaxLength+1)
	bogus := "bogus"
	status := 99
	h := newHost(t, broker.Options{
		Theme: frame.ModeDark,
		Agent: broker.AgentFunc(func(ctx context.Context, c broker.Call, m *frame.AppMessage, stream func(string)) *frame.AppResponse {
			stream("thinking")
			if m.Action == "good" {
				return &frame.AppResponse{OK: true, Streaming: new(bool), Data: json.RawMessage(`{"ok":1}`)}
			}
			return &frame.AppResponse{OK: false, Error: &frame.Error{Code: frame.CodeNetworkError, Message: long}}
		}),
		DB: broker.DBFunc(func(ctx context.Context, c broker.Call, r *frame.DBRequest) *frame.DBResponse {
			return &frame.DBResponse{OK: false, Error: &frame.Error{Code: "", Message: "no code"}}
		}),
		Net: broker.NetFunc(func(ctx context.Context, c broker.Call, r *frame.NetRequest) *frame.NetResponse {
			return &frame.NetResponse{OK: true, Status: &status, Headers: map[string]string{}}
		}),
		OpenURL: broker.OpenURLFunc(func(ctx context.Context, c broker.Call, r *frame.OpenURLRequest) *frame.OpenURLResult {
			return &frame.OpenURLResult{Status: bogus}
		}),
	}, relay.Options{})
	p := h.page(t)
	inst := p.start("s1", "a")
	p.send(map[string]any{"t": "visibility", "visible": false})
	if err := h.b.SetTheme(frame.ModeLight); err != nil {
		t.Fatal(err)
	}
	p.frame("s1", appMessage(inst, "a1", "good"))
	p.frame("s1", appMessage(inst, "a2", "bad"))
	p.frame("s1", dbKV(inst, "d1", "kvGet", "k", ""))
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:net-request","requestId":"n1","instanceId":%q,"url":"https://example.com/","method":"GET"}`, inst))
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:open-url-request","requestId":"o1","instanceId":%q,"url":"https://example.com/"}`, inst))
	p.frame("s1", `{"v":1,"type":"snug:db-request","requestId":"r1","op":"nope"}`)
	if f := p.terminal("s1", "a1"); f.OK == nil || !*f.OK {
		t.Errorf("a1: %+v", f)
	}
	for _, rid := range []string{"a2", "d1", "n1"} {
		if f := p.terminal("s1", rid); f.code() != frame.CodeHostError {
			t.Errorf("%s: %+v, want %s in place of the handler's invalid answer", rid, f.Error, frame.CodeHostError)
		}
	}
	if f := p.terminal("s1", "o1"); f.Status != frame.StatusRefused || !strings.Contains(f.Reason, frame.CodeHostError) {
		t.Errorf("o1: %+v, want refused with %s", f, frame.CodeHostError)
	}
	if f := p.terminal("s1", "r1"); f.code() != frame.CodeMalformed {
		t.Errorf("r1: %+v", f.Error)
	}
	p.wait(0, waitLimit, func(m msg) bool { return m.T == "frame" && m.f.Event == frame.EventThemeChange })
	p.wait(0, waitLimit, func(m msg) bool { return m.T == "frame" && m.f.Event == frame.EventVisibility })

	seen := map[string]bool{}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.log {
		if m.T != "frame" {
			continue
		}
		f, err := frame.Parse(m.Frame)
		if err != nil || f == nil {
			t.Errorf("the host sent a frame its parser refuses: %s (%v)", m.Frame, err)
			continue
		}
		seen[f.FrameType()] = true
	}
	for _, typ := range []string{frame.TypeHostReady, frame.TypeHostEvent, frame.TypeAppResponse, frame.TypeDBResponse, frame.TypeNetResponse, frame.TypeOpenURLResult} {
		if !seen[typ] {
			t.Errorf("no %s was sent", typ)
		}
	}
}
