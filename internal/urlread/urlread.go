// Package urlread decides whether an https URL is read the same way by a
// WHATWG URL parser (what a browser opens) and a strict RFC 3986 parser (what
// a confirm dialog shows). It implements the algorithm rules.json states for
// the open-url refinement (schemas/rules.json, "openurl.url"); the rule ids
// and messages live there and reach callers through hostkit/frame. It is a
// pure function over the string: no network, no IDNA.
package urlread

import (
	"net/netip"
	"strings"
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
	Host            // empty, %, [ ], a non-canonical numeric host, a bad IPv6 literal
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
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		j := strings.IndexByte(auth, ']')
		if j < 0 {
			return Host
		}
		host = auth[:j+1]
		after := auth[j+1:]
		switch {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return Host
		}
		inner := host[1 : len(host)-1]
		if strings.IndexAny(inner, "%") >= 0 {
			return Host
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() || a.Zone() != "" {
			return Host
		}
	} else {
		if i := strings.LastIndexByte(auth, ':'); i >= 0 {
			host, port = auth[:i], auth[i+1:]
		}
		if host == "" {
			return Host
		}
		for i := 0; i < len(host); i++ {
			if c := host[i]; !isUnreserved(c) && !isSubDelim(c) {
				return Host
			}
		}
		if !numericHostOK(host) {
			return Host
		}
	}
	if len(port) > 0 {
		v := 0
		for i := 0; i < len(port); i++ {
			c := port[i]
			if c < '0' || c > '9' {
				return Port
			}
			v = v*10 + int(c-'0')
			if v > 65535 {
				return Port
			}
		}
	}
	// path-abempty, then ?query, then #fragment: pchar = unreserved /
	// pct-encoded / sub-delims / ":" / "@"; query and fragment add "/" "?".
	inFragment := false
	for i := 0; i < len(tail); i++ {
		switch c := tail[i]; c {
		case '[', ']':
			return Char
		case '#':
			if inFragment {
				return Char
			}
			inFragment = true
		}
	}
	return OK
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
