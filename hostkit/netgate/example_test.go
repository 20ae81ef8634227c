package netgate_test

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/snuggen/snuggen/hostkit/netgate"
)

// Check runs the decision path without sending: here the cloud metadata
// name, resolved (by a fixed table) to its link-local address, and one of
// the many spellings of 127.0.0.1.
func ExampleGate_Check() {
	res := netgate.StaticResolver{"metadata.google.internal": {netip.MustParseAddr("169.254.169.254")}}
	g, err := netgate.New(netgate.Config{}, netgate.WithResolver(res))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	for _, u := range []string{"https://metadata.google.internal./computeMetadata/v1/", "https://0x7f.1/", "https://8.8.8.8/dns"} {
		r := g.Check(context.Background(), netgate.App{}, "GET", u)
		if r.Allow {
			fmt.Println("allow", r.Address)
		} else {
			fmt.Println(r.Code, r.Reason)
		}
	}
	// Output:
	// NET_SSRF_BLOCKED metadata.google.internal resolves to a blocked address: 169.254.169.254 is link-local, where cloud metadata lives (169.254.0.0/16)
	// NET_SSRF_BLOCKED 127.0.0.1 is loopback (127.0.0.0/8)
	// allow 8.8.8.8:443
}
