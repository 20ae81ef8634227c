// Package urlread decides whether an https URL is read the same way by a
// WHATWG URL parser (what a browser opens) and a strict RFC 3986 parser (what
// a confirm dialog shows). It implements the algorithm rules.json states for
// the open-url refinement (schemas/rules.json, "openurl.url"); the rule ids
// and messages live there and reach callers through frame. It is a
// pure function over the string: no network. Of IDNA it checks only what the
// JS validator checks the same way: an xn-- label must be Punycode that
// decodes to a plausible label (ACELabelOK).
package urlread

import (
	"net/netip"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/snuggen/snuggen/internal/jsonscan"
)

// Result is the first check a URL fails, or OK.
type Result int

// Results, in the order the checks run.
const (
	OK       Result = iota
	Char            // a character outside RFC 3986's set, or one not allowed where it stands
	Scheme          // not the https:// authority form
	Userinfo        // @ in the authority
	Percent         // % not followed by two hex digits
	Host            // empty, %, [ ], a non-canonical numeric host, a bad IPv6 literal, a bad xn-- label
	Port            // not digits, or above 65535
)

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func isSubDelim(c byte) bool { return strings.IndexByte("!$&'()*+,;=", c) >= 0 }

func isRFC3986(c byte) bool {
	return isUnreserved(c) || isSubDelim(c) || strings.IndexByte(":/?#[]@%", c) >= 0
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Check runs the checks in order and returns the first that fails.
func Check(u string) Result {
	for i := 0; i < len(u); i++ {
		if !isRFC3986(u[i]) {
			return Char
		}
	}
	if len(u) < 8 || !strings.EqualFold(u[:8], "https://") {
		return Scheme
	}
	rest := u[8:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	auth, tail := rest[:end], rest[end:]
	if strings.IndexByte(auth, '@') >= 0 {
		return Userinfo
	}
	for i := 0; i < len(u); i++ {
		if u[i] == '%' && (i+2 >= len(u) || !isHex(u[i+1]) || !isHex(u[i+2])) {
			return Percent
		}
	}
	port, ok := hostPort(auth)
	if !ok {
		return Host
	}
	if !portOK(port) {
		return Port
	}
	if !tailOK(tail) {
		return Char
	}
	return OK
}

// hostPort checks the authority's host (an IPv6 literal without a zone,
// or a registered name or IPv4 address) and returns its port, "" when it
// has none.
func hostPort(auth string) (port string, ok bool) {
	if strings.HasPrefix(auth, "[") {
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return "", false
		}
		switch after := auth[j+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return "", false
		}
		inner := auth[1:j]
		if strings.Contains(inner, "%") {
			return "", false
		}
		a, err := netip.ParseAddr(inner)
		return port, err == nil && a.Is6() && a.Zone() == ""
	}
	host := auth
	if i := strings.LastIndexByte(auth, ':'); i >= 0 {
		host, port = auth[:i], auth[i+1:]
	}
	if host == "" {
		return "", false
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !isUnreserved(c) && !isSubDelim(c) {
			return "", false
		}
	}
	return port, numericHostOK(host) && aceLabelsOK(host)
}

// portOK reports whether port is empty or digits up to 65535.
func portOK(port string) bool {
	v := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return false
		}
		v = v*10 + int(c-'0')
		if v > 65535 {
			return false
		}
	}
	return true
}

// tailOK checks path-abempty, then ?query, then #fragment: pchar =
// unreserved / pct-encoded / sub-delims / ":" / "@"; query and fragment
// add "/" "?". No bracket, and one "#" at most.
func tailOK(tail string) bool {
	inFragment := false
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; c {
		case '[', ']':
			return false
		case '#':
			if inFragment {
				return false
			}
			inFragment = true
		}
	}
	return true
}

// numericHostOK applies the WHATWG "ends in a number" rule: when the last
// label (one trailing dot dropped) is all digits or starts with 0x, a WHATWG
// parser reads the host as an IPv4 address, so only the canonical
// dotted-decimal form reads the same in both.
func numericHostOK(host string) bool {
	h := strings.TrimSuffix(host, ".")
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return true
	}
	numeric := strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X")
	if !numeric {
		numeric = true
		for i := 0; i < len(last); i++ {
			if last[i] < '0' || last[i] > '9' {
				numeric = false
				break
			}
		}
	}
	if !numeric {
		return true
	}
	parts := strings.Split(h, ".")
	if len(parts) != 4 || h != host {
		return false
	}
	for _, p := range parts {
		if p == "" || len(p) > 3 || (len(p) > 1 && p[0] == '0') {
			return false
		}
		v := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return false
			}
			v = v*10 + int(p[i]-'0')
		}
		if v > 255 {
			return false
		}
	}
	return true
}

