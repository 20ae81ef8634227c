package netgate

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// devServer is a local API on 127.0.0.1 that counts the requests it got
// and answers with the credential header it saw.
func devServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// Issue 28 item 1: --dev-loopback exempts the named local service and
// nothing else on loopback. Real servers on real loopback sockets: the
// exempt one is reached by its address and by localhost, over http;
// another port of the same address, the same port on another loopback
// address, a public name resolving to the service, *.localhost and a
// redirect from the service to another loopback port all stay refused.
func TestDevLoopbackExemptsOnlyTheNamedService(t *testing.T) {
	other, otherHits := devServer(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("other")) })
	api, _ := devServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hop" {
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(`{"quote":"ok"}`))
	})
	ap := addrOf(t, api)
	port := itoa(int(ap.Port()))
	g, err := New(Config{}, WithDevLoopback(ap), WithConfirmer(always()),
		WithResolver(StaticResolver{"rebind.example": {netip.MustParseAddr("127.0.0.1")}}))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, u := range []string{"http://127.0.0.1:" + port + "/quotes", "http://localhost:" + port + "/quotes", "http://2130706433:" + port + "/quotes"} {
		if body := wantOK(t, get(g, app1, u, nil), 200); body != `{"quote":"ok"}` {
			t.Fatalf("%s: body %q", u, body)
		}
	}
	if a := g.Audit(); !a[len(a)-1].Dev {
		t.Errorf("the audit entry of a request to the dev service is not marked Dev: %+v", a[len(a)-1])
	}
	for _, c := range []struct{ url, code string }{
		{other.URL + "/", frame.CodeNetSchemeBlocked},                                 // another port: plain http refused
		{"https://127.0.0.1:" + portOf(t, other.URL) + "/", frame.CodeNetSSRFBlocked}, // and loopback
		{"http://rebind.example:" + port + "/", frame.CodeNetSchemeBlocked},
		{"https://rebind.example:" + port + "/", frame.CodeNetSSRFBlocked}, // a name that resolves to it
		{"http://api.localhost:" + port + "/", frame.CodeNetSchemeBlocked},
		{"https://api.localhost:" + port + "/", frame.CodeNetSSRFBlocked},
		{"https://[::1]:" + port + "/", frame.CodeNetSSRFBlocked}, // ::1 was not named
		{"http://127.0.0.1:" + port + "/hop", frame.CodeNetRedirectBlocked},
	} {
		r := get(g, app1, c.url, nil)
		if r.OK || r.Error == nil || r.Error.Code != c.code {
			t.Errorf("%s: %s, want %s", c.url, describeResp(r), c.code)
		}
	}
	// The same port on another loopback address (Linux answers all of
	// 127/8): a real listener there stays unreached.
	if l, err := net.Listen("tcp", "127.0.0.2:"+port); err == nil {
		s2 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { otherHits.Add(1) }))
		s2.Listener.Close()
		s2.Listener = l
		s2.Start()
		defer s2.Close()
		wantCode(t, get(g, app1, "https://127.0.0.2:"+port+"/", nil), frame.CodeNetSSRFBlocked)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("a loopback service that was not named got %d requests", n)
	}
	// The socket's last check holds too: a dial to another port of the
	// address is refused whatever asked for it.
	if err := g.control("tcp", "127.0.0.1:"+portOf(t, other.URL), nil); err == nil {
		t.Error("the dialer's check lets another loopback port through")
	}
	if err := g.control("tcp", ap.String(), nil); err != nil {
		t.Errorf("the dialer's check refuses the dev service: %v", err)
	}
}

// A credentialed connection to a local API over http loads only with the
// service exempted, and its credential goes in; without the exemption New
// says how to get it.
func TestDevLoopbackConnection(t *testing.T) {
	api, _ := devServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("key=" + r.Header.Get("X-Quotes-Key")))
	})
	ap := addrOf(t, api)
	t.Setenv("QUOTES_KEY", "local-dev-key-123")
	raw := `{"connections": [{"name": "quotes", "origin": "http://127.0.0.1:` + itoa(int(ap.Port())) + `", "header": "X-Quotes-Key", "secretEnv": "QUOTES_KEY"}]}`
	cfg, err := ParseConfig("net.json", []byte(raw))
	if err != nil {
		t.Fatalf("a connection to a loopback http origin does not load: %v", err)
	}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "--dev-loopback 127.0.0.1:"+itoa(int(ap.Port()))) {
		t.Fatalf("New without the exemption: %v, want the --dev-loopback hint", err)
	}
	if _, err := ParseConfig("net.json", []byte(strings.Replace(raw, "127.0.0.1", "quotes.example", 1))); err == nil || !strings.Contains(err.Error(), "only goes over https") {
		t.Fatalf("a plain http connection to a public name loads: %v", err)
	}
	g, err := New(cfg, WithDevLoopback(ap), WithConfirmer(always()))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if body := wantOK(t, get(g, app1, api.URL+"/q", nil), 200); body != "key=[REDACTED]" {
		t.Fatalf("the local API saw %q; want the injected key, scrubbed on the way back", body)
	}
}

func TestParseDevLoopback(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080": "127.0.0.1:8080", "[::1]:9000": "[::1]:9000", "localhost:3000": "127.0.0.1:3000 [::1]:3000",
		"8080": "127.0.0.1:8080 [::1]:8080", "127.0.0.9:1": "127.0.0.9:1",
	} {
		got, err := ParseDevLoopback(in)
		var s []string
		for _, a := range got {
			s = append(s, a.String())
		}
		if err != nil || strings.Join(s, " ") != want {
			t.Errorf("ParseDevLoopback(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, bad := range []string{"10.0.0.5:80", "192.168.1.2:8080", "example.com:80", "127.0.0.1:0", "127.0.0.1:99999", "", "127.0.0.1"} {
		if _, err := ParseDevLoopback(bad); err == nil {
			t.Errorf("ParseDevLoopback(%q) accepted", bad)
		}
	}
	if _, err := New(Config{}, WithDevLoopback(netip.MustParseAddrPort("10.0.0.5:80"))); err == nil {
		t.Error("New exempts a private address that is not loopback")
	}
}
