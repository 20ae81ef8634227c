package jsonscan

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"
)

func TestDuplicateKeys(t *testing.T) {
	many := func(n int, dupAt int) string {
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, fmt.Sprintf(`"k%d":%d`, i, i))
		}
		if dupAt >= 0 {
			parts = append(parts, fmt.Sprintf(`"k%d":0`, dupAt))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	cases := []struct {
		in         string
		dup, valid bool
	}{
		{`{"a":1,"b":{"a":2}}`, false, true},
		{`{"a":1,"a":2}`, true, true},
		{`{"a":[{"x":1,"x":1}]}`, true, true},
		{`{"\u0061":1,"a":2}`, true, true},
		{`{"a":1,"a":2`, false, false},
		{many(30, -1), false, true},
		{many(30, 3), true, true},
		{many(30, 25), true, true},
		{`[1,2,{"z":0}] `, false, true},
		{`{"a":1} x`, false, false},
	}
	for _, c := range cases {
		dup, valid := DuplicateKeys(c.in)
		if dup != c.dup || valid != c.valid {
			t.Errorf("DuplicateKeys(%.40q) = %v, %v; want %v, %v", c.in, dup, valid, c.dup, c.valid)
		}
	}
}

// TestSkipAgreesWithEncodingJSON checks the scanner accepts exactly the
// texts encoding/json accepts, on a set of tricky inputs.
func TestSkipAgreesWithEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`0`, `-0`, `01`, `1.`, `.5`, `1e`, `1e+5`, `-`, `"\u00e9"`, `"\ud83d\ude00"`, `"\x"`, "\"\t\"",
		`[1,]`, `[,1]`, `{"a" 1}`, `{"a":1,}`, `{,}`, `{}`, `[]`, `tru`, `true`, `nul`, `null`, ` [ 1 , 2 ] `, `{"a":{"b":[true,false,null]}}`,
		`"` + strings.Repeat(`\\`, 3) + `"`, `"\/"`, `1.5E-3`,
	} {
		var d Decoder
		d.Reset(in)
		_, ok := d.Skip()
		ok = ok && d.End()
		if want := json.Valid([]byte(in)); ok != want {
			t.Errorf("%q: scanner valid=%v, encoding/json valid=%v", in, ok, want)
		}
	}
}

// TestInvalidUTF8 is a deliberate departure from encoding/json, which
// replaces invalid bytes: a JSON text is UTF-8 (RFC 8259), so one that is not
// has no single reading and is refused.
func TestInvalidUTF8(t *testing.T) {
	var d Decoder
	d.Reset(`"a` + "\xff" + `"`)
	if _, ok := d.Skip(); ok {
		t.Error("invalid UTF-8 in a string accepted")
	}
}

func TestLengthsCountCodePoints(t *testing.T) {
	e := strings.Repeat("😀", 8)
	if !LenAtMost(e, 8) || LenAtMost(e+"a", 8) || !LenAtLeast(e, 8) || LenAtLeast("😀", 2) {
		t.Error("code-point lengths")
	}
}

func TestParseInt(t *testing.T) {
	for in, want := range map[string]struct {
		v  int64
		ok bool
	}{
		"1": {1, true}, "1.0": {1, true}, "1e2": {100, true}, "1.5": {0, false}, "-0": {0, true}, "15e-1": {0, false},
		"1e30": {1<<63 - 1, true}, "-1e30": {-1 << 63, true},
		// Past double precision: JSON.parse reads the nearest double.
		"1.0000000000000001":   {1, true},
		"200.00000000000001":   {200, true},
		"9007199254740993":     {9007199254740992, true},
		"0.99999999999999999":  {1, true},
		"1e400":                {0, false},
		"-1e400":               {0, false},
		"1e-400":               {0, true},
		"5e-324":               {0, false},
		"4503599627370495.5":   {0, false},
		"4503599627370496.5":   {4503599627370496, true},
		"9223372036854775807":  {1<<63 - 1, true},
		"-9223372036854775808": {-1 << 63, true},
	} {
		v, ok := ParseInt(in)
		if v != want.v || ok != want.ok {
			t.Errorf("ParseInt(%s) = %d, %v; want %d, %v", in, v, ok, want.v, want.ok)
		}
	}
}

