package jsonscan

import (
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/ascii"
)

// The expected values are what String.prototype.toLowerCase returns (node 22).
func TestLowerJS(t *testing.T) {
	cases := map[string]string{
		"x-api-key":          "x-api-key",
		"X-Api-Key":          "x-api-key",
		"X-API-\u212AEY":     "x-api-key",       // Kelvin sign
		"\u017Fet-cookie":    "\u017Fet-cookie", // long s stays (EqualFold would call it s)
		"author\u0130zation": "authori\u0307zation",
		"ΑΣ":                 "ας",
		"ΑΣ.":                "ας.",
		"ΑΣ\u0301":           "ας\u0301",
		"ΑΣΑ":                "ασα",
		"Σ":                  "σ",
		"Α.Σ":                "α.ς",
		"ΣΣ":                 "σς",
		"aΣ b":               "aς b",
		"ÅK":                 "åk",
	}
	for in, want := range cases {
		if got := LowerJS(in); got != want {
			t.Errorf("LowerJS(%q) = %q, want %q", in, got, want)
		}
	}
	list := []string{"authorization", "x-api-key"}
	for in, want := range map[string]bool{"Authorization": true, "X-API-\u212AEY": true, "author\u0130zation": false, "authorization ": false, "": false, "x-api-ke": false} {
		if got := InLowerJS(list, in); got != want {
			t.Errorf("InLowerJS(%q) = %v, want %v", in, got, want)
		}
	}
	for _, c := range []struct {
		a, b string
		want bool
	}{{"X-A", "x-a", true}, {"x-\u212A", "x-k", true}, {"x-\u017F", "x-s", false}, {"x-ΑΣ", "x-ας", true}, {"x-ΑΣΑ", "x-αςα", false}, {"ab", "abc", false}} {
		if got := EqualLowerJS(c.a, c.b); got != c.want {
			t.Errorf("EqualLowerJS(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { InLowerJS(list, "X-Api-Key"); EqualLowerJS("X-A", "x-a"); LowerJS("x-a") }); n != 0 {
		t.Errorf("ASCII path allocates %v times", n)
	}
}

// IsASCII reads eight and four bytes at a time: a non-ASCII byte at every
// position of every length up to 24 must still be seen.
func TestIsASCII(t *testing.T) {
	for n := 0; n <= 24; n++ {
		b := []byte(strings.Repeat("a", n))
		if !IsASCII(string(b)) {
			t.Fatalf("IsASCII(%q) = false", b)
		}
		for i := 0; i < n; i++ {
			for _, c := range []byte{0x80, 0xC3, 0xFF} {
				b2 := append([]byte(nil), b...)
				b2[i] = c
				if IsASCII(string(b2)) {
					t.Errorf("IsASCII(%q) = true, byte %#x at %d of %d", b2, c, i, n)
				}
			}
		}
	}
}

// Two ASCII strings equal ignoring case have one mark, whatever their case;
// ascii.EqualFold agrees with EqualLowerJS on ASCII.
func TestFoldMarkAndEqualFoldASCII(t *testing.T) {
	names := []string{"", "a", "A", "x-api-key", "X-Api-Key", "Content-Type", "content-type", "X-Request-Id", "Accept", "ACCEPT", "x-a", "x-b", "set-cookie", "Set-Cookie!"}
	for _, a := range names {
		if m := FoldMark(a); m == 0 || m&(m-1) != 0 {
			t.Errorf("FoldMark(%q) = %#x, want one bit", a, m)
		}
		for _, b := range names {
			eq := ascii.EqualFold(a, b)
			if eq != EqualLowerJS(a, b) {
				t.Errorf("ascii.EqualFold(%q, %q) = %v, EqualLowerJS says otherwise", a, b, eq)
			}
			if eq && FoldMark(a) != FoldMark(b) {
				t.Errorf("FoldMark(%q) != FoldMark(%q) although they fold equal", a, b)
			}
		}
	}
	if n := testing.AllocsPerRun(100, func() {
		_, _, _ = IsASCII("X-Request-Id"), FoldMark("X-Request-Id"), ascii.EqualFold("Accept", "accept")
	}); n != 0 {
		t.Errorf("ASCII helpers allocate %v times", n)
	}
}
