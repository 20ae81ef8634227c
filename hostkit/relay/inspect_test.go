package relay

import (
	"encoding/json"
	"testing"
	"time"
)

func TestAppendJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"uote\\back`, "ctl\x00\x1f\n\t", "emoji 🙂 é", "bad \xff utf8", "sep \u2028\u2029"} {
		raw := appendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("%q → %s: %v", s, raw, err)
		}
		want := string([]rune(s)) // invalid bytes become U+FFFD
		if got != want {
			t.Errorf("%q → %s → %q", s, raw, got)
		}
	}
}

func TestInspectEntryShape(t *testing.T) {
	c := &conn{rl: &Relay{}, q: newQueue(1<<20, 1<<20)}
	c.inspect(time.Unix(0, 0), "in", "s1", "snug:db-request", "r\"1", "reject", "MALFORMED", "why\n")
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
