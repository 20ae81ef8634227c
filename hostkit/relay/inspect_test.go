package relay

import (
	"bytes"
	"encoding/json"
	"strings"
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
// frame both ways: queued, taken and encoded as the writer does.
func BenchmarkInspect(b *testing.B) {
	c := &conn{rl: &Relay{}, q: newQueue(1<<30, 1<<30)}
	at := time.Unix(1700000000, 123456789)
	var enc entryEncoder
	b.ReportAllocs()
	for b.Loop() {
		c.inspect(inspectEntry{Time: at, Dir: "in", Slot: "s1", Type: "snug:db-request", RequestID: "r-0001", Verdict: "reject", Code: "MALFORMED", Message: "payload: must be an object"})
		items, _, _, _ := c.q.next() // what the writer does with a row
		enc.message(&items[0])
	}
}

// TestInspectRowsEncodeWhenWritten: an inspector row waits as its entry and
// is encoded when the writer takes it, into the bytes json.Marshal writes;
// a row replaced while it waits (a streaming frame's) is never written; the
// bound the queue counts a waiting row at is never below its length.
func TestInspectRowsEncodeWhenWritten(t *testing.T) {
	at := time.Date(2026, 12, 1, 20, 0, 0, 123456789, time.FixedZone("x", 3600))
	for _, s := range []string{"", "plain", `q"uote\\back`, "ctl\x00\x1f\n\t\x7f", "emoji 🙂 é", "bad \xff utf8", "sep \u2028\u2029", "</script><!--&", strings.Repeat("é<", 300)} {
		c := &conn{rl: &Relay{}, q: newQueue(1<<20, 1<<20)}
		c.q.busy = true // the writer is writing: the page is behind
		key := coalesceKey{rid: "r1", inspect: true}
		c.inspectKeyed(key, inspectEntry{Time: at, Dir: "out", Slot: "s1", Type: "snug:app-response", RequestID: "r1", Verdict: "accept", Message: "first"}, true)
		e := inspectEntry{Time: at, Dir: "out", Slot: "s1", Type: s, RequestID: s, Verdict: "accept", Code: s, Message: s}
		c.inspectKeyed(key, e, true)
		items, _, _, _ := c.q.next()
		if len(items) != 1 {
			t.Fatalf("%q: %d rows waiting, want the newer one alone", s, len(items))
		}
		var enc entryEncoder
		got := enc.message(&items[0])
		e.Time = at.UTC()
		want, err := json.Marshal(inspectMsg{"inspect", e})
		if err != nil || string(got) != string(want) {
			t.Errorf("%q: wrote %s, json.Marshal writes %s (%v)", s, got, want, err)
		}
		if n := entrySize(&e); n < int64(len(want)) {
			t.Errorf("%q: counted %d bytes, the row has %d", s, n, len(want))
		}
	}
}

// rowCases are inspector rows with what an app controls (its requestId, the
// message its frame earned) and the relay's own values at their edges.
func rowCases() []inspectEntry {
	var out []inspectEntry
	times := []time.Time{
		time.Unix(0, 0),
		time.Date(2026, 12, 1, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 12, 1, 20, 0, 0, 120000000, time.FixedZone("x", 3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 1, time.FixedZone("y", 7*3600+1800)),
		time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Now(),
	}
	strs := []string{"", "plain", `q"uote\\back`, "ctl\x00\x01\x07\b\f\n\r\t\x1b\x1f\x7f", "emoji 🙂 é", "bad \xff utf8 \xc3", "sep \u2028\u2029", "</script><!--&amp;", "\xed\xa0\x80 surrogate", strings.Repeat("é<", 300)}
	for i, at := range times {
		for j, s := range strs {
			out = append(out, inspectEntry{Time: at, Dir: "in", Slot: "s1", Type: s, RequestID: s, Verdict: "reject", Code: s, Message: s})
			// Members left empty are left out.
			out = append(out, inspectEntry{Time: at, Dir: strs[(i+j)%len(strs)], Slot: s, Verdict: s})
		}
	}
	return out
}

// TestRowIsJSONMarshal: appendRow writes the bytes json.Marshal writes for
// the row, for every row of rowCases; a time encoding/json refuses panics.
func TestRowIsJSONMarshal(t *testing.T) {
	for _, e := range rowCases() {
		checkRow(t, e)
	}
	for _, y := range []int{-1, 10000} {
		e := inspectEntry{Time: time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC), Dir: "in", Slot: "s", Verdict: "accept"}
		if _, err := json.Marshal(inspectMsg{"inspect", e}); err == nil {
			t.Fatalf("year %d: json.Marshal encodes it", y)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("year %d: appendRow did not panic", y)
				}
			}()
			appendRow(nil, &e)
		}()
	}
}

func checkRow(t *testing.T, e inspectEntry) {
	t.Helper()
	got := appendRow([]byte("kept"), &e)
	utc := e
	utc.Time = e.Time.UTC()
	want, err := json.Marshal(inspectMsg{"inspect", utc})
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	if string(got) != "kept"+string(want) {
		t.Fatalf("appendRow wrote\n%s\njson.Marshal writes\n%s", got[4:], want)
	}
	if n := entrySize(&e); n < int64(len(want)) {
		t.Fatalf("counted %d bytes, the row has %d: %s", n, len(want), want)
	}
}

// FuzzRowIsJSONMarshal holds appendRow to json.Marshal for any strings and
// any time encoding/json can write.
func FuzzRowIsJSONMarshal(f *testing.F) {
	for _, e := range rowCases() {
		f.Add(e.Time.Unix(), int64(e.Time.Nanosecond()), e.Dir, e.Slot, e.Type, e.RequestID, e.Verdict, e.Code, e.Message)
	}
	f.Fuzz(func(t *testing.T, sec, nsec int64, dir, slot, typ, rid, verdict, code, msg string) {
		at := time.Unix(sec, nsec)
		if y := at.UTC().Year(); y < 0 || y > 9999 {
			return // encoding/json refuses it (TestRowIsJSONMarshal)
		}
		checkRow(t, inspectEntry{Time: at, Dir: dir, Slot: slot, Type: typ, RequestID: rid, Verdict: verdict, Code: code, Message: msg})
	})
}

// BenchmarkRow is the encoding of one row alone: appendRow against the
// encoding/json Encoder it replaced, in the same process.
func BenchmarkRow(b *testing.B) {
	e := inspectEntry{Time: time.Unix(1700000000, 123456789), Dir: "in", Slot: "s1", Type: "snug:db-request", RequestID: "r-0001", Verdict: "accept"}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		var enc entryEncoder
		it := qitem{ent: &e}
		for b.Loop() {
			enc.message(&it)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		var buf bytes.Buffer
		jenc := json.NewEncoder(&buf)
		m := inspectMsg{T: "inspect"}
		for b.Loop() {
			buf.Reset()
			m.Entry = e
			m.Entry.Time = m.Entry.Time.UTC()
			if err := jenc.Encode(&m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
