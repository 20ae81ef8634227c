package jsonscan

import "testing"

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
