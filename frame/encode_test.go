package frame

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/jsonscan"
)

// hostileStrings are strings a host's frame may carry from outside (an
// app's key, an agent's text, a SQLite message): escapes, HTML, invalid
// UTF-8, line and paragraph separators, control bytes, long runs.
var hostileStrings = []string{
	"", "k1", "prefs", "a\"b\\c", "</script><!--&amp;", "line\u2028para\u2029end",
	"bad \xff\xfe utf-8", "\xed\xa0\x80 surrogate bytes", "nul\x00 bell\a bs\b ff\f tab\t nl\n cr\r del\x7f esc\x1b",
	"é 😀 \U000e0001", strings.Repeat("x", 128), strings.Repeat("é", 129), strings.Repeat("<", 1001),
	"HOST_ERROR", "DB_RESULT_TOO_LARGE", "sqlite3", "light", "dark", "resize", "visible",
	"opened", "declined", "refused", "saved", "visibility", "theme-change", "en",
}

// hostileValues are raw JSON values as a SQLite row may hold them (the kv
// table's CHECK uses SQLite's json_valid, and an imported file is checked
// by the host's own reading): whitespace, escapes, lone surrogate escapes,
// invalid UTF-8 inside a string, a key twice, HTML, U+2028, deep nesting
// at and past the decoder's limit, values that are not JSON at all.
var hostileValues = []string{
	`null`, `true`, `0`, `-1.5e3`, `"s"`, `{}`, `[]`, `{"theme":"dark","size":14,"recent":["a","b","c"]}`,
	" { \"a\" : [ 1 , 2 ] ,\n\t\"b\" : \"x y\" } ", `"\ud800"`, `{"k":"\udc00\ud800"}`, `"\u2028"`,
	"\"raw \u2028 and \u2029\"", "\"bad \xff\"", `{"a":1,"a":2}`, `[{"x":1},{"x":1,"x":1}]`,
	`"</script>&"`, `{"<":">"}`, `"\\\"\/\b\f\n\r\t\u0000"`, `[1,2`, `{"a"}`, `nul`, `"\x01"`, `01`,
	`1e400`, `{"a":1} x`, "\"tab\there\"", `"é😀"`,
	strings.Repeat("[", 9997) + strings.Repeat("]", 9997),
	strings.Repeat("[", 9998) + strings.Repeat("]", 9998),
	strings.Repeat("[", 9999) + strings.Repeat("]", 9999),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
	`"` + strings.Repeat("y", 1<<20) + `"`,
}

// hostFrames are the host→app frame types Encode writes.
func hostFrames() []reflect.Type {
	var ts []reflect.Type
	for _, f := range []Frame{&HostReady{}, &AppResponse{}, &DBResponse{}, &NetResponse{}, &OpenURLResult{}, &SaveFileResult{}, &HostEvent{}} {
		ts = append(ts, reflect.TypeOf(f).Elem())
	}
	return ts
}

// fill sets v, of a generated struct type, to random values: each optional
// field present or not, strings from hostileStrings, raw values from
// hostileValues, integers around zero.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(r, v.Field(i), depth+1)
		}
	case reflect.String:
		v.SetString(hostileStrings[r.IntN(len(hostileStrings))])
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int:
		v.SetInt(int64(r.IntN(2001) - 1000))
	case reflect.Float64:
		v.SetFloat(r.NormFloat64() * 1e6)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage{}) {
			if r.IntN(4) != 0 {
				v.SetBytes([]byte(hostileValues[r.IntN(len(hostileValues))]))
			}
			return
		}
		if r.IntN(3) == 0 || depth > 6 {
			return
		}
		n := r.IntN(4)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.Map:
		if r.IntN(3) == 0 {
			return
		}
		m := reflect.MakeMap(v.Type())
		for range r.IntN(4) {
			k := reflect.New(v.Type().Key()).Elem()
			fill(r, k, depth+1)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(r, e, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Interface:
		switch r.IntN(5) {
		case 0:
			v.Set(reflect.ValueOf(hostileStrings[r.IntN(len(hostileStrings))]))
		case 1:
			v.Set(reflect.ValueOf(r.Int64N(1<<62) - 1<<61))
		case 2:
			v.Set(reflect.ValueOf(r.NormFloat64()))
		case 3:
			v.Set(reflect.ValueOf(r.IntN(2) == 0))
		}
	}
}

// checkEncode holds Encode to its promise for one frame: when it is sure,
// its bytes are exactly Marshal's and Parse accepts them as a frame that
// means f; it reports whether Encode was sure.
func checkEncode(t *testing.T, f Frame) bool {
	t.Helper()
	raw, sure := Encode(f)
	if !sure {
		if raw != nil {
			t.Fatalf("Encode not sure but returned bytes: %s", clipped(raw))
		}
		return false
	}
	want, err := Marshal(f)
	if err != nil {
		t.Fatalf("Encode sure of a frame Marshal cannot write (%v): %s", err, clipped(raw))
	}
	if !bytes.Equal(raw, want) {
		t.Fatalf("Encode wrote\n%s\nMarshal writes\n%s", clipped(raw), clipped(want))
	}
	if len(raw) > SizeClass(f.FrameType()) {
		// Encode leaves the size class to its caller; Parse refuses it.
		if _, err := Parse(raw); err == nil {
			t.Fatalf("Parse accepted a frame of %d bytes, over its class", len(raw))
		}
		return true
	}
	back, err := Parse(raw)
	if err != nil {
		t.Fatalf("Encode sure of a frame Parse refuses: %v\n%s", err, clipped(raw))
	}
	again, err := Marshal(back)
	if err != nil || !sameMeaning(again, raw) {
		t.Fatalf("the parsed frame means something else (%v):\n%s\n%s", err, clipped(again), clipped(raw))
	}
	return true
}

