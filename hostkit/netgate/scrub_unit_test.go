package netgate

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestASCIIEntitiesAgreeWithHTML: every name the scrub reads leniently is an
// HTML name (in its canonical case) for the text the table says, and the
// table has no name this list lacks.
func TestASCIIEntitiesAgreeWithHTML(t *testing.T) {
	canonical := []string{"Tab", "NewLine", "excl", "quot", "num", "dollar", "percnt", "amp", "apos", "lpar", "rpar",
		"ast", "midast", "plus", "comma", "period", "sol", "colon", "semi", "lt", "equals", "gt", "quest", "commat",
		"lsqb", "lbrack", "bsol", "rsqb", "rbrack", "Hat", "lowbar", "UnderBar", "grave", "DiacriticalGrave", "lcub",
		"lbrace", "verbar", "vert", "VerticalLine", "rcub", "rbrace", "fjlig", "nbsp"}
	if len(canonical) != len(asciiEntities()) {
		t.Fatalf("%d names here, %d in the table", len(canonical), len(asciiEntities()))
	}
	for _, n := range canonical {
		want, ok := asciiEntities()[strings.ToLower(n)]
		if !ok {
			t.Fatalf("%s is not in the table", n)
		}
		if got := html.UnescapeString("&" + n + ";"); got != want {
			t.Errorf("&%s; is %q to package html, %q to the table", n, got, want)
		}
		if len(n) > longestASCIIEntity {
			t.Errorf("%s is longer than longestASCIIEntity", n)
		}
	}
}

// TestScrubRandomSpellings: random secrets, each character spelled a random
// way, inside random text, at random offsets of a base64 or hex encoding:
// the scrub finds every one and leaves nothing it would find again.
func TestScrubRandomSpellings(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 7))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:~"
	forms := []string{"%c", "\\u%04x", "\\u%04X", "&#%d;", "&#%d", "&#x%x;", "&#X%X", "%%%02x", "%%%02X", "\\x%02x", "%%u%04x"}
	names := map[byte]string{'/': "&sol;", '+': "&plus", '=': "&EQUALS;", '.': "&period;", ':': "&colon", '_': "&lowbar;", '-': "-"}
	filler := func(n int) string {
		var b strings.Builder
		for range n {
			const pool = " abcdefxyz{}\":,[]\n&%\\<>/"
			b.WriteByte(pool[rng.IntN(len(pool))])
		}
		return b.String()
	}
	for i := 0; i < 400; i++ {
		secret := make([]byte, 8+rng.IntN(32))
		for j := range secret {
			secret[j] = alphabet[rng.IntN(len(alphabet))]
		}
		sc := newScrubber([]string{string(secret)})
		var enc string
		switch i % 4 {
		case 0, 1: // every character its own way
			var b strings.Builder
			for _, c := range secret {
				if n, ok := names[c]; ok && rng.IntN(2) == 0 {
					b.WriteString(n)
					continue
				}
				f := forms[rng.IntN(len(forms))]
				b.WriteString(fmt.Sprintf(f, rune(c)))
			}
			enc = b.String()
		case 2: // base64 of a longer text holding it, at any offset
			pre := strings.Repeat("x", rng.IntN(7))
			e := base64.StdEncoding
			if rng.IntN(2) == 0 {
				e = base64.RawURLEncoding
			}
			enc = e.EncodeToString([]byte(pre + string(secret) + filler(rng.IntN(4))))
		case 3: // hex, either case, inside JSON escapes
			enc = strings.ReplaceAll(spaced(strings.ToUpper(string(bytesHex(secret))), 2+2*rng.IntN(2)), " ", "")
		}
		body := []byte(filler(rng.IntN(40)) + enc + filler(rng.IntN(40)))
		if !sc.found(body) {
			t.Fatalf("secret %q spelled %q not found", secret, enc)
		}
		out, changed := sc.scrub(body)
		if !changed || sc.found(out) || !bytes.Contains(out, []byte(redacted)) {
			t.Fatalf("secret %q spelled %q: scrubbed to %q", secret, enc, out)
		}
	}
}

func bytesHex(b []byte) []byte {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return out
}

// TestScrubLeavesOrdinaryTextAlone: answers with escapes, entities, base64
// and hex that hold no secret come back byte for byte.
func TestScrubLeavesOrdinaryTextAlone(t *testing.T) {
	sc := newScrubber([]string{issueSecret, "ghp_16C7e42F292c6912E7710c838347Ae178B4a"})
	for _, body := range []string{
		`{"url":"https:\/\/example.com\/a?b=1&amp;c=2","name":"caf\u00e9 &eacute; &#233; %C3%A9"}`,
		`<p>Tom &amp; Jerry &lt;3 &copy 2024 &notin; &ampxyz; &#x1F600; &#0; &#xZZ;</p>`,
		base64.StdEncoding.EncodeToString([]byte("Authorization: Bearer sk-live/AbC+123=xyz/SECRE_")),
		`\u{1F600} \x41 \101 \q \ %u0041 %zz & &; &#; ＳＫ－ＬＩＶＥ`,
		strings.Repeat("a", 10000),
	} {
		out, changed := sc.scrub([]byte(body))
		if changed || string(out) != body {
			t.Errorf("changed %q to %q", body, out)
		}
	}
}

// FuzzScrub: for any answer, the scrub ends with nothing it would find, is
// stable when run again, and never panics; cutPartial only shortens.
func FuzzScrub(f *testing.F) {
	for _, enc := range echoEncodings {
		f.Add([]byte("x" + enc("Bearer "+issueSecret, issueSecret) + "y"))
	}
	f.Add([]byte(`&#x73&#107\u002d%6c\x69ve\/AbC&plus;123&equals;xyz&sol;SECRET`))
	sc := newScrubber([]string{issueSecret})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, _ := sc.scrub(b)
		if sc.found(out) {
			t.Fatalf("scrubbed %q to %q, which still holds the secret", b, out)
		}
		if again, changed := sc.scrub(out); changed && sc.found(again) {
			t.Fatalf("not stable: %q", out)
		}
		if cut := sc.cutPartial(out); len(cut) > len(out) || !bytes.HasPrefix(out, cut) {
			t.Fatalf("cutPartial grew or changed %q to %q", out, cut)
		}
	})
}
