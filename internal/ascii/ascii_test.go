package ascii

import "testing"

func TestLower(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"preconnect":      "preconnect",
		"PreConnect":      "preconnect",
		"ÀB\u212aC":       "Àb\u212ac", // only ASCII letters change
		"Stylesheet\tX-Y": "stylesheet\tx-y",
	} {
		if got := Lower(in); got != want {
			t.Errorf("Lower(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEqualFold(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"Link", "link", true},
		{"link", "lin", false},
		{"\u212a", "k", false}, // the Kelvin sign is not a K here
		{"ǅ", "ǆ", false},
	} {
		if got := EqualFold(c.a, c.b); got != c.want {
			t.Errorf("EqualFold(%q, %q) = %v", c.a, c.b, got)
		}
	}
}

func TestLowerByte(t *testing.T) {
	for c := 0; c < 256; c++ {
		want := byte(c)
		if c >= 'A' && c <= 'Z' {
			want = byte(c) + 32
		}
		if got := LowerByte(byte(c)); got != want {
			t.Errorf("LowerByte(%#x) = %#x", c, got)
		}
	}
}
