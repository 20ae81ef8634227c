package netgate

import (
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/snuggen/snuggen/frame"
)

// target is a URL read once, the way the host will use it. The request is
// built from this parse and nothing else, so no later parser can read the
// string differently (the classic SSRF split between check and use).
type target struct {
	url    *url.URL   // canonical; the request is built from it
	scheme string     // "https" or "http"
	host   string     // lower-case ASCII name, or an IP literal without brackets
	addr   netip.Addr // valid when the host is an IP literal
	port   uint16
	origin string // scheme://host[:port], the default port omitted
}

// String is the canonical URL.
func (t *target) String() string { return t.url.String() }

// hostPort is the host and port the transport dials.
func (t *target) hostPort() string {
	return joinHostPort(t.host, t.port)
}

func joinHostPort(host string, port uint16) string {
	if strings.Contains(host, ":") {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}

func invalid(format string, args ...any) *failure {
	return fail(frame.CodeNetInvalidRequest, fmt.Sprintf(format, args...))
}

// parseTarget reads raw as an absolute http(s) URL and canonicalizes it:
// host lower-cased, one trailing dot dropped, a numeric host in any IPv4 form
// (decimal, octal, hex, 1–4 parts, as WHATWG reads it) turned into the address
// it is, percent-escapes in the host decoded, IDN through UTS #46, IPv6 zone
// ids refused, the port 1–65535, userinfo refused, dot segments removed, the
// fragment dropped. Any other scheme is NET_SCHEME_BLOCKED; everything else
// that is no valid URL is NET_INVALID_REQUEST.
func parseTarget(raw string) (*target, *failure) {
	if t, ok := targets.get(raw); ok {
		return t, nil
	}
	t, f := parseTargetUncached(raw)
	if f == nil {
		targets.put(raw, t)
	}
	return t, f
}

// targetCache remembers recent parses: apps ask for the same URLs again and
// again (polling, paging), and a target is immutable once built. Refusals
// are not cached, so a cache can never turn a "no" into a "yes".
type targetCache struct {
	mu sync.Mutex
	m  map[string]*target
}

// maxCachedTargets bounds the cache; when full it starts over.
const maxCachedTargets = 512

var targets = &targetCache{m: map[string]*target{}}

func (c *targetCache) get(raw string) (*target, bool) {
	c.mu.Lock()
	t, ok := c.m[raw]
	c.mu.Unlock()
	return t, ok
}

func (c *targetCache) put(raw string, t *target) {
	if len(raw) > 2048 {
		return
	}
	c.mu.Lock()
	if len(c.m) >= maxCachedTargets {
		clear(c.m)
	}
	c.m[raw] = t
	c.mu.Unlock()
}

// parseTargetUncached parses raw as parseTarget does, without the cache.
func parseTargetUncached(raw string) (*target, *failure) {
	if f := checkURLBytes(raw); f != nil {
		return nil, f
	}
	colon := strings.IndexByte(raw, ':')
	if colon <= 0 || !validScheme(raw[:colon]) {
		return nil, invalid("the URL is not absolute (no scheme)")
	}
	scheme := strings.ToLower(raw[:colon])
	rest := raw[colon+1:]
	if !strings.HasPrefix(rest, "//") {
		if scheme == "http" || scheme == "https" {
			return nil, invalid("the URL has no authority (%s://host/...)", scheme)
		}
		return nil, fail(frame.CodeNetSchemeBlocked, fmt.Sprintf("scheme %q is not https", scheme))
	}
	if scheme != "http" && scheme != "https" {
		return nil, fail(frame.CodeNetSchemeBlocked, fmt.Sprintf("scheme %q is not https", scheme))
	}
	rest = rest[2:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	if strings.Contains(authority, "@") {
		// Go's client would turn userinfo into an Authorization header.
		return nil, invalid("the URL carries userinfo (user@host); credentials come only from the host's connections")
	}
	hostPart, portPart, hasPort, f := splitAuthority(authority)
	if f != nil {
		return nil, f
	}
	t := &target{scheme: scheme}
	if t.port, f = parsePort(scheme, portPart, hasPort); f != nil {
		return nil, f
	}
	host, addr, f := canonicalHost(hostPart)
	if f != nil {
		return nil, f
	}
	t.host, t.addr = host, addr

	path, query, hasQuery, f := canonicalPathQuery(tail)
	if f != nil {
		return nil, f
	}
	t.origin = originOf(scheme, host, t.port)
	s := t.origin + path
	if hasQuery {
		s += "?" + query
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, invalid("the URL does not parse: %v", err)
	}
	t.url = u
	return t, nil
}

// checkURLBytes refuses an empty URL, one that is not UTF-8, and one with
// a space, a control character or a backslash.
func checkURLBytes(raw string) *failure {
	if raw == "" {
		return invalid("the URL is empty")
	}
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c <= 0x20 || c == 0x7f:
			return invalid("the URL holds a space or control character at byte %d", i)
		case c == '\\':
			// WHATWG reads a backslash as a slash and Go does not: refuse
			// rather than pick one reading.
			return invalid("the URL holds a backslash at byte %d", i)
		}
	}
	if !utf8.ValidString(raw) {
		return invalid("the URL is not valid UTF-8")
	}
	return nil
}

