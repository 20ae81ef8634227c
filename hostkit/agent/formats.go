package agent

import (
	"net"
	"net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The formats drafts before 2019-09 assert (and the meta-schema checks use:
// uri, uri-reference, regex), with the verdicts v5 gives them. A value that
// is not a string passes every format.

// formatChecker returns the check of a format name, nil for a format the
// host does not know (which then asserts nothing). "regex" is bounded like
// a pattern (checkPattern).
func formatChecker(name string) func(any) bool {
	var f func(string) bool
	switch name {
	case "date-time":
		f = isDateTime
	case "date":
		f = isDate
	case "time":
		f = isTime
	case "duration":
		f = isDuration
	case "period":
		f = isPeriod
	case "hostname":
		f = isHostname
	case "email":
		f = isEmail
	case "ipv4", "ip-address":
		f = isIPv4
	case "ipv6":
		f = isIPv6
	case "uri", "iri":
		f = isURI
	case "uri-reference", "uriref", "iri-reference":
		f = isURIReference
	case "uri-template":
		f = isURITemplate
	case "regex":
		f = func(s string) bool { return checkPattern(s) == nil }
	case "json-pointer":
		f = isJSONPointer
	case "relative-json-pointer":
		f = isRelativeJSONPointer
	case "uuid":
		f = isUUID
	default:
		return nil
	}
	return func(v any) bool {
		s, ok := v.(string)
		return !ok || f(s)
	}
}

// isDateTime: RFC 3339 date-time (T or t between date and time).
func isDateTime(s string) bool {
	if len(s) < 20 || (s[10] != 'T' && s[10] != 't') {
		return false
	}
	return isDate(s[:10]) && isTime(s[11:])
}

// isDate: RFC 3339 full-date, a real day of the calendar.
func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// twoDigits parses s (two bytes, signs allowed as strconv.Atoi allows
// them) within [lo, hi].
func twoDigits(s string, lo, hi int) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= lo && n <= hi
}

// isTime: RFC 3339 full-time; a leap second only at 23:59 UTC.
func isTime(s string) bool {
	if len(s) < 9 || s[2] != ':' || s[5] != ':' {
		return false
	}
	h, ok1 := twoDigits(s[0:2], 0, 23)
	m, ok2 := twoDigits(s[3:5], 0, 59)
	sec, ok3 := twoDigits(s[6:8], 0, 60)
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	rest := s[8:]
	if rest[0] == '.' {
		digits := 0
		rest = rest[1:]
		for len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
			rest, digits = rest[1:], digits+1
		}
		if digits == 0 {
			return false
		}
	}
	switch {
	case rest == "z" || rest == "Z":
	case len(rest) == 6 && rest[3] == ':' && (rest[0] == '+' || rest[0] == '-'):
		oh, ok1 := twoDigits(rest[1:3], 0, 23)
		om, ok2 := twoDigits(rest[4:6], 0, 59)
		if !ok1 || !ok2 {
			return false
		}
		off := oh*60 + om
		if rest[0] == '+' {
			off = -off
		}
		utc := ((h*60+m+off)%(24*60) + 24*60) % (24 * 60)
		h, m = utc/60, utc%60
	default:
		return false
	}
	return sec != 60 || (h == 23 && m == 59)
}

// durationUnits reads number-unit pairs up to a 'T' or the end and
// returns the units in order.
func durationUnits(s string) (units, rest string, ok bool) {
	for len(s) > 0 && s[0] != 'T' {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) {
			return units, s, false
		}
		units += s[i : i+1]
		s = s[i+1:]
	}
	return units, s, true
}

