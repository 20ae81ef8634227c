package netgate

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// vector is one row of testdata/ssrf-vectors.json, the table the CLI's
// `net check` test runs too.
type vector struct {
	URL     string   `json:"url"`
	Code    string   `json:"code"` // "" = allowed
	Note    string   `json:"note"`
	Resolve []string `json:"resolve"`
	Address string   `json:"address"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/ssrf-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []vector
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestVectorTableSize(t *testing.T) {
	vs := loadVectors(t)
	refused := 0
	for _, v := range vs {
		if v.Code != "" {
			refused++
			if frame.Retryable(v.Code) != (v.Code == frame.CodeNetFetchFailed) {
				t.Errorf("%s: code %q is not the registry's", v.URL, v.Code)
			}
		}
	}
	if refused < 80 {
		t.Fatalf("%d refusal vectors; the issue asks for at least 80", refused)
	}
}

// TestVectorsCheck runs every vector through Check, the decision path of
// `net check`.
func TestVectorsCheck(t *testing.T) {
	for _, v := range loadVectors(t) {
		res := StaticResolver{}
		for _, p := range v.Resolve {
			if err := res.ParseResolve(p); err != nil {
				t.Fatal(err)
			}
		}
		g, err := New(Config{}, WithResolver(res))
		if err != nil {
			t.Fatal(err)
		}
		url := strings.ReplaceAll(v.URL, "{port}", "8443")
		got := g.Check(context.Background(), App{}, "GET", url)
		if got.Code != v.Code || got.Allow != (v.Code == "") {
			t.Errorf("%s (%s): got %+v, want code %q", url, v.Note, got, v.Code)
			continue
		}
		if v.Address != "" && got.Address != v.Address {
			t.Errorf("%s: address %q, want %q", url, got.Address, v.Address)
		}
		if v.Code != "" && got.Reason == "" {
			t.Errorf("%s: a refusal without a reason", url)
		}
	}
}

// TestVectorsFetch sends every refused vector as a real net-request while a
// real server listens on the loopback port the vectors name: each answer
// carries the vector's code and the server never sees a request.
func TestVectorsFetch(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer tls.Close()
	res := StaticResolver{}
	vs := loadVectors(t)
	for _, v := range vs {
		for _, p := range v.Resolve {
			if err := res.ParseResolve(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	always := ConfirmFunc(func(context.Context, ConfirmRequest) (Decision, error) { return Always, nil })
	for _, port := range []string{portOf(t, srv.URL), portOf(t, tls.URL)} {
		g, err := New(Config{Rate: Rate{PerMinute: 100000}}, WithResolver(res), WithConfirmer(always),
			WithTLSConfig(tlsConfigFor(tls)))
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vs {
			if v.Code == "" {
				continue
			}
			url := strings.ReplaceAll(v.URL, "{port}", port)
			resp := g.Fetch(context.Background(), App{Key: "vectors", Name: "Vectors"}, &frame.NetRequest{RequestID: "r" + itoa(i), URL: url, Method: "GET"})
			if resp.OK || resp.Error == nil || resp.Error.Code != v.Code {
				t.Errorf("%s (%s): got %s, want %s", url, v.Note, describeResp(resp), v.Code)
			}
			if resp.RequestID != "r"+itoa(i) {
				t.Errorf("%s: requestId %q", url, resp.RequestID)
			}
		}
		if n := len(g.Audit()); n == 0 {
			t.Error("no audit entries")
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the loopback servers saw %d requests", n)
	}
}
