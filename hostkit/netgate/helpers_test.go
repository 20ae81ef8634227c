package netgate

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/schemas"
)

// produced records every code a test saw, so TestMain can prove each code
// of the net registry has a test that produces it.
var produced sync.Map

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" {
		codes, err := netRegistry()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		for _, c := range codes {
			if _, ok := produced.Load(c); !ok {
				fmt.Fprintf(os.Stderr, "no test produced %s\n", c)
				code = 1
			}
		}
	}
	os.Exit(code)
}

// netRegistry reads the NET_* codes of the error registry from the spec
// data (schemas/rules.json), leaving out the reserved ones.
func netRegistry() ([]string, error) {
	b, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil {
		return nil, err
	}
	var rules struct {
		Errors []struct {
			Code     string `json:"code"`
			Reserved bool   `json:"reserved"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(b, &rules); err != nil {
		return nil, err
	}
	var out []string
	for _, e := range rules.Errors {
		if strings.HasPrefix(e.Code, "NET_") && !e.Reserved {
			out = append(out, e.Code)
		}
	}
	if len(out) < 12 {
		return nil, fmt.Errorf("the registry in %s has %d net codes", schemas.RulesFile, len(out))
	}
	return out, nil
}

// TestConnectionStates ties the hint states to the connection-event's enum.
func TestConnectionStates(t *testing.T) {
	for _, ev := range frame.EventSpecs {
		if ev.Name != frame.EventConnection {
			continue
		}
		for _, f := range ev.Data {
			if f.Name == "state" {
				if !slices.Equal(f.Enum, []string{StateConnected, StateRevoked}) {
					t.Fatalf("connection-event states %v", f.Enum)
				}
				return
			}
		}
	}
	t.Fatal("connection-event has no state field in frame.EventSpecs")
}

func itoa(i int) string { return strconv.Itoa(i) }

func portOf(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func addrOf(t testing.TB, s *httptest.Server) netip.AddrPort {
	t.Helper()
	ap, err := netip.ParseAddrPort(s.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	return ap
}

// tlsConfigFor trusts the certificates of the given httptest TLS servers.
func tlsConfigFor(srvs ...*httptest.Server) *tls.Config {
	pool := x509.NewCertPool()
	for _, s := range srvs {
		pool.AddCert(s.Certificate())
	}
	return &tls.Config{RootCAs: pool}
}

func describeResp(r *frame.NetResponse) string {
	if r == nil {
		return "<nil>"
	}
	if !r.OK {
		if r.Error == nil {
			return "ok:false without error"
		}
		return fmt.Sprintf("error %s: %s", r.Error.Code, r.Error.Message)
	}
	status := 0
	if r.Status != nil {
		status = *r.Status
	}
	return fmt.Sprintf("ok status %d", status)
}

// wantCode asserts r is an error with code and records that code.
func wantCode(t testing.TB, r *frame.NetResponse, code string) *frame.Error {
	t.Helper()
	if r.OK || r.Error == nil || r.Error.Code != code {
		t.Fatalf("got %s, want %s", describeResp(r), code)
	}
	if r.Error.Retryable != frame.Retryable(code) {
		t.Errorf("%s: retryable %v", code, r.Error.Retryable)
	}
	produced.Store(code, true)
	return r.Error
}

// wantOK asserts r is a success and returns its body.
func wantOK(t testing.TB, r *frame.NetResponse, status int) string {
	t.Helper()
	if !r.OK || r.Status == nil || *r.Status != status {
		t.Fatalf("got %s, want ok %d", describeResp(r), status)
	}
	if r.Body == nil {
		return ""
	}
	return *r.Body
}

func always() ConfirmFunc {
	return func(context.Context, ConfirmRequest) (Decision, error) { return Always, nil }
}

// loopGate builds a Gate that may reach exactly the given loopback servers:
// their addresses are allowed, 127.0.0.1 may be used over plain http, their
// certificates are trusted, and the names in res resolve.
func loopGate(t testing.TB, cfg Config, res StaticResolver, srvs []*httptest.Server, opts ...Option) *Gate {
	t.Helper()
	var allowed []netip.AddrPort
	var tlsSrvs []*httptest.Server
	for _, s := range srvs {
		allowed = append(allowed, addrOf(t, s))
		if s.TLS != nil {
			tlsSrvs = append(tlsSrvs, s)
		}
	}
	if !slices.Contains(cfg.DevHTTPHosts, "127.0.0.1") {
		cfg.DevHTTPHosts = append(cfg.DevHTTPHosts, "127.0.0.1")
	}
	if res == nil {
		res = StaticResolver{}
	}
	all := append([]Option{WithResolver(res), WithAllowedAddrs(allowed...), WithTLSConfig(tlsConfigFor(tlsSrvs...))}, opts...)
	g, err := New(cfg, all...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func get(g *Gate, app App, url string, headers map[string]string) *frame.NetResponse {
	return g.Fetch(context.Background(), app, &frame.NetRequest{RequestID: "r1", InstanceID: "i1", URL: url, Method: "GET", Headers: headers})
}

func send(g *Gate, app App, method, url string, headers map[string]string, body *string) *frame.NetResponse {
	return g.Fetch(context.Background(), app, &frame.NetRequest{RequestID: "r1", InstanceID: "i1", URL: url, Method: method, Headers: headers, Body: body})
}

func ptr[T any](v T) *T { return &v }

// exampleURL is the TLS server's URL under the name example.com, which its
// certificate carries; res must resolve example.com to 127.0.0.1.
func exampleURL(t testing.TB, s *httptest.Server, path string) string {
	return "https://example.com:" + portOf(t, s.URL) + path
}
