package hostkit_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
)

// TestGrantAndRevokeRingTheAppsDoorbell: a user's "always" for an origin
// with a configured connection sends the app a connection-event hint
// (connected), the credential is injected and scrubbed from the answer, and
// forgetting the app's grants sends "revoked". The hint carries the
// connection's name and state only (R7).
func TestGrantAndRevokeRingTheAppsDoorbell(t *testing.T) {
	const secret = "tok-0123456789abcdef"
	t.Setenv("SNUG_TEST_TOKEN", secret)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "token=%s", r.Header.Get("X-Token"))
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	cfg := netgate.Config{Connections: []netgate.Connection{{
		Name: "test-api", Origin: srv.URL, Header: "X-Token", SecretEnv: "SNUG_TEST_TOKEN",
	}}}
	h := startHost(t, hostkit.WithNet(cfg, netgate.WithAllowedAddrs(ap), netgate.WithTLSConfig(&tls.Config{RootCAs: pool})))
	tab := openRunner(t, h, "probe")
	frame := appFrame(t, tab, slots(t, tab)[0])

	eval[bool](t, frame, `(window.hints = [], snug.on("connection-event", (d) => hints.push(d)), true)`)
	eval[bool](t, frame, fmt.Sprintf(`(window.netResult = snug.net.fetch(%q).then((r) => r.text(), (e) => e.code), true)`, srv.URL+"/me"))
	waitFor(t, tab, "the net confirm dialog", `document.getElementById('confirm').open`)
	run(t, tab, "allow always", chromedp.Click(chromedp.CSS(`#confirm [data-snug-confirm="always"]`)))
	if got := eval[string](t, frame, `window.netResult`); got != "token=[REDACTED]" {
		t.Fatalf("answer = %q, want the injected token scrubbed", got)
	}
	waitFor(t, frame, "the connected hint", `hints.length >= 1`)
	if got := eval[string](t, frame, `JSON.stringify(hints)`); got != `[{"connection":"test-api","state":"connected"}]` {
		t.Fatalf("hints = %s", got)
	}

	if err := h.Net.Forget("probe"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, frame, "the revoked hint", `hints.length >= 2`)
	got := eval[string](t, frame, `JSON.stringify(hints)`)
	if !strings.HasSuffix(got, `{"connection":"test-api","state":"revoked"}]`) || strings.Contains(got, secret) {
		t.Fatalf("hints = %s", got)
	}
}