// TestParseIntAgainstRat checks ParseInt against exact rational arithmetic
// rounded once to the nearest double (big.Rat.Float64, which shares no code
// with strconv.ParseFloat), on numerals built from the digits and exponents
// where mistakes hide: the reading JavaScript gives JSON.parse and
// Number.isInteger.
func TestParseIntAgainstRat(t *testing.T) {
	ints := []string{"0", "1", "9", "10", "100", "12", "00", "9223372036854775807", "9223372036854775808", "18446744073709551616", "922337203685477580",
		"9007199254740993", "9007199254740991", "4503599627370495", "123456789012345678901234567890"}
	fracs := []string{"", ".0", ".00", ".5", ".05", ".50", ".000001", ".1234", ".0000000000000001", ".99999999999999999", ".4999999999999999999"}
	exps := []string{"", "e0", "e1", "E+2", "e-1", "e-2", "e18", "e19", "e20", "e-20", "e+0", "e308", "e309", "e-324", "e-400", "e400"}
	for _, sign := range []string{"", "-"} {
		for _, i := range ints {
			for _, f := range fracs {
				for _, e := range exps {
					in := sign + i + f + e
					if !json.Valid([]byte(in)) {
						continue
					}
					r, _ := new(big.Rat).SetString(in)
					x, _ := r.Float64()
					want, wantOK := int64(0), !math.IsInf(x, 0) && x == math.Trunc(x)
					if wantOK {
						switch {
						case x >= 0x1p63:
							want = math.MaxInt64
						case x < -0x1p63:
							want = math.MinInt64
						default:
							want = int64(x)
						}
					}
					if v, ok := ParseInt(in); v != want || ok != wantOK {
						t.Errorf("ParseInt(%s) = %d, %v; want %d, %v", in, v, ok, want, wantOK)
					}
				}
			}
		}
	}
	// Numerals an app could send to make a reader do big-number work, with
	// the double JSON.parse reads.
	huge := map[string]struct {
		v  int64
		ok bool
	}{
		"1." + strings.Repeat("0", 1<<20):               {1, true},
		"1." + strings.Repeat("0", 1<<20) + "1":         {1, true},
		"1.5" + strings.Repeat("0", 1<<20) + "1":        {0, false},
		"1e999999999999999999999":                       {0, false},
		"-1e999999999999999999999":                      {0, false},
		"1e-999999999999999999999":                      {0, true},
		"0e-999999999999999999999":                      {0, true},
		"0e999999999999999999999":                       {0, true},
		strings.Repeat("9", 1<<20) + "e-1048575":        {10, true},
		strings.Repeat("9", 1<<20) + "e-1048560":        {1e16, true},
		"0." + strings.Repeat("0", 1<<20) + "1e1048577": {1, true},
	}
	for in, want := range huge {
		if v, ok := ParseInt(in); ok != want.ok || (ok && v != want.v) {
			t.Errorf("ParseInt(%.20s… %d bytes) = %d, %v; want %d, %v", in, len(in), v, ok, want.v, want.ok)
		}
	}
}

func BenchmarkParseIntHuge(b *testing.B) {
	in := "1." + strings.Repeat("0", 1<<21)
	for b.Loop() {
		ParseInt(in)
	}
}

// TestStrFastPathIsTheByteLoop: the word-at-a-time scan of a string finds
// the same end, value and error as the byte loop (slowStr) for every byte
// that ends a plain run, at every position of the eight-byte words and of
// the last bytes of the text, read one by one.
func TestStrFastPathIsTheByteLoop(t *testing.T) {
	specials := []string{`"`, `\n`, `\"`, `\\`, `\u00e9`, "\x00", "\x1f", "\x7f", " ", "~", "é", "\xff", "\u2028", `\ud800`}
	for n := 0; n < 48; n++ {
		for _, sp := range specials {
			for _, tail := range []string{`"`, `xyz"`, ``, `abcdefghijklmnop"`} {
				text := `"` + strings.Repeat("a", n) + sp + tail
				var fast, ref Decoder
				fast.Reset(text)
				got, gotOK := fast.String()
				ref.Reset(text)
				want, wantOK := ref.slowStr(1)
				if got != want || gotOK != wantOK || fast.i != ref.i || (fast.Err == nil) != (ref.Err == nil) {
					t.Fatalf("%q: fast (%q, %v, at %d, %v), byte loop (%q, %v, at %d, %v)", text, got, gotOK, fast.i, fast.Err, want, wantOK, ref.i, ref.Err)
				}
			}
		}
	}
}
