package netgate

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"

	"github.com/snuggen/snuggen/frame"
)

// pinKey carries the addresses a request's host was vetted to, so the dial
// goes to exactly those and no second lookup can swap them (DNS rebinding).
type pinKey struct{}

type pins struct {
	hostPort string
	addrs    []netip.Addr
}

func withPins(ctx context.Context, t *target, addrs []netip.Addr) context.Context {
	return context.WithValue(ctx, pinKey{}, &pins{hostPort: t.hostPort(), addrs: addrs})
}

// dialContext is the transport's only way out. It dials the pinned, vetted
// addresses of the request (or, for a dial it was not told about, resolves
// and vets itself), one by one, never by name.
func (g *Gate) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("netgate: dial %q: %w", address, err)
	}
	port64, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port64 == 0 {
		return nil, fmt.Errorf("netgate: dial %q: bad port", address)
	}
	port := uint16(port64)
	var addrs []netip.Addr
	if p, ok := ctx.Value(pinKey{}).(*pins); ok && p.hostPort == address {
		addrs = p.addrs
	} else {
		var f *failure
		addrs, f = g.vet(ctx, host, port)
		if f != nil {
			return nil, f
		}
	}
	var lastErr error
	for _, a := range addrs {
		c, err := g.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a.Unmap(), port).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

// control vets the address the socket is about to connect to, the last
// line: whatever chose it, a blocked address is never connected.
func (g *Gate) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fail(frame.CodeNetSSRFBlocked, fmt.Sprintf("refusing to connect to %q: not an address", address))
	}
	if g.allowed(ap) || g.isDev(ap) {
		return nil
	}
	if blocked, reason := Classify(ap.Addr()); blocked {
		return fail(frame.CodeNetSSRFBlocked, "refusing to connect: "+reason)
	}
	return nil
}