// parsePort is the authority's port: the one written (1–65535, digits
// only), else the scheme's.
func parsePort(scheme, portPart string, hasPort bool) (uint16, *failure) {
	if hasPort && portPart != "" {
		p, err := strconv.ParseUint(portPart, 10, 32)
		if err != nil || strings.TrimLeft(portPart, "0123456789") != "" || p < 1 || p > 65535 {
			return 0, invalid("port %q is not 1–65535", portPart)
		}
		return uint16(p), nil
	}
	if scheme == "https" {
		return 443, nil
	}
	return 80, nil
}

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if i == 0 && !alpha {
			return false
		}
		if !alpha && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func originOf(scheme, host string, port uint16) string {
	h := host
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if scheme == "https" && port == 443 || scheme == "http" && port == 80 {
		return scheme + "://" + h
	}
	return scheme + "://" + h + ":" + strconv.Itoa(int(port))
}

// splitAuthority splits host[:port] and [v6][:port].
func splitAuthority(a string) (host, port string, hasPort bool, f *failure) {
	if a == "" {
		return "", "", false, invalid("the URL has an empty host")
	}
	if a[0] == '[' {
		end := strings.IndexByte(a, ']')
		if end < 0 {
			return "", "", false, invalid("the URL has an unclosed IPv6 bracket")
		}
		host, after := a[:end+1], a[end+1:]
		if after == "" {
			return host, "", false, nil
		}
		if after[0] != ':' {
			return "", "", false, invalid("unexpected %q after the IPv6 address", after)
		}
		return host, after[1:], true, nil
	}
	if strings.ContainsAny(a, "[]") {
		return "", "", false, invalid("the host %q holds a bracket", a)
	}
	i := strings.LastIndexByte(a, ':')
	if i < 0 {
		return a, "", false, nil
	}
	if strings.IndexByte(a[:i], ':') >= 0 {
		return "", "", false, invalid("the host %q holds a colon (IPv6 needs brackets)", a)
	}
	return a[:i], a[i+1:], true, nil
}

// canonicalHost returns the host the request goes to, and the address when
// the host is an IP literal in any spelling.
func canonicalHost(h string) (string, netip.Addr, *failure) {
	if strings.HasPrefix(h, "[") {
		inner := h[1 : len(h)-1]
		if strings.Contains(inner, "%") {
			return "", netip.Addr{}, invalid("IPv6 zone ids are refused (%s)", h)
		}
		a, err := netip.ParseAddr(inner)
		if err != nil || !a.Is6() {
			return "", netip.Addr{}, invalid("%s is no IPv6 address", h)
		}
		return a.String(), a, nil
	}
	decoded, err := url.PathUnescape(h)
	if err != nil {
		return "", netip.Addr{}, invalid("the host %q holds a bad percent escape", h)
	}
	if !utf8.ValidString(decoded) {
		return "", netip.Addr{}, invalid("the host %q is not valid UTF-8 once decoded", h)
	}
	decoded = strings.TrimSuffix(decoded, ".")
	if decoded == "" {
		return "", netip.Addr{}, invalid("the URL has an empty host")
	}
	// UTS #46 maps full-width digits and dots, case and compatibility forms;
	// only then can one tell a number from a name (as WHATWG does). A plain
	// letters-digits-hyphens host needs no mapping but lower case, which
	// the fast path gives the same answer as the profile, far cheaper.
	ascii, ok := plainLDH(decoded)
	if !ok {
		var err error
		ascii, err = idna.Lookup.ToASCII(decoded)
		if err != nil {
			return "", netip.Addr{}, invalid("the host %q is no valid domain name (UTS #46: %v)", h, err)
		}
		ascii = strings.ToLower(ascii)
	}
	if endsInNumber(ascii) {
		a, ok := parseIPv4(ascii)
		if !ok {
			return "", netip.Addr{}, invalid("the host %q ends in a number but is no IPv4 address", h)
		}
		return a.String(), a, nil
	}
	if len(ascii) > 253 {
		return "", netip.Addr{}, invalid("the host name is longer than 253 bytes")
	}
	for _, label := range strings.Split(ascii, ".") {
		if label == "" || len(label) > 63 {
			return "", netip.Addr{}, invalid("the host %q has an empty or over-long label", h)
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return "", netip.Addr{}, invalid("the host %q holds %q, not a letter, digit or hyphen", h, c)
			}
		}
	}
	return ascii, netip.Addr{}, nil
}

