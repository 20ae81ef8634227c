package relay

import (
	"encoding/json"
	"testing"
	"time"
)

func TestInspectEntryShape(t *testing.T) {
	c := &conn{rl: &Relay{}, q: newQueue(1<<20, 1<<20)}
	c.inspect(inspectEntry{Time: time.Unix(0, 0), Dir: "in", Slot: "s1", Type: "snug:db-request", RequestID: "r\"1", Verdict: "reject", Code: "MALFORMED", Message: "why\n"})
	msgs, _, _ := c.q.take()
	var m struct {
		T     string            `json:"t"`
		Entry map[string]string `json:"entry"`
	}
	if err := json.Unmarshal(msgs[0], &m); err != nil {
		t.Fatalf("%s: %v", msgs[0], err)
	}
	want := map[string]string{"time": "1970-01-01T00:00:00Z", "dir": "in", "slot": "s1", "type": "snug:db-request", "requestId": "r\"1", "verdict": "reject", "code": "MALFORMED", "message": "why\n"}
	if m.T != "inspect" || len(m.Entry) != len(want) {
		t.Fatalf("%s", msgs[0])
	}
	for k, v := range want {
		if m.Entry[k] != v {
			t.Errorf("%s = %q, want %q", k, m.Entry[k], v)
		}
	}
}

// TestInspectCarriesHostileText: what an app controls (its requestId, the
// message its frame earned) reaches the page as the same string, whatever it
// holds: quotes, controls, markup, line separators; invalid UTF-8 as U+FFFD.
func TestInspectCarriesHostileText(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\\back`, "ctl\x00\x1f\n\t", "emoji 🙂 é", "bad \xff utf8", "sep \u2028\u2029", "</script><!--"} {
		c := &conn{rl: &Relay{}, q: newQueue(1<<20, 1<<20)}
		c.inspect(inspectEntry{Time: time.Unix(0, 0), Dir: "in", Slot: "s1", RequestID: s, Verdict: "reject", Message: s})
		msgs, _, _ := c.q.take()
		var m struct {
			Entry struct{ RequestID, Message string } `json:"entry"`
		}
		if err := json.Unmarshal(msgs[0], &m); err != nil {
			t.Fatalf("%q → %s: %v", s, msgs[0], err)
		}
		want := string([]rune(s)) // invalid bytes become U+FFFD
		if m.Entry.RequestID != want || m.Entry.Message != want {
			t.Errorf("%q → %s → %+v", s, msgs[0], m.Entry)
		}
	}
}

// BenchmarkInspect is the cost of one inspector row, written for every
// frame both ways.
func BenchmarkInspect(b *testing.B) {
	c := &conn{rl: &Relay{}, q: newQueue(1<<30, 1<<30)}
	at := time.Unix(1700000000, 123456789)
	b.ReportAllocs()
	for b.Loop() {
		c.inspect(inspectEntry{Time: at, Dir: "in", Slot: "s1", Type: "snug:db-request", RequestID: "r-0001", Verdict: "reject", Code: "MALFORMED", Message: "payload: must be an object"})
		c.q.take()
	}
}
