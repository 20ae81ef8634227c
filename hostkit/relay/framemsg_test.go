package relay

import (
	"encoding/json"
	"testing"
)

const kvGetMsg = `{"t":"frame","slot":"s0","frame":{"v":1,"type":"snug:db-request","requestId":"k1","instanceId":"0123456789abcdef0123456789abcdef","op":"kvGet","key":"prefs"}}`

// TestFrameMsg: the runner's frame messages are read without decoding, with
// the same slot and frame encoding/json reads; anything else is left to it.
func TestFrameMsg(t *testing.T) {
	var m inMsg
	if err := json.Unmarshal([]byte(kvGetMsg), &m); err != nil {
		t.Fatal(err)
	}
	slot, fr, ok := frameMsg([]byte(kvGetMsg))
	if !ok || string(slot) != m.Slot || string(fr) != string(m.Frame) {
		t.Fatalf("frameMsg = %q %q %v, encoding/json read %q %q", slot, fr, ok, m.Slot, m.Frame)
	}
	for _, other := range []string{
		`{"t":"mount","slot":"s0","app":"a"}`,
		`{"t":"frame","slot":"s\u0030","frame":{}}`, // an escape: encoding/json reads it
		`{"t":"frame","slot":"s0","frame":"text"}`,
		`{"t":"frame","slot":"a b","frame":{}}`,
		`{"t":"frame","slot":"s0","frame":{}`,
	} {
		if _, _, ok := frameMsg([]byte(other)); ok {
			t.Errorf("frameMsg took %s", other)
		}
	}
}

// BenchmarkReadFrameMsg: reading the page's frame message, by hand and with
// encoding/json (the relay's previous reading).
func BenchmarkReadFrameMsg(b *testing.B) {
	data := []byte(kvGetMsg)
	b.Run("frameMsg", func(b *testing.B) {
		for b.Loop() {
			if _, _, ok := frameMsg(data); !ok {
				b.Fatal("not read")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var m inMsg
			if err := json.Unmarshal(data, &m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
