package netgate

import (
	"net/netip"
	"strings"
	"testing"
)

// TestClassifyTraps pins the traps the issue measured: stdlib predicates
// call these global, and Contains misses mapped forms unless unmapped.
func TestClassifyTraps(t *testing.T) {
	for _, s := range []string{"0.0.0.1", "198.18.0.1", "240.0.0.1", "2001:db8::1", "192.0.2.1", "198.51.100.1",
		"203.0.113.1", "100.64.0.1", "192.0.0.8", "64:ff9b:1::1", "3fff::1"} {
		a := netip.MustParseAddr(s)
		if blocked, _ := Classify(a); !blocked {
			t.Errorf("%s passes", s)
		}
		if !a.IsGlobalUnicast() || a.IsPrivate() {
			t.Errorf("the stdlib trap is gone for %s: IsGlobalUnicast no longer calls it global", s)
		}
	}
	if netip.MustParsePrefix("127.0.0.0/8").Contains(netip.MustParseAddr("::ffff:127.0.0.1")) {
		t.Fatal("the trap is gone: Contains now matches mapped addresses")
	}
	if blocked, reason := Classify(netip.MustParseAddr("::ffff:127.0.0.1")); !blocked || !strings.Contains(reason, "IPv4-mapped") {
		t.Fatalf("mapped loopback: %v %q", blocked, reason)
	}
	if blocked, _ := Classify(netip.MustParseAddr("fe80::1%eth0")); !blocked {
		t.Fatal("a zoned address passes")
	}
	if blocked, _ := Classify(netip.Addr{}); !blocked {
		t.Fatal("the zero Addr passes")
	}
	for _, s := range []string{"8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "64:ff9b::8.8.8.8", "2002:808:808::", "::ffff:1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "11.0.0.1", "223.255.255.255"} {
		if blocked, reason := Classify(netip.MustParseAddr(s)); blocked {
			t.Errorf("%s refused: %s", s, reason)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for _, c := range []struct{ in, url, origin, host string }{
		{"https://Example.COM./a/b?x=1#f", "https://example.com/a/b?x=1", "https://example.com", "example.com"},
		{"HTTPS://example.com:443", "https://example.com/", "https://example.com", "example.com"},
		{"https://example.com:8443/", "https://example.com:8443/", "https://example.com:8443", "example.com"},
		{"http://example.com:80/", "http://example.com/", "http://example.com", "example.com"},
		{"https://example.com:/x", "https://example.com/x", "https://example.com", "example.com"},
		{"https://a.example/x/./y/../z", "https://a.example/x/z", "https://a.example", "a.example"},
		{"https://a.example/x/%2e%2E/y", "https://a.example/y", "https://a.example", "a.example"},
		{"https://a.example/../../etc", "https://a.example/etc", "https://a.example", "a.example"},
		{"https://a.example/caf\u00e9?q=\u00e9", "https://a.example/caf%C3%A9?q=%C3%A9", "https://a.example", "a.example"},
		{"https://a.example/%41", "https://a.example/%41", "https://a.example", "a.example"},
		{"https://b\u00fccher.example/", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"https://[2001:4860::8888]:8443/", "https://[2001:4860::8888]:8443/", "https://[2001:4860::8888]:8443", "2001:4860::8888"},
		{"https://0x08.0x08.0x08.0x08/", "https://8.8.8.8/", "https://8.8.8.8", "8.8.8.8"},
		{"https://134744072/", "https://8.8.8.8/", "https://8.8.8.8", "8.8.8.8"},
		{"https://8.8.2056/", "https://8.8.8.8/", "https://8.8.8.8", "8.8.8.8"},
		{"https://010.010.010.010/", "https://8.8.8.8/", "https://8.8.8.8", "8.8.8.8"},
		{"https://0x/", "https://0.0.0.0/", "https://0.0.0.0", "0.0.0.0"},
	} {
		tg, f := parseTarget(c.in)
		if f != nil {
			t.Errorf("%q: %v", c.in, f)
			continue
		}
		if tg.String() != c.url || tg.origin != c.origin || tg.host != c.host {
			t.Errorf("%q: url %q origin %q host %q", c.in, tg.String(), tg.origin, tg.host)
		}
	}
}

func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"https://example.com/", "https://127.1/", "https://[::1]/", "https://a@b/", "https://%31.1/", "https://0x7f.1:99/x?y#z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, fl := parseTargetUncached(s)
		if fl != nil {
			return
		}
		// A canonical URL reads back as itself: one parse, one reading.
		again, fl := parseTargetUncached(tg.String())
		if fl != nil || again.String() != tg.String() || again.origin != tg.origin {
			t.Fatalf("%q -> %q -> %v", s, tg.String(), fl)
		}
		if tg.addr.IsValid() && tg.addr.String() != tg.host {
			t.Fatalf("%q: host %q addr %s", s, tg.host, tg.addr)
		}
	})
}
