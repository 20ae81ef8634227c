package frame

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

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