// aceLabelsOK applies ACELabelOK to every label of host that starts with
// xn-- (ASCII case-insensitively: a WHATWG parser lowercases the host
// first). A host without such a label costs no allocation.
func aceLabelsOK(host string) bool {
	for rest := host; rest != ""; {
		label := rest
		if i := strings.IndexByte(rest, '.'); i >= 0 {
			label, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") && !ACELabelOK(strings.ToLower(label)) {
			return false
		}
	}
	return true
}

// ACECategories and RTLScripts (tables.go) are generated from rules.json;
// the JS validator builds its patterns from the same lists.
// They are looked up on first use: nothing runs at init.
var labelTables = sync.OnceValues(func() (ace, rtl []*unicode.RangeTable) {
	for _, c := range ACECategories {
		ace = append(ace, unicode.Categories[c])
	}
	for _, s := range RTLScripts {
		rtl = append(rtl, unicode.Scripts[s])
	}
	return ace, rtl
})

// ACELabelOK reports whether a lower-case label that starts with xn-- reads
// the same to a WHATWG parser, whose UTS 46 processing decodes it and
// refuses the host when it does not decode to a valid label. The rule, the
// same in the JS validator: the rest is RFC 3492 Punycode that decodes; the
// result holds a non-ASCII code point and does not start with xn--; it is
// NFKC and lower case (so no code point UTS 46 would map); every code point
// is a hyphen or in ACECategories, and no mark comes first; a label with a
// code point of RTLScripts holds only their letters and marks and starts with
// such a letter. It is stricter than UTS 46 (it refuses joiners and mixed
// directions it cannot vouch for) and reads Unicode properties from Go's
// tables, as JS reads its engine's: the two differ only on code points
// assigned in between.
func ACELabelOK(label string) bool {
	aceTables, rtlTables := labelTables()
	if !strings.HasPrefix(label, "xn--") {
		return false
	}
	rs, ok := PunycodeDecode(label[4:])
	if !ok || len(rs) == 0 {
		return false
	}
	s := string(rs)
	if strings.HasPrefix(s, "xn--") || !norm.NFKC.IsNormalString(s) || jsonscan.LowerJS(s) != s {
		return false
	}
	ascii, rtl := true, false
	for i, r := range rs {
		if r >= utf8.RuneSelf {
			ascii = false
		}
		if r != '-' && !unicode.In(r, aceTables...) || i == 0 && unicode.IsMark(r) {
			return false
		}
		rtl = rtl || unicode.In(r, rtlTables...)
	}
	if rtl {
		for i, r := range rs {
			rtlLetter := unicode.IsLetter(r) && unicode.In(r, rtlTables...)
			if !rtlLetter && (i == 0 || !unicode.IsMark(r)) {
				return false
			}
		}
	}
	return !ascii
}

// Punycode parameters (RFC 3492 §5) and the overflow bound both validators use.
const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
	pcMaxInt      = 1<<31 - 1
)

// PunycodeDecode decodes s (without the xn-- prefix) as RFC 3492 §6.2 does;
// ok is false on a non-digit, a truncated number, an overflow past 2^31-1,
// a decoded basic code point, or one that is no Unicode scalar value.
func PunycodeDecode(s string) (out []rune, ok bool) {
	if b := strings.LastIndexByte(s, '-'); b > 0 {
		for i := 0; i < b; i++ {
			if s[i] >= utf8.RuneSelf {
				return nil, false
			}
			out = append(out, rune(s[i]))
		}
		s = s[b+1:]
	}
	n, i, bias := pcInitialN, 0, pcInitialBias
	for pos := 0; pos < len(s); {
		oldi, w := i, 1
		for k := pcBase; ; k += pcBase {
			if pos >= len(s) {
				return nil, false
			}
			digit := punycodeDigit(s[pos])
			pos++
			if digit < 0 || digit > (pcMaxInt-i)/w {
				return nil, false
			}
			i += digit * w
			t := k - bias
			if t < pcTMin {
				t = pcTMin
			} else if t > pcTMax {
				t = pcTMax
			}
			if digit < t {
				break
			}
			if w > pcMaxInt/(pcBase-t) {
				return nil, false
			}
			w *= pcBase - t
		}
		l := len(out) + 1
		bias = punycodeAdapt(i-oldi, l, oldi == 0)
		if i/l > pcMaxInt-n {
			return nil, false
		}
		n += i / l
		i %= l
		if n < pcInitialN || n > unicode.MaxRune || n >= 0xD800 && n <= 0xDFFF {
			return nil, false
		}
		out = append(out, 0)
		copy(out[i+1:], out[i:])
		out[i] = rune(n)
		i++
	}
	return out, true
}

func punycodeDigit(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c-'0') + 26
	case c >= 'a' && c <= 'z':
		return int(c - 'a')
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	}
	return -1
}

func punycodeAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > (pcBase-pcTMin)*pcTMax/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}
