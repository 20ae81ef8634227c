package frame

import (
	"errors"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/snuggen/snuggen/internal/jsonscan"
)

// headerNames mixes the names the header refinements' fast paths must read
// exactly as jsonscan.LowerJS does: credential names in any case, the
// Kelvin sign, dotted capital I, long s, Greek sigma, and names that repeat
// each other case-insensitively.
var headerNames = []string{
	"Accept", "accept", "ACCEPT", "Content-Type", "content-type", "X-Request-Id", "x-request-id",
	"Authorization", "authorization", "AUTHORIZATION", "Cookie", "COOKIE", "Set-Cookie", "set-cookiE",
	"Proxy-Authorization", "x-api-key", "X-Api-Key", "X-API-\u212AEY", "author\u0130zation", "\u017Fet-cookie",
	"x-\u017F", "x-s", "x-S", "x-ΑΣ", "x-ας", "x-k", "x-K", "x-\u212A", "cookie ", "x-api-ke",
}

// TestHeaderRefinementsMatchLowerJS checks net-request's credential and
// duplicate-name verdicts, which the generated check decides on ASCII fast
// paths (a length switch, FoldMark bits), against the rules read directly:
// LowerJS of each key in STRIP_HEADERS, LowerJS of two keys equal.
func TestHeaderRefinementsMatchLowerJS(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 7))
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
	randomName := func() string {
		b := make([]byte, 1+rng.IntN(20))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for trial := range 4000 {
		h := map[string]string{}
		for range rng.IntN(24) {
			if rng.IntN(2) == 0 {
				h[headerNames[rng.IntN(len(headerNames))]] = "v"
			} else {
				h[randomName()] = "v"
			}
		}
		var want []string
		for k := range h {
			if slices.Contains(StripHeaders, jsonscan.LowerJS(k)) {
				want = append(want, "/headers/"+k+" "+RuleNetHeaderCredential)
			}
			for j := range h {
				if j != k && jsonscan.LowerJS(j) == jsonscan.LowerJS(k) {
					want = append(want, "/headers/"+k+" "+RuleNetHeaderDuplicate)
					break
				}
			}
		}
		f := &NetRequest{RequestID: "r1", InstanceID: "i1", URL: "https://api.example.com/", Method: "GET", Headers: h}
		var got []string
		if err := f.Validate(); err != nil {
			var re *RejectError
			if !errors.As(err, &re) {
				t.Fatalf("Validate: %v", err)
			}
			for _, v := range re.Violations {
				got = append(got, v.Path+" "+v.Rule)
			}
		}
		sort.Strings(want)
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d, headers %q:\n got %q\nwant %q", trial, slices.Sorted(func(yield func(string) bool) {
				for k := range h {
					if !yield(k) {
						return
					}
				}
			}), got, want)
		}
	}
}

// A valid net-request does not allocate however many headers it carries.
func TestValidateManyHeadersDoesNotAllocate(t *testing.T) {
	h := map[string]string{}
	for _, k := range []string{"Accept", "Content-Type", "X-Request-Id", "User-Agent", "Cache-Control", "If-None-Match", "X-Trace", "Accept-Language"} {
		h[k] = "v"
	}
	f := &NetRequest{RequestID: "r1", InstanceID: "i1", URL: "https://api.example.com/", Method: "GET", Headers: h}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = f.Validate() }); n != 0 {
		t.Errorf("Validate allocates %v times on a valid net-request with %d headers", n, len(h))
	}
}
