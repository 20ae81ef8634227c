package broker_test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/relay"
)

// net-request through the real gate: the confirm dialog goes to the page of
// the asking iframe, the answer comes back from it, the audit entry reaches
// the page's inspector.
func TestNetRequestThroughGateAndDialog(t *testing.T) {
	upstream := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session=secret")
		fmt.Fprint(w, `{"temp":21}`)
	}))
	defer upstream.Close()
	u, _ := url.Parse(upstream.URL)
	ap := netip.MustParseAddrPort(u.Host)
	pool := x509.NewCertPool()
	pool.AddCert(upstream.Certificate())

	var rl *relay.Relay
	gate, err := netgate.New(netgate.Config{},
		netgate.WithResolver(netgate.StaticResolver{"example.com": {ap.Addr()}}),
		netgate.WithAllowedAddrs(ap),
		netgate.WithTLSConfig(&tls.Config{RootCAs: pool}),
		netgate.WithConfirmer(relay.Dialogs{}),
		netgate.WithAuditSink(func(e netgate.Entry) { rl.Audit(e) }),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer gate.Close()
	h := newHost(t, broker.Options{Net: broker.Netgate(gate, func(key string) netgate.App {
		return netgate.App{Name: "Weather (" + key + ")"}
	})}, relay.Options{})
	rl = h.rl
	p := h.page(t)
	p.mount("s1", "weather")
	p.load("s1")
	hr := p.frameFor("s1", frame.TypeHostReady, "")
	if !hr.Capabilities["net"] || hr.Capabilities["auth"] {
		t.Fatalf("capabilities %v: want net, no auth (no connection configured)", hr.Capabilities)
	}
	inst := hr.InstanceID
	target := fmt.Sprintf("https://example.com:%d/data?q=1", ap.Port())
	answered := map[string]bool{}
	ask := func(rid, decision string) frameView {
		p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:net-request","requestId":%q,"instanceId":%q,"url":%q,"method":"GET"}`, rid, inst, target))
		c, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "confirm" && m.Kind == "net" && !answered[m.ID] })
		answered[c.ID] = true
		if c.URL != target || c.Method != "GET" || c.App != "Weather (weather)" || c.Slot != "s1" {
			t.Fatalf("confirm %+v", c)
		}
		p.send(map[string]string{"t": "confirm-answer", "id": c.ID, "decision": decision})
		return p.terminal("s1", rid)
	}
	if f := ask("n1", "deny"); f.code() != frame.CodeNetConfirmDenied {
		t.Fatalf("deny: %+v", f.Error)
	}
	f := ask("n2", "once")
	if f.OK == nil || !*f.OK || fmt.Sprint(f.Status) != "200" {
		t.Fatalf("once: %+v", f)
	}
	m, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "frame" && m.f.RequestID == "n2" })
	if !strings.Contains(string(m.Frame), `{\"temp\":21}`) || strings.Contains(string(m.Frame), "secret") {
		t.Fatalf("net-response %s", m.Frame)
	}
	if a, _ := p.wait(0, waitLimit, func(m msg) bool { return m.T == "audit" }); a.T != "audit" {
		t.Fatal("no audit entry")
	}

	// A credential-shaped header makes the strict frame malformed: answered,
	// never sent.
	p.frame("s1", fmt.Sprintf(`{"v":1,"type":"snug:net-request","requestId":"n3","instanceId":%q,"url":%q,"method":"GET","headers":{"Authorization":"Bearer x"}}`, inst, target))
	if f := p.terminal("s1", "n3"); f.Type != frame.TypeNetResponse || f.code() != frame.CodeMalformed {
		t.Fatalf("credential header: %+v", f)
	}
}
