package netgate

import (
	"fmt"
	"net/netip"
	"sync"
)

// blockedRange is one row of the SSRF tables: a prefix the host never dials
// and the words a refusal uses to name it.
type blockedRange struct {
	prefix netip.Prefix
	what   string
}

func mustRanges(rows ...[2]string) []blockedRange {
	out := make([]blockedRange, len(rows))
	for i, r := range rows {
		out[i] = blockedRange{prefix: netip.MustParsePrefix(r[0]), what: r[1]}
	}
	return out
}

// The tables are explicit on purpose: netip's IsGlobalUnicast calls 0/8,
// 198.18/15, 240/4, 2001:db8::/32 and more "global". Rows are checked in
// order, so a narrower row that names the range better comes first. They
// are parsed on first use, not in every snuggen process's start.
var blockedRanges = sync.OnceValues(func() (blocked4, blocked6 []blockedRange) {
	return mustRanges(
			[2]string{"0.0.0.0/8", "unspecified (\"this network\")"},
			[2]string{"10.0.0.0/8", "private"},
			[2]string{"100.64.0.0/10", "carrier-grade NAT (shared)"},
			[2]string{"127.0.0.0/8", "loopback"},
			[2]string{"169.254.0.0/16", "link-local, where cloud metadata lives"},
			[2]string{"172.16.0.0/12", "private"},
			[2]string{"192.0.0.0/24", "IETF protocol assignments (reserved)"},
			[2]string{"192.0.2.0/24", "documentation (TEST-NET-1)"},
			[2]string{"192.88.99.0/24", "6to4 relay anycast (reserved)"},
			[2]string{"192.168.0.0/16", "private"},
			[2]string{"198.18.0.0/15", "benchmarking"},
			[2]string{"198.51.100.0/24", "documentation (TEST-NET-2)"},
			[2]string{"203.0.113.0/24", "documentation (TEST-NET-3)"},
			[2]string{"224.0.0.0/4", "multicast"},
			[2]string{"255.255.255.255/32", "broadcast"},
			[2]string{"240.0.0.0/4", "reserved (240/4)"},
		), mustRanges(
			[2]string{"::/128", "unspecified"},
			[2]string{"::1/128", "loopback"},
			[2]string{"::/96", "IPv4-compatible (deprecated)"},
			[2]string{"64:ff9b:1::/48", "local-use NAT64"},
			[2]string{"100::/64", "discard-only (reserved)"},
			[2]string{"2001::/32", "Teredo"},
			[2]string{"2001:2::/48", "benchmarking"},
			[2]string{"2001:db8::/32", "documentation"},
			[2]string{"2001::/23", "IETF protocol assignments (reserved)"},
			[2]string{"3fff::/20", "documentation"},
			[2]string{"5f00::/16", "SRv6 segment identifiers (reserved)"},
			[2]string{"fc00::/7", "unique local (ULA)"},
			[2]string{"fe80::/10", "link-local"},
			[2]string{"fec0::/10", "site-local (deprecated)"},
			[2]string{"ff00::/8", "multicast"},
		)
})

var (
	// Every IPv6 global unicast address is inside 2000::/3 today; anything
	// outside it that no row above or below explains is reserved.
	global6 = netip.MustParsePrefix("2000::/3")
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
)

// Classify reports whether a is an address the host refuses to dial and, when
// it is, why: "127.0.0.1 is loopback (127.0.0.0/8)". IPv6 forms that carry an
// IPv4 address (mapped, NAT64, 6to4) are judged by the address they carry. An
// address with a zone is refused.
func Classify(a netip.Addr) (blocked bool, reason string) {
	if !a.IsValid() {
		return true, "not an IP address"
	}
	if a.Zone() != "" {
		return true, fmt.Sprintf("%s carries an IPv6 zone", a)
	}
	orig := a
	blocked4, blocked6 := blockedRanges()
	// netip.Prefix.Contains misses ::ffff:127.0.0.1 unless unmapped first.
	a = a.Unmap()
	if a.Is4() {
		if r, ok := find(blocked4, a); ok {
			return true, describe(orig, a, r)
		}
		return false, ""
	}
	if nat64.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		if r, ok := find(blocked4, v4); ok {
			return true, fmt.Sprintf("%s is NAT64 (64:ff9b::/96) for %s, which is %s (%s)", orig, v4, r.what, r.prefix)
		}
		return false, ""
	}
	if sixTo4.Contains(a) {
		b := a.As16()
		v4 := netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		if r, ok := find(blocked4, v4); ok {
			return true, fmt.Sprintf("%s is 6to4 (2002::/16) for %s, which is %s (%s)", orig, v4, r.what, r.prefix)
		}
		return false, ""
	}
	if r, ok := find(blocked6, a); ok {
		return true, describe(orig, a, r)
	}
	if !global6.Contains(a) {
		return true, fmt.Sprintf("%s is reserved (outside 2000::/3)", orig)
	}
	return false, ""
}

func find(table []blockedRange, a netip.Addr) (blockedRange, bool) {
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r, true
		}
	}
	return blockedRange{}, false
}

func describe(orig, a netip.Addr, r blockedRange) string {
	if orig != a {
		return fmt.Sprintf("%s is IPv4-mapped %s, which is %s (%s)", orig, a, r.what, r.prefix)
	}
	return fmt.Sprintf("%s is %s (%s)", a, r.what, r.prefix)
}
