package events_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/events"
)

// checker returns valid, which checks a built event against the generated
// validator and returns its data's keys.
func checker(t *testing.T) func(ev *frame.HostEvent, err error) map[string]json.RawMessage {
	return func(ev *frame.HostEvent, err error) map[string]json.RawMessage {
		t.Helper()
		return valid(t, ev, err)
	}
}

func valid(t *testing.T, ev *frame.HostEvent, err error) map[string]json.RawMessage {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if err := ev.Validate(); err != nil {
		t.Fatalf("%s: %v", ev.Event, err)
	}
	raw, err := frame.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := frame.Parse(raw); err != nil {
		t.Fatalf("%s does not parse back: %v", raw, err)
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(ev.Data, &data); err != nil {
		t.Fatal(err)
	}
	return data
}

func TestBuildersMakeEveryFieldThemselves(t *testing.T) {
	check := checker(t)
	d := check(events.ThemeChange(frame.ModeDark))
	if string(d["theme"]) != `{"mode":"dark"}` || len(d) != 1 {
		t.Errorf("theme-change data %v", d)
	}
	d = check(events.Visibility(false))
	if string(d["visible"]) != "false" || len(d) != 1 {
		t.Errorf("visibility data %v", d)
	}
	d = check(events.Connection("github", "revoked"))
	if string(d["connection"]) != `"github"` || string(d["state"]) != `"revoked"` || len(d) != 2 {
		t.Errorf("connection-event data %v", d)
	}
	d = check(events.Hint("inbox", "msg/42"))
	if string(d["topic"]) != `"inbox"` || string(d["ref"]) != `"msg/42"` || len(d) != 2 {
		t.Errorf("hint data %v", d)
	}
}

func TestBuildersRefuseWhatTheSpecRefuses(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) }
	cases := []struct {
		name string
		err  error
	}{
		{"theme mode", second(events.ThemeChange("sepia"))},
		{"connection state", second(events.Connection("github", "paused"))},
		{"connection name empty", second(events.Connection("", "connected"))},
		{"hint topic empty", second(events.Hint("", "r"))},
		{"hint topic 65 code points", second(events.Hint(long(65), "r"))},
		{"hint ref 257 code points", second(events.Hint("t", long(257)))},
		{"hint ref not UTF-8", second(events.Hint("t", "\xff"))},
	}
	for _, c := range cases {
		if c.err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	// Limits count code points, not bytes: 64 two-byte runes fit.
	check := checker(t)
	check(events.Hint(long(64), long(256)))
}

func second(_ *frame.HostEvent, err error) error { return err }

func TestResizeHeight(t *testing.T) {
	ev := func(data string) *frame.AppEvent {
		return &frame.AppEvent{InstanceID: "i", Event: frame.EventResize, Data: json.RawMessage(data)}
	}
	for data, want := range map[string]int{`{"height":0}`: 0, `{"height":480}`: 480, `{"height":100000}`: 100000, `{"height":4.8e2}`: 480} {
		if h, err := events.ResizeHeight(ev(data)); err != nil || h != want {
			t.Errorf("%s: %d %v", data, h, err)
		}
	}
	for _, data := range []string{``, `{}`, `{"height":-1}`, `{"height":100001}`, `{"height":1.5}`, `{"height":"10"}`, `[1]`, `{"height":1e300}`} {
		if _, err := events.ResizeHeight(ev(data)); err == nil {
			t.Errorf("%s: accepted", data)
		}
	}
	if _, err := events.ResizeHeight(&frame.AppEvent{Event: "scroll"}); err == nil {
		t.Error("a scroll event read as resize")
	}
}
