package netgate

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// Development services on loopback. An app author tries an app against a
// local or mock API ("my quotes service on localhost:8080"), which the SSRF
// ceiling refuses like every loopback address. WithDevLoopback exempts the
// exact services named, and only them: the address and port given, reached
// by that address or by the name localhost (never resolved: it stands for
// the exempt addresses of that port). Another port of the same address,
// another loopback address, a public name that resolves to the service and a
// redirect to anything else on loopback stay refused. The confirm gate, the
// rate ceiling, the scrub and the audit apply as to any origin; an audit
// entry to such a service is marked Dev.

// WithDevLoopback exempts the loopback services at addrs from the SSRF
// ceiling, for development: an app may reach each over http or https, by its
// address or the name localhost, and a connection's origin may be one of
// them over http. It is never a default: snuggen serve sets it from
// --dev-loopback and says so in its log and in the runner (Gate.DevLoopback).
// New refuses an address that is not loopback.
func WithDevLoopback(addrs ...netip.AddrPort) Option {
	return func(o *options) { o.dev = append(o.dev, addrs...) }
}

// ParseDevLoopback reads one --dev-loopback value: "127.0.0.1:8080",
// "[::1]:8080", or "localhost:8080" and a bare "8080", which name both
// 127.0.0.1 and ::1 on that port.
func ParseDevLoopback(s string) ([]netip.AddrPort, error) {
	host, port := "localhost", s
	if i := strings.LastIndexByte(s, ':'); i >= 0 {
		host, port = strings.Trim(s[:i], "[]"), s[i+1:]
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return nil, fmt.Errorf("netgate: dev loopback %q: want ADDRESS:PORT such as 127.0.0.1:8080 (or localhost:8080, or a port)", s)
	}
	if host == "localhost" {
		return []netip.AddrPort{
			netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(p)),
			netip.AddrPortFrom(netip.IPv6Loopback(), uint16(p)),
		}, nil
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Unmap().IsLoopback() {
		return nil, fmt.Errorf("netgate: dev loopback %q: %q is not a loopback address (127.0.0.0/8 or ::1); only services on this machine can be exempted", s, host)
	}
	return []netip.AddrPort{netip.AddrPortFrom(a.Unmap(), uint16(p))}, nil
}

// checkDev refuses an exemption that is not a loopback service.
func checkDev(dev []netip.AddrPort) error {
	for _, ap := range dev {
		if !ap.Addr().Unmap().IsLoopback() || ap.Port() == 0 {
			return fmt.Errorf("netgate: dev loopback %s: only a loopback address and port can be exempted", ap)
		}
	}
	return nil
}

// DevLoopback lists the exempt development services, nil when none: a host
// that has any shows them while they are in effect.
func (g *Gate) DevLoopback() []netip.AddrPort { return slices.Clone(g.opts.dev) }

// isDev reports whether the socket address ap is an exempt service.
func (g *Gate) isDev(ap netip.AddrPort) bool {
	return slices.Contains(g.opts.dev, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
}

// devAddrs returns the exempt addresses a request to host:port goes to:
// host is an exempt address itself, or the name localhost with an exempt
// port. Any other host (a name that resolves to loopback included) gets none.
func (g *Gate) devAddrs(host string, port uint16) []netip.Addr {
	var out []netip.Addr
	for _, ap := range g.opts.dev {
		if ap.Port() == port && (host == "localhost" || host == ap.Addr().String()) {
			out = append(out, ap.Addr())
		}
	}
	return out
}

// devTarget reports whether t is a request to an exempt service.
func (g *Gate) devTarget(t *target) bool { return len(g.devAddrs(t.host, t.port)) > 0 }
