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

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
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
	runner := browsertest.OpenRunner(t, h.URL(), "probe")
	frame := runner.Frame(0)

	browsertest.Eval[bool](t, frame, `(window.hints = [], snug.on("connection-event", (d) => hints.push(d)), true)`)
	browsertest.Eval[bool](t, frame, fmt.Sprintf(`(window.netResult = snug.net.fetch(%q).then((r) => r.text(), (e) => e.code), true)`, srv.URL+"/me"))
	runner.WaitFor("the net confirm dialog", `document.getElementById('confirm').open`)
	runner.Answer("always")
	if got := browsertest.Eval[string](t, frame, `window.netResult`); got != "token=[REDACTED]" {
		t.Fatalf("answer = %q, want the injected token scrubbed", got)
	}
	browsertest.WaitFor(t, frame, "the connected hint", `hints.length >= 1`)
	if got := browsertest.Eval[string](t, frame, `JSON.stringify(hints)`); got != `[{"connection":"test-api","state":"connected"}]` {
		t.Fatalf("hints = %s", got)
	}

	if err := h.Net.Forget("probe"); err != nil {
		t.Fatal(err)
	}
	browsertest.WaitFor(t, frame, "the revoked hint", `hints.length >= 2`)
	got := browsertest.Eval[string](t, frame, `JSON.stringify(hints)`)
	if !strings.HasSuffix(got, `{"connection":"test-api","state":"revoked"}]`) || strings.Contains(got, secret) {
		t.Fatalf("hints = %s", got)
	}
}