// isDuration: ISO 8601 duration as RFC 3339's appendix A writes it (units
// in order, weeks alone).
func isDuration(s string) bool {
	body, ok := strings.CutPrefix(s, "P")
	if !ok {
		return false
	}
	units, rest, ok := durationUnits(body)
	if !ok {
		return false
	}
	if units == "W" {
		return rest == ""
	}
	if units != "" {
		if !strings.Contains("YMD", units) {
			return false
		}
		if rest == "" {
			return true
		}
	}
	t, ok := strings.CutPrefix(rest, "T")
	if !ok {
		return false
	}
	units, rest, ok = durationUnits(t)
	return ok && rest == "" && units != "" && strings.Contains("HMS", units)
}

// isPeriod: start/end, start/duration or duration/end.
func isPeriod(s string) bool {
	start, end, ok := strings.Cut(s, "/")
	if !ok {
		return false
	}
	if isDateTime(start) {
		return isDateTime(end) || isDuration(end)
	}
	return isDuration(start) && isDateTime(end)
}

// isHostname: RFC 1123 labels of letters, digits and inner hyphens, 253
// bytes at most (a trailing dot aside). As v5, the leading hyphen is looked
// for only at the start of the name.
func isHostname(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if len(s) > 253 {
		return false
	}
	if strings.HasPrefix(s, "-") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// isEmail: an address of at most 254 bytes, local part at most 64, whose
// domain is a hostname or a bracketed IP address, that net/mail parses.
func isEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	if at < 0 || at > 64 {
		return false
	}
	domain := s[at+1:]
	if len(domain) >= 2 && domain[0] == '[' && domain[len(domain)-1] == ']' {
		ip := domain[1 : len(domain)-1]
		if v6, ok := strings.CutPrefix(ip, "IPv6:"); ok {
			return isIPv6(v6)
		}
		return isIPv4(ip)
	}
	if !isHostname(domain) {
		return false
	}
	_, err := mail.ParseAddress(s)
	return err == nil
}

// isIPv4: dotted quad, no leading zeros.
func isIPv4(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 || (n != 0 && p[0] == '0') {
			return false
		}
	}
	return true
}

// isIPv6: an address with a colon that net.ParseIP reads.
func isIPv6(s string) bool {
	return strings.Contains(s, ":") && net.ParseIP(s) != nil
}

// parseURL parses s as net/url does, refusing a host with a colon that is
// not a bracketed IPv6 address.
func parseURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, false
	}
	if host := u.Hostname(); strings.Contains(host, ":") {
		if !strings.Contains(u.Host, "[") || !strings.Contains(u.Host, "]") || !isIPv6(host) {
			return nil, false
		}
	}
	return u, true
}

// isURI: an absolute URI.
func isURI(s string) bool {
	u, ok := parseURL(s)
	return ok && u.IsAbs()
}

// isURIReference: a URI or a relative reference, without backslashes.
func isURIReference(s string) bool {
	_, ok := parseURL(s)
	return ok && !strings.Contains(s, `\`)
}

// isURITemplate: a URI reference whose path segments nest no braces.
func isURITemplate(s string) bool {
	u, ok := parseURL(s)
	if !ok {
		return false
	}
	for _, seg := range strings.Split(u.RawPath, "/") {
		open := false
		for _, r := range seg {
			switch r {
			case '{':
				if open {
					return false
				}
				open = true
			case '}':
				if !open {
					return false
				}
				open = false
			}
		}
		if open {
			return false
		}
	}
	return true
}

// isJSONPointer: "" or "/"-separated tokens whose "~" escapes are ~0 or ~1.
func isJSONPointer(s string) bool {
	if s != "" && s[0] != '/' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && (i+1 == len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
			return false
		}
	}
	return true
}

// isRelativeJSONPointer: a non-negative integer (no leading zero) then "#"
// or a JSON pointer.
func isRelativeJSONPointer(s string) bool {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false
	}
	if s[0] == '0' {
		s = s[1:]
	} else {
		s = strings.TrimLeft(s, "0123456789")
	}
	return s == "#" || isJSONPointer(s)
}

// isUUID: RFC 4122's 8-4-4-4-12 hexadecimal digits.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}
