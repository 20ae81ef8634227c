package frame

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/vectors"
)

// FuzzParse: Parse never panics, never accepts a frame over its size class,
// never accepts a strict frame with a key the frame does not define, and what
// it accepts passes Validate and survives Marshal → Parse. The seed corpus is
// every vector small enough to fuzz quickly.
func FuzzParse(f *testing.F) {
	vs, err := vectors.Load()
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range vs {
		text, err := v.Text()
		if err != nil {
			f.Fatal(err)
		}
		if len(text) <= 16<<10 {
			f.Add(text)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		sameParse(t, raw)
		fr, err := Parse(raw)
		if err != nil {
			re, ok := err.(*RejectError)
			if !ok {
				t.Fatalf("Parse error %T %v, want *RejectError", err, err)
			}
			if re.Code != CodeMalformed && re.Code != CodeUnsupportedVersion {
				t.Fatalf("reject code %q", re.Code)
			}
			if len(re.Violations) == 0 {
				t.Fatal("reject without violations")
			}
			if a := re.Answer(); (a != nil) != re.HasRequestID {
				t.Fatalf("answer %v with HasRequestID %v", a, re.HasRequestID)
			}
			return
		}
		if fr == nil {
			return
		}
		if len(raw) > SizeClass(fr.FrameType()) {
			t.Fatalf("accepted %d bytes of %s, over its size class %d", len(raw), fr.FrameType(), SizeClass(fr.FrameType()))
		}
		if fr.FrameType() == TypeNetRequest || fr.FrameType() == TypeOpenURLRequest {
			allowed := map[string]bool{"v": true, "type": true}
			rt := reflect.TypeOf(fr).Elem()
			for i := 0; i < rt.NumField(); i++ {
				allowed[strings.Split(rt.Field(i).Tag.Get("json"), ",")[0]] = true
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil {
				t.Fatalf("accepted text encoding/json cannot read: %v", err)
			}
			for k := range keys {
				if !allowed[k] {
					t.Fatalf("accepted strict %s with unknown key %q", fr.FrameType(), k)
				}
			}
		}
		if err := validate(fr); err != nil {
			t.Fatalf("accepted frame fails Validate: %v", err)
		}
		out, err := Marshal(fr)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out)
		if err != nil || again == nil || again.FrameType() != fr.FrameType() {
			t.Fatalf("Marshal → Parse: %v, %v\n%s", again, err, out)
		}
	})
}

func validate(f Frame) error {
	return f.(interface{ Validate() error }).Validate()
}

// vTypeLast is raw, a JSON object, with its v and type members moved after
// the others (ok false for a text that is not one readable object): Parse
// reads it without the header's lead, from the object's start again.
func vTypeLast(raw []byte) ([]byte, bool) {
	var d jsonscan.Decoder
	d.Reset(string(raw))
	if !d.BeginObject() {
		return nil, false
	}
	var head, tail [][]byte
	for first := true; d.ObjMore(first); first = false {
		start := d.Offset()
		k, ok := d.Key()
		if !ok {
			return nil, false
		}
		if _, ok := d.Skip(); !ok {
			return nil, false
		}
		m := []byte(strings.TrimLeft(string(raw[start:d.Offset()]), ", \t\r\n"))
		if k == "v" || k == "type" {
			tail = append(tail, m)
		} else {
			head = append(head, m)
		}
	}
	if !d.End() || len(head) == 0 || len(tail) == 0 {
		return nil, false
	}
	return []byte("{" + string(bytes.Join(append(head, tail...), []byte(","))) + "}"), true
}

// sameParse fails unless raw and its vTypeLast reading get the same
// verdict from Parse: the same frame, or the same rejection.
func sameParse(t *testing.T, raw []byte) {
	t.Helper()
	other, ok := vTypeLast(raw)
	if !ok {
		return
	}
	f1, err1 := Parse(raw)
	f2, err2 := Parse(other)
	if !reflect.DeepEqual(f1, f2) || !reflect.DeepEqual(err1, err2) {
		t.Fatalf("Parse differs with v and type last:\n%s\n%v %v\n%s\n%v %v", raw, f1, err1, other, f2, err2)
	}
}

// TestParseLeadIsTheFullRead: Parse's one pass (the frame's decoder going
// on after v and type when they lead the object) gives the verdict the
// full read from the object's start gives, on every vector.
func TestParseLeadIsTheFullRead(t *testing.T) {
	vs, err := vectors.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range vs {
		text, err := v.Text()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := vTypeLast(text); ok {
			n++
		}
		sameParse(t, text)
	}
	if n < 100 {
		t.Fatalf("only %d vectors compared", n)
	}
	// v or type again after the lead, values the header does not take.
	kv := `"requestId":"k1","instanceId":"i1","op":"kvGet","key":"prefs"`
	for _, text := range []string{
		`{"v":1,"type":"snug:db-request",` + kv + `}`,
		`{"type":"snug:db-request","v":1,` + kv + `}`,
		`{"v":1,"type":"snug:db-request",` + kv + `,"type":"snug:db-request"}`,
		`{"v":1,"type":"snug:db-request",` + kv + `,"v":1}`,
		`{"v":1,"type":"snug:db-request","type":"snug:db-request",` + kv + `}`,
		`{"v":1.0,"type":"snug:db-request",` + kv + `}`,
		`{"v":1,"type":"snug:db\u002drequest",` + kv + `}`,
		`{"v":2,"type":"snug:db-request",` + kv + `}`,
		`{"v":1,"type":"snug:nothing",` + kv + `}`,
		`{"v":1,"type":"snug:db-request",` + kv + `,}`,
		`{"v":1,"type":"snug:db-request"` + kv + `}`,
	} {
		sameParse(t, []byte(text))
	}
}
