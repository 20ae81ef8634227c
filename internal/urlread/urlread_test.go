package urlread

import (
	"math/rand"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// RFC 3492 §7.1's samples, and labels seen on the web.
func TestPunycodeDecode(t *testing.T) {
	for in, want := range map[string]string{
		"egbpdaj6bu4bxfgehfvwxn":         "ليهمابتكلموشعربي؟",      // (A) Arabic (Egyptian)
		"ihqwcrb4cv8a8dqg056pqjye":       "他们为什么不说中文",              // (B) Chinese (simplified)
		"Proprostnemluvesky-uyb24dma41a": "Pročprostěnemluvíčesky", // (D) Czech, mixed case
		"mnchen-3ya":                     "münchen",
		"ls8h":                           "💩",
		"a":                              "\u0080",
		"":                               "",
		"ab-":                            "ab",
	} {
		got, ok := PunycodeDecode(in)
		if !ok || string(got) != want {
			t.Errorf("PunycodeDecode(%q) = %q, %v; want %q", in, string(got), ok, want)
		}
	}
	for _, in := range []string{"-", "-abc", "zz", "0", "a_b", "99999999999a", "ü-a", "9999999999"} {
		if got, ok := PunycodeDecode(in); ok {
			t.Errorf("PunycodeDecode(%q) = %q, want a failure", in, string(got))
		}
	}
}

// The decoder agrees with golang.org/x/net/idna's Punycode on random labels
// made of Punycode's alphabet: both decode to the same text or both fail.
func TestPunycodeDecodeMatchesIDNA(t *testing.T) {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789-"
	r := rand.New(rand.NewSource(1))
	decoded := 0
	for i := 0; i < 20000; i++ {
		b := make([]byte, 1+r.Intn(12))
		for j := range b {
			b[j] = alphabet[r.Intn(len(alphabet))]
		}
		in := string(b)
		got, ok := PunycodeDecode(in)
		want, err := idna.Punycode.ToUnicode("xn--" + in)
		// idna refuses a label that ends in '-' or decodes to nothing on its
		// own terms, and lets surrogates through where this decoder refuses
		// them (no Unicode scalar value); compare where it decoded to text.
		if err != nil || strings.HasPrefix(want, "xn--") || strings.ContainsRune(want, utf8.RuneError) {
			continue
		}
		if !ok || string(got) != want {
			t.Fatalf("PunycodeDecode(%q) = %q, %v; idna gives %q", in, string(got), ok, want)
		}
		decoded++
	}
	if decoded < 1000 {
		t.Fatalf("only %d random labels decoded", decoded)
	}
}

func TestACELabel(t *testing.T) {
	for label, want := range map[string]bool{
		"xn--mnchen-3ya": true,  // münchen
		"xn--ls8h":       true,  // 💩
		"xn--mgbh0fb":    true,  // مثال
		"xn--9dbne9b":    true,  // שלום
		"xn--mgbh0fb9b":  true,  // مَثال, a mark inside
		"xn--r8jz45g":    true,  // 例え
		"xn--a-pfa":      true,  // ßa
		"xn--":           false, // nothing
		"xn--a":          false, // U+0080, a control
		"xn--ab-":        false, // ASCII only
		"xn--wca":        false, // Ü: upper case, UTS 46 maps it
		"xn--a-wbb":      false, // a mark first
		"xn--ab-m1t":     false, // a ZWJ
		"xn--ux-uub":     false, // not NFC
		"xn--mi7cc":      false, // full-width, NFKC maps it
		"xn--a-ecp":      false, // ⒈
		"xn--a-zhc":      false, // Hebrew and Latin
		"xn--1-ymcl5hc":  false, // Arabic with a digit: refused, not vouched for
		"mnchen":         false, // no prefix
	} {
		if got := ACELabelOK(label); got != want {
			t.Errorf("ACELabelOK(%q) = %v, want %v", label, got, want)
		}
	}
}

// Every list entry names a table Go has (a missing one would be a nil table).
func TestACETables(t *testing.T) {
	for _, c := range ACECategories {
		if unicode.Categories[c] == nil {
			t.Errorf("category %s is not in Go's unicode tables", c)
		}
	}
	for _, s := range RTLScripts {
		if unicode.Scripts[s] == nil {
			t.Errorf("script %s is not in Go's unicode tables", s)
		}
	}
}

func TestCheckHostLabels(t *testing.T) {
	for u, want := range map[string]Result{
		"https://xn--/":                  Host,
		"https://xn--a.com/":             Host,
		"https://XN--MNCHEN-3YA.de/":     OK,
		"https://a.xn--mnchen-3ya.de:1/": OK,
		"https://xn--mnchen-3ya.de./":    OK,
		"https://xn-a.example/":          OK,
	} {
		if got := Check(u); got != want {
			t.Errorf("Check(%q) = %v, want %v", u, got, want)
		}
	}
}