// plainLDH lower-cases an ASCII host of letters, digits, hyphens and dots
// whose labels UTS #46 (with CheckHyphens) would pass unchanged: no label
// starts or ends with a hyphen or has "--" at positions 3–4 (which covers
// punycode "xn--"). Anything else goes through the idna profile.
func plainLDH(h string) (string, bool) {
	start := 0
	for i := 0; i <= len(h); i++ {
		if i < len(h) {
			c := h[i]
			if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' {
				continue
			}
			if c != '.' {
				return "", false
			}
		}
		label := h[start:i]
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' || len(label) >= 4 && label[2:4] == "--" {
			return "", false
		}
		start = i + 1
	}
	return strings.ToLower(h), true
}

// endsInNumber is WHATWG's test: the last label is all digits or 0x-hex.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if last == "" {
		return false
	}
	if strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := ipv4Number(last)
	return ok
}

// ipv4Number reads one part of an IPv4 host: 0x-prefixed hex, 0-prefixed
// octal, or decimal.
func ipv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, base = s[2:], 16
		if s == "" {
			return 0, true
		}
	case len(s) >= 2 && s[0] == '0':
		s, base = s[1:], 8
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, false
	}
	return n, true
}

// parseIPv4 reads 1–4 dotted numbers, the last filling the remaining bytes:
// 127.1, 2130706433, 0x7f.0.0.1 and 0177.0.0.01 are all 127.0.0.1.
func parseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := ipv4Number(p)
		if !ok {
			return netip.Addr{}, false
		}
		nums[i] = n
	}
	var v uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, false
	}
	v |= last
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// canonicalPathQuery validates percent escapes, escapes non-ASCII and unsafe
// bytes, removes dot segments (also the %2e spellings, as WHATWG does) and
// drops the fragment.
func canonicalPathQuery(tail string) (path, query string, hasQuery bool, f *failure) {
	if i := strings.IndexByte(tail, '#'); i >= 0 {
		tail = tail[:i]
	}
	rawPath := tail
	if i := strings.IndexByte(tail, '?'); i >= 0 {
		rawPath, query, hasQuery = tail[:i], tail[i+1:], true
	}
	if f := checkEscapes(rawPath); f != nil {
		return "", "", false, f
	}
	if f := checkEscapes(query); f != nil {
		return "", "", false, f
	}
	return removeDotSegments(escapeUnsafe(rawPath)), escapeUnsafe(query), hasQuery, nil
}

func checkEscapes(s string) *failure {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return invalid("the URL holds a bad percent escape at %q", s[i:min(i+3, len(s))])
			}
		}
	}
	return nil
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func escapeUnsafe(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || strings.IndexByte("\"<>`{}|^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func removeDotSegments(p string) string {
	if p == "" {
		return "/"
	}
	segs := strings.Split(p, "/")[1:] // p starts with "/"
	out := make([]string, 0, len(segs))
	for i, s := range segs {
		last := i == len(segs)-1
		switch strings.ToLower(s) {
		case ".", "%2e":
			if last {
				out = append(out, "")
			}
		case "..", ".%2e", "%2e.", "%2e%2e":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return "/" + strings.Join(out, "/")
}
