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
	for _, data := range []string{``, `{}`, `{"height":-1}`, `{"height":100001}`, `{"height":1.5}`, `{"height":"10"}`, `[1]`, `{"height":1e300}`, `{"height":1e400}`, `{"height":1,"height":2}`, `{"height":1`} {
		if _, err := events.ResizeHeight(ev(data)); err == nil {
			t.Errorf("%s: accepted", data)
		}
	}
	// Keys are case-sensitive (issue 12 item 6): HEIGHT is some other key,
	// ignored like any unknown one, never read as height.
	if _, err := events.ResizeHeight(ev(`{"HEIGHT":500}`)); err == nil || !strings.Contains(err.Error(), "/data/height") {
		t.Errorf(`{"HEIGHT":500}: %v, want a missing /data/height`, err)
	}
	for data, want := range map[string]int{`{"height":10,"HEIGHT":99999}`: 10, `{"HEIGHT":99999,"height":10}`: 10, `{"Height":7,"height":3}`: 3, `{"height":200.00000000000001}`: 200} {
		if h, err := events.ResizeHeight(ev(data)); err != nil || h != want {
			t.Errorf("%s: %d %v, want %d", data, h, err, want)
		}
	}
	if _, err := events.ResizeHeight(&frame.AppEvent{Event: "scroll"}); err == nil {
		t.Error("a scroll event read as resize")
	}
}

// Check lets every builder's event through and refuses what R7 and the
// event table refuse: content in a hint, an event the table does not know,
// an app→host event, a field of the wrong type or past its limits.
func TestCheckHoldsHostEventsToTheTable(t *testing.T) {
	for _, ev := range []func() (*frame.HostEvent, error){
		func() (*frame.HostEvent, error) { return events.ThemeChange(frame.ModeDark) },
		func() (*frame.HostEvent, error) { return events.Visibility(true) },
		func() (*frame.HostEvent, error) { return events.Connection("github", "connected") },
		func() (*frame.HostEvent, error) { return events.Hint("inbox", "msg/42") },
	} {
		e, err := ev()
		if err != nil {
			t.Fatal(err)
		}
		if err := events.Check(e); err != nil {
			t.Errorf("%s built by the package: %v", e.Event, err)
		}
	}
	hand := func(event, data string) *frame.HostEvent {
		return &frame.HostEvent{Event: event, Data: json.RawMessage(data)}
	}
	if err := events.Check(hand(frame.EventHint, `{"topic":"inbox","ref":"msg/42"}`)); err != nil {
		t.Errorf("a hand-built hint of the table's fields: %v", err)
	}
	for _, c := range []struct {
		name string
		ev   *frame.HostEvent
		want string
	}{
		{"hint carrying content", hand(frame.EventHint, `{"topic":"inbox","ref":"msg/42","body":"Dear Ann, your balance is…"}`), "data.body is not a field"},
		{"hint key in another case", hand(frame.EventHint, `{"Topic":"inbox","ref":"msg/42"}`), "data.Topic is not a field"},
		{"hint without ref", hand(frame.EventHint, `{"topic":"inbox"}`), "lacks ref"},
		{"hint ref twice", hand(frame.EventHint, `{"topic":"inbox","ref":"a","ref":"b"}`), "appears twice"},
		{"hint ref 257 code points", hand(frame.EventHint, `{"topic":"t","ref":"`+strings.Repeat("é", 257)+`"}`), "257 code points"},
		{"hint ref a number", hand(frame.EventHint, `{"topic":"t","ref":42}`), "not a string"},
		{"hint without data", hand(frame.EventHint, ``), "without data"},
		{"hint data an array", hand(frame.EventHint, `["inbox"]`), "not a JSON object"},
		{"event name of 65 characters", hand(strings.Repeat("e", 65), `{}`), "not in the event table"},
		{"an unknown event", hand("new-mail", `{"from":"ann@example.com"}`), "not in the event table"},
		{"an app-to-host event", hand(frame.EventResize, `{"height":10}`), "not in the event table"},
		{"visibility not a boolean", hand(frame.EventVisibility, `{"visible":"yes"}`), "not a boolean"},
		{"connection state not in the enum", hand(frame.EventConnection, `{"connection":"github","state":"paused"}`), "want one of"},
		{"theme mode outside the enum", hand(frame.EventThemeChange, `{"theme":{"mode":"blue"}}`), "data/theme/mode"},
		{"theme not an object", hand(frame.EventThemeChange, `{"theme":"dark"}`), "not an object"},
	} {
		err := events.Check(c.ev)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