// sameMeaning reports whether two JSON texts read as the same value
// (numbers compared as written).
func sameMeaning(x, y []byte) bool {
	read := func(b []byte) (any, bool) {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		var v any
		return v, d.Decode(&v) == nil
	}
	a, ok1 := read(x)
	b, ok2 := read(y)
	return ok1 && ok2 && reflect.DeepEqual(a, b)
}

func clipped(b []byte) string {
	if len(b) > 400 {
		return string(b[:400]) + "…"
	}
	return string(b)
}

// TestEncodeIsMarshal: for random host→app frames of every type, filled
// with hostile strings and raw values, Encode's bytes when it is sure are
// Marshal's and parse back (checkEncode); and a kvGet answer, an error
// answer and a final agent answer that Marshal writes and Parse accepts are
// ones Encode is sure of (the fast path is not given up for them).
func TestEncodeIsMarshal(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 3))
	sure := map[string]int{}
	for _, typ := range hostFrames() {
		for range 1000 {
			v := reflect.New(typ)
			fill(r, v.Elem(), 0)
			f := v.Interface().(Frame)
			if checkEncode(t, f) {
				sure[f.FrameType()]++
			}
		}
	}
	for _, typ := range hostFrames() {
		name := reflect.New(typ).Interface().(Frame).FrameType()
		if sure[name] == 0 && name != TypeNetResponse {
			t.Errorf("Encode was sure of no random %s", name)
		}
	}
	t.Logf("sure of: %v", sure)
	for i, rid := range hostileStrings {
		for j, value := range hostileValues {
			if len(value) > 4096 && (i+j)%8 != 0 {
				continue // the long values with some of the ids
			}
			for _, found := range []bool{true, false} {
				kv := &DBResponse{RequestID: rid, OK: true, Result: &DBResult{Found: &found, Value: json.RawMessage(value)}}
				errAnswer := &DBResponse{RequestID: rid, OK: false, Error: NewError(CodeDBResultTooLarge, value)}
				final := &AppResponse{RequestID: rid, OK: true, Data: json.RawMessage(value)}
				for _, f := range []Frame{kv, errAnswer, final} {
					got := checkEncode(t, f)
					m, err := Marshal(f)
					valid := err == nil && len(m) <= SizeClass(f.FrameType())
					if valid {
						_, perr := Parse(m)
						valid = perr == nil
					}
					if valid && !got {
						t.Fatalf("Encode not sure of a valid frame: %s", clipped(m))
					}
				}
			}
		}
	}
}

// TestEncodeAtTheSizeClass: a kv value that makes the answer exactly its
// size class is written whole and parses; one byte more is still Marshal's
// bytes, which Parse refuses by size (the caller's check, Session.send,
// answers DB_RESULT_TOO_LARGE instead).
func TestEncodeAtTheSizeClass(t *testing.T) {
	limit := SizeClass(TypeDBResponse)
	found := true
	empty := &DBResponse{RequestID: "r", OK: true, Result: &DBResult{Found: &found, Value: json.RawMessage(`""`)}}
	base, _ := Encode(empty)
	for _, extra := range []int{0, 1} {
		value := `"` + strings.Repeat("é", (limit-len(base)+extra)/2) + strings.Repeat("v", (limit-len(base)+extra)%2) + `"`
		f := &DBResponse{RequestID: "r", OK: true, Result: &DBResult{Found: &found, Value: json.RawMessage(value)}}
		raw, sure := Encode(f)
		if !sure || len(raw) != limit+extra {
			t.Fatalf("extra %d: sure %v, %d bytes, want %d", extra, sure, len(raw), limit+extra)
		}
		checkEncode(t, f)
	}
}

// FuzzEncode: Encode of a kvGet answer, an error answer and a final agent
// answer built from arbitrary strings and raw bytes keeps checkEncode's
// promise. Its seeds (run by go test) are the hostile strings and values.
func FuzzEncode(f *testing.F) {
	for i, s := range hostileStrings {
		v := hostileValues[i%len(hostileValues)]
		if len(v) < 4096 {
			f.Add(s, []byte(v), i%2 == 0)
		}
	}
	f.Fuzz(func(t *testing.T, s string, value []byte, found bool) {
		for _, fr := range []Frame{
			&DBResponse{RequestID: s, OK: true, Result: &DBResult{Found: &found, Value: value}},
			&DBResponse{RequestID: "r", OK: false, Error: NewError(CodeHostError, s)},
			&AppResponse{RequestID: "r", OK: true, Data: value},
			&DBResponse{RequestID: "r", OK: true, Result: &DBResult{Columns: []string{s}}},
		} {
			checkEncode(t, fr)
		}
	})
}

// TestRawDepthIsTheFrames: a raw value is checked at its depth in the
// frame, so Encode refuses (leaves to Parse) exactly the nesting Parse
// refuses there.
func TestRawDepthIsTheFrames(t *testing.T) {
	for n := jsonscan.MaxDepth - 4; n <= jsonscan.MaxDepth; n++ {
		value := strings.Repeat("[", n) + strings.Repeat("]", n)
		f := &DBResponse{RequestID: "r", OK: true, Result: &DBResult{Value: json.RawMessage(value)}}
		_, sure := Encode(f)
		m, _ := Marshal(f)
		_, err := Parse(m)
		if sure != (err == nil) {
			t.Fatalf("nesting %d: Encode sure %v, Parse error %v", n, sure, err)
		}
	}
}
