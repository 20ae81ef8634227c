package netgate

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

var app1 = App{Key: "todo", Name: "Todo"}

func exampleRes() StaticResolver {
	return StaticResolver{"example.com": {netip.MustParseAddr("127.0.0.1")}}
}

func TestFetchTLSAndHeaderWhitelist(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json")
		h.Set("Set-Cookie", "session=abc")
		h.Set("X-Ratelimit-Remaining", "41")
		h.Set("ETag", `"v1"`)
		h.Set("Server", "secret-build-7")
		h.Set("X-Internal", "leak")
		h.Set("Cache-Control", "no-store")
		fmt.Fprint(w, `{"hello":"world"}`)
	}))
	defer srv.Close()
	var audit []Entry
	var mu sync.Mutex
	g := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()),
		WithAuditSink(func(e Entry) { mu.Lock(); audit = append(audit, e); mu.Unlock() }))
	r := get(g, app1, exampleURL(t, srv, "/x?q=1"), nil)
	if body := wantOK(t, r, 200); body != `{"hello":"world"}` {
		t.Fatalf("body %q", body)
	}
	if r.BodyEncoding == nil || *r.BodyEncoding != frame.BodyEncodingUtf8 || r.Truncated != nil {
		t.Fatalf("encoding %v truncated %v", r.BodyEncoding, r.Truncated)
	}
	want := map[string]string{"content-type": "application/json", "x-ratelimit-remaining": "41", "etag": `"v1"`, "cache-control": "no-store", "content-length": "17"}
	if fmt.Sprint(r.Headers) != fmt.Sprint(want) {
		t.Fatalf("headers %v, want %v", r.Headers, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(audit) != 1 {
		t.Fatalf("audit %v", audit)
	}
	e := audit[0]
	if e.App != "todo" || e.Method != "GET" || e.Origin != "https://example.com:"+portOf(t, srv.URL) ||
		e.Decision != DecisionAllowed || e.Status != 200 || e.Bytes != 17 || e.Grant != "always" {
		t.Fatalf("audit entry %+v", e)
	}
	if got := g.Audit(); len(got) != 1 || got[0] != e {
		t.Fatalf("Audit() %v", got)
	}
}

func TestDefaultRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	// The same server, the same trust, but no allowance: refused.
	g, err := New(Config{}, WithResolver(exampleRes()), WithConfirmer(always()), WithTLSConfig(tlsConfigFor(srv)))
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, get(g, app1, srv.URL, nil), frame.CodeNetSSRFBlocked)
	wantCode(t, get(g, app1, exampleURL(t, srv, "/"), nil), frame.CodeNetSSRFBlocked)
	// The allowance is for one address:port; another port of 127.0.0.1 stays refused.
	other := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer other.Close()
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	wantCode(t, get(g2, app1, other.URL, nil), frame.CodeNetSSRFBlocked)
	if hits.Load() != 0 {
		t.Fatalf("%d requests reached loopback", hits.Load())
	}
	wantOK(t, get(g2, app1, srv.URL, nil), 200)
}

func TestEveryMethodAndBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("Content-Type"), b)
	}))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	for _, m := range frame.NetMethods {
		var body *string
		if m != http.MethodGet && m != http.MethodHead {
			body = ptr("payload-" + m)
		}
		r := send(g, app1, m, srv.URL+"/m", map[string]string{"Content-Type": "text/x-test"}, body)
		got := wantOK(t, r, 200)
		want := m + " text/x-test "
		if body != nil {
			want += *body
		}
		if m == http.MethodHead {
			want = ""
		}
		if got != want {
			t.Errorf("%s: body %q, want %q", m, got, want)
		}
	}
	wantCode(t, send(g, app1, "GET", srv.URL, nil, ptr("x")), frame.CodeNetInvalidRequest)
	wantCode(t, send(g, app1, "HEAD", srv.URL, nil, ptr("")), frame.CodeNetInvalidRequest)
	wantCode(t, send(g, app1, "TRACE", srv.URL, nil, nil), frame.CodeNetInvalidRequest)
	wantCode(t, send(g, app1, "get", srv.URL, nil, nil), frame.CodeNetInvalidRequest)
	big := strings.Repeat("a", frame.MaxNetRequestBodyBytes+1)
	wantCode(t, send(g, app1, "POST", srv.URL, nil, &big), frame.CodeNetInvalidRequest)
	atLimit := strings.Repeat("a", frame.MaxNetRequestBodyBytes)
	if got := wantOK(t, send(g, app1, "POST", srv.URL, nil, &atLimit), 200); len(got) != len("POST  ")+len(atLimit) {
		t.Errorf("a body at the limit came back as %d bytes", len(got))
	}
}

func TestRequestHeaders(t *testing.T) {
	var seen http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r.Header.Clone() }))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	for _, h := range []map[string]string{
		{"Authorization": "Bearer x"}, {"cookie": "a=b"}, {"X-API-KEY": "k"}, {"Proxy-Authorization": "x"},
		{"Host": "evil.example"}, {"Transfer-Encoding": "chunked"}, {"Content-Length": "5"}, {"Connection": "close"},
		{"Proxy-Foo": "x"}, {"X-Ok": "a\r\nInjected: 1"}, {"X-Ok": "a\nb"}, {"Bad Name": "x"}, {"": "x"},
		{"X-Dup": "1", "x-dup": "2"},
	} {
		wantCode(t, get(g, app1, srv.URL, h), frame.CodeNetInvalidRequest)
	}
	wantOK(t, get(g, app1, srv.URL, map[string]string{"X-Custom": "1", "Accept": "application/json", "Accept-Encoding": "br"}), 200)
	if seen.Get("X-Custom") != "1" || seen.Get("Accept") != "application/json" {
		t.Fatalf("headers at the server: %v", seen)
	}
	if ae := seen.Get("Accept-Encoding"); ae != "gzip" {
		t.Fatalf("Accept-Encoding at the server %q: the app's value must be dropped so gunzip stays on", ae)
	}
}

func TestBinaryBody(t *testing.T) {
	blob := make([]byte, 300<<10)
	rand.Read(blob)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(blob)
	}))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	r := get(g, app1, srv.URL, nil)
	body := wantOK(t, r, 200)
	if r.BodyEncoding == nil || *r.BodyEncoding != frame.BodyEncodingBase64 {
		t.Fatalf("encoding %v", r.BodyEncoding)
	}
	got, err := base64.StdEncoding.DecodeString(body)
	if err != nil || !bytes.Equal(got, blob) {
		t.Fatalf("binary body did not round-trip (%v)", err)
	}
	// Valid UTF-8 under a binary type stays binary.
	srv2 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		fmt.Fprint(w, "plain")
	}))
	defer srv2.Close()
	g2 := loopGate(t, Config{}, nil, []*httptest.Server{srv2}, WithConfirmer(always()))
	if r := get(g2, app1, srv2.URL, nil); wantOK(t, r, 200) != "cGxhaW4=" {
		t.Fatalf("octet-stream body %q", *r.Body)
	}
}

func TestResponseCaps(t *testing.T) {
	limit := frame.MaxNetResponseBodyBytes
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/long-text": // "é" is two bytes: the cap falls inside one
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			io.WriteString(w, "x"+strings.Repeat("é", limit))
		case "/exact":
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("z", limit))
		case "/big-binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(make([]byte, 900<<10))
		case "/long-binary":
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(make([]byte, limit+10))
		case "/escapes": // fits the body cap, not the frame: every byte escapes
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, strings.Repeat("\"", limit-1))
		}
	}))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	r := get(g, app1, srv.URL+"/long-text", nil)
	body := wantOK(t, r, 200)
	if r.Truncated == nil || !*r.Truncated {
		t.Fatal("a body over the cap must come back truncated:true")
	}
	if !utf8.ValidString(body) || len(body) > limit || len(body) < limit-3 {
		t.Fatalf("truncated body: %d bytes, valid UTF-8 %v", len(body), utf8.ValidString(body))
	}
	if _, ok := r.Headers["content-length"]; ok {
		t.Fatal("content-length of a cut body must not pass")
	}
	r = get(g, app1, srv.URL+"/exact", nil)
	if body := wantOK(t, r, 200); len(body) != limit || r.Truncated != nil {
		t.Fatalf("a body of exactly the cap: %d bytes, truncated %v", len(body), r.Truncated)
	}
	wantCode(t, get(g, app1, srv.URL+"/big-binary", nil), frame.CodeNetSizeExceeded)
	wantCode(t, get(g, app1, srv.URL+"/long-binary", nil), frame.CodeNetSizeExceeded)
	wantCode(t, get(g, app1, srv.URL+"/escapes", nil), frame.CodeNetSizeExceeded)
}

// TestEndlessBodyIsBounded: an answer that never ends is cut at the size
// limit (the server never stops, so returning at all is the gate's doing),
// the gate hangs up on the server, and reading it costs bounded memory.
func TestEndlessBodyIsBounded(t *testing.T) {
	var written atomic.Int64
	ended := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/plain")
		chunk := bytes.Repeat([]byte("endless "), 4096)
		for {
			n, err := w.Write(chunk)
			written.Add(int64(n))
			if err != nil || r.Context().Err() != nil {
				return
			}
		}
	}))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := get(g, app1, srv.URL, nil)
	runtime.ReadMemStats(&after)
	wantOK(t, r, 200)
	if r.Truncated == nil || !*r.Truncated {
		t.Fatal("endless body not truncated")
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second): // a hang, not a speed
		t.Fatalf("the gate still reads the endless body (%d bytes written)", written.Load())
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Fatalf("reading an endless body allocated %d MiB", alloc>>20)
	}
	srv.CloseClientConnections()
}

// TestSlowBodyTimesOut: a server that drips forever is ended by the gate's
// timeout (nothing else could end it), with a message that says so, and
// the gate hangs up on it.
func TestSlowBodyTimesOut(t *testing.T) {
	ended := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(ended)
		w.Header().Set("Content-Type", "text/plain")
		for {
			io.WriteString(w, "drip ")
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()), WithTimeout(400*time.Millisecond))
	e := wantCode(t, get(g, app1, srv.URL, nil), frame.CodeNetFetchFailed)
	if !strings.Contains(e.Message, "timed out") {
		t.Fatalf("message %q", e.Message)
	}
	select {
	case <-ended:
	case <-time.After(30 * time.Second): // a hang, not a speed
		t.Fatal("the dripping server's request never ended")
	}
	// A slow header is the same timeout.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	g2 := loopGate(t, Config{}, nil, []*httptest.Server{slow}, WithConfirmer(always()), WithTimeout(300*time.Millisecond))
	wantCode(t, get(g2, app1, slow.URL, nil), frame.CodeNetFetchFailed)
}

func TestCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	r := g.Fetch(ctx, app1, &frame.NetRequest{RequestID: "r9", URL: srv.URL, Method: "GET"})
	wantCode(t, r, frame.CodeCancelled)
}

func TestConnectFailure(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ap := netip.MustParseAddrPort(l.Addr().String())
	l.Close() // nothing listens there now
	g, err := New(Config{DevHTTPHosts: []string{"127.0.0.1"}}, WithAllowedAddrs(ap), WithConfirmer(always()))
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, get(g, app1, "http://"+ap.String()+"/", nil), frame.CodeNetFetchFailed)
	// TLS to a server whose certificate is not trusted.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	g2, _ := New(Config{}, WithAllowedAddrs(addrOf(t, srv)), WithConfirmer(always()))
	e := wantCode(t, get(g2, app1, srv.URL, nil), frame.CodeNetFetchFailed)
	if !strings.Contains(e.Message, "certificate") {
		t.Fatalf("message %q", e.Message)
	}
}

func TestProxyFromEnvironmentIgnored(t *testing.T) {
	var proxied atomic.Int32
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied.Add(1) }))
	defer proxy.Close()
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "direct") }))
	defer srv.Close()
	g := loopGate(t, Config{}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	if got := wantOK(t, get(g, app1, srv.URL, nil), 200); got != "direct" {
		t.Fatalf("body %q", got)
	}
	if proxied.Load() != 0 {
		t.Fatal("the environment's proxy was used")
	}
}

func TestSchemeAndDenyList(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	res := StaticResolver{
		"api.example.com": {netip.MustParseAddr("127.0.0.1")},
		"tracker.example": {netip.MustParseAddr("127.0.0.1")},
		"x.ads.example":   {netip.MustParseAddr("127.0.0.1")},
		"evilnet.example": {netip.MustParseAddr("8.8.4.4")},
		"dev.example":     {netip.MustParseAddr("127.0.0.1")},
		"notads.example":  {netip.MustParseAddr("127.0.0.1")},
	}
	cfg := Config{Deny: []string{"Tracker.Example.", "*.ads.example", "8.8.4.0/24"}, DevHTTPHosts: []string{"dev.example"}}
	g := loopGate(t, cfg, res, []*httptest.Server{srv}, WithConfirmer(always()))
	port := portOf(t, srv.URL)
	wantCode(t, get(g, app1, "http://api.example.com:"+port+"/", nil), frame.CodeNetSchemeBlocked)
	wantOK(t, get(g, app1, "http://dev.example:"+port+"/", nil), 200)
	wantOK(t, get(g, app1, "http://DEV.example.:"+port+"/", nil), 200)
	wantCode(t, get(g, app1, "https://tracker.example/", nil), frame.CodeNetHostBlocked)
	wantCode(t, get(g, app1, "https://x.ads.example/", nil), frame.CodeNetHostBlocked)
	wantCode(t, get(g, app1, "https://evilnet.example/", nil), frame.CodeNetHostBlocked)
	wantCode(t, get(g, app1, "https://8.8.4.4/", nil), frame.CodeNetHostBlocked)
	wantCode(t, get(g, app1, "ftp://api.example.com/", nil), frame.CodeNetSchemeBlocked)
	// *.ads.example is the subdomains, not a name that merely ends the same.
	if c := g.Check(context.Background(), App{}, "GET", "http://notads.example:"+port+"/"); c.Code != frame.CodeNetSchemeBlocked {
		t.Fatalf("notads.example: %+v", c)
	}
}

// TestNumericHostsNeverResolved: glibc reads "2130706433" as 127.0.0.1 and
// the pure-Go resolver does not; the gate reads it itself and never asks.
func TestNumericHostsNeverResolved(t *testing.T) {
	res := &countingResolver{answers: [][]netip.Addr{{netip.MustParseAddr("8.8.8.8")}}}
	g, _ := New(Config{}, WithResolver(res), WithConfirmer(always()))
	for _, u := range []string{"https://2130706433/", "https://0x7f.1/", "https://127.1/", "https://0177.0.0.1/", "https://[::1]/", "https://%31%32%37.1/"} {
		wantCode(t, get(g, app1, u, nil), frame.CodeNetSSRFBlocked)
		if c := g.Check(context.Background(), App{}, "GET", u); c.Code != frame.CodeNetSSRFBlocked {
			t.Errorf("check %s: %+v", u, c)
		}
	}
	if res.calls != 0 {
		t.Fatalf("numeric hosts reached the resolver %d times", res.calls)
	}
	if r := g.Fetch(context.Background(), app1, nil); r.OK || r.Error == nil || r.Error.Code != frame.CodeHostError {
		t.Fatalf("nil request: %s", describeResp(r))
	}
}

func TestDNSFailure(t *testing.T) {
	g, _ := New(Config{}, WithResolver(StaticResolver{}), WithConfirmer(always()))
	e := wantCode(t, get(g, app1, "https://nowhere.example/", nil), frame.CodeNetFetchFailed)
	if !strings.Contains(e.Message, "nowhere.example") {
		t.Fatalf("message %q", e.Message)
	}
}

// countingResolver answers from a script, one answer per call, repeating
// the last, and counts calls.
type countingResolver struct {
	mu      sync.Mutex
	answers [][]netip.Addr
	calls   int
}

func (r *countingResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	a := r.answers[min(r.calls, len(r.answers)-1)]
	r.calls++
	return a, nil
}

// TestDNSRebinding: the name answers a permitted address first and loopback
// after. The dial goes to the vetted first answer; the second lookup of a
// later hop is vetted again and refused.
func TestDNSRebinding(t *testing.T) {
	var evil atomic.Int32
	good := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/again" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		io.WriteString(w, "good")
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	good.Listener = l
	good.Start()
	defer good.Close()
	port := portOf(t, good.URL)
	el, err := net.Listen("tcp", "127.0.0.2:"+port)
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2:%s: %v", port, err)
	}
	bad := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { evil.Add(1); io.WriteString(w, "evil") })}
	go bad.Serve(el)
	defer bad.Close()

	good1, evil1 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2")
	res := &countingResolver{answers: [][]netip.Addr{{good1}, {evil1}}}
	g := loopGate(t, Config{DevHTTPHosts: []string{"rebind.example"}}, nil, []*httptest.Server{good}, WithResolver(res), WithConfirmer(always()))
	if got := wantOK(t, get(g, app1, "http://rebind.example:"+port+"/", nil), 200); got != "good" {
		t.Fatalf("body %q", got)
	}
	if res.calls != 1 {
		t.Fatalf("%d lookups for one request: the dial must use the vetted answer", res.calls)
	}
	// A redirect hop looks the name up again: the rebound answer is vetted
	// and refused.
	res2 := &countingResolver{answers: [][]netip.Addr{{good1}, {evil1}}}
	g2 := loopGate(t, Config{DevHTTPHosts: []string{"rebind.example"}}, nil, []*httptest.Server{good}, WithResolver(res2), WithConfirmer(always()))
	e := wantCode(t, get(g2, app1, "http://rebind.example:"+port+"/again", nil), frame.CodeNetRedirectBlocked)
	if !strings.Contains(e.Message, frame.CodeNetSSRFBlocked) || res2.calls != 2 {
		t.Fatalf("message %q, %d lookups", e.Message, res2.calls)
	}
	if evil.Load() != 0 {
		t.Fatalf("the rebound address got %d requests", evil.Load())
	}
}

// TestDialerVetsEveryAddress drives the dialer and its Control hook directly:
// a dial the gate did not vet resolves and vets itself, and a socket to a
// blocked address is refused.
func TestDialerVetsEveryAddress(t *testing.T) {
	g, _ := New(Config{}, WithResolver(StaticResolver{"inner.example": {netip.MustParseAddr("10.1.1.1")}}))
	for _, addr := range []string{"10.0.0.1:443", "[::1]:443", "inner.example:443", "[::ffff:127.0.0.1]:80"} {
		_, err := g.dialContext(context.Background(), "tcp", addr)
		var f *failure
		if !errors.As(err, &f) || f.code != frame.CodeNetSSRFBlocked {
			t.Errorf("dial %s: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:80", "169.254.169.254:80", "[fd00:ec2::254]:80"} {
		if err := g.control("tcp4", addr, nil); err == nil {
			t.Errorf("control %s: nil", addr)
		}
	}
	if err := g.control("tcp4", "8.8.8.8:443", nil); err != nil {
		t.Errorf("control 8.8.8.8: %v", err)
	}
}

func TestRedirects(t *testing.T) {
	var srvURL string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/hop/%d", &n); err == nil && n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		switch r.URL.Path {
		case "/to-private":
			http.Redirect(w, r, "https://10.0.0.1/", http.StatusFound)
		case "/to-metadata":
			http.Redirect(w, r, "https://2852039166/latest/", http.StatusTemporaryRedirect)
		case "/to-http":
			http.Redirect(w, r, "http://example.com:"+portOf(t, srvURL)+"/hop/0", http.StatusFound)
		case "/to-userinfo":
			http.Redirect(w, r, "https://a@example.com/", http.StatusFound)
		case "/to-backslash":
			w.Header().Set("Location", `/\evil.example/`)
			w.WriteHeader(http.StatusFound)
		case "/post-303":
			http.Redirect(w, r, "/echo", http.StatusSeeOther)
		case "/post-307":
			http.Redirect(w, r, "/echo", http.StatusTemporaryRedirect)
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s", r.Method, b)
		default:
			io.WriteString(w, "arrived")
		}
	}))
	defer srv.Close()
	srvURL = srv.URL
	g := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	if got := wantOK(t, get(g, app1, srv.URL+"/hop/5", nil), 200); got != "arrived" {
		t.Fatalf("5 hops: %q", got)
	}
	if a := g.Audit(); a[len(a)-1].Redirects != 5 {
		t.Fatalf("audit redirects %d", a[len(a)-1].Redirects)
	}
	e := wantCode(t, get(g, app1, srv.URL+"/hop/6", nil), frame.CodeNetRedirectBlocked)
	if !strings.Contains(e.Message, "more than 5") {
		t.Fatalf("message %q", e.Message)
	}
	for _, p := range []string{"/to-private", "/to-metadata", "/to-http", "/to-userinfo", "/to-backslash"} {
		wantCode(t, get(g, app1, srv.URL+p, nil), frame.CodeNetRedirectBlocked)
	}
	if got := wantOK(t, send(g, app1, "POST", srv.URL+"/post-303", nil, ptr("data")), 200); got != "GET " {
		t.Fatalf("303: %q", got)
	}
	if got := wantOK(t, send(g, app1, "POST", srv.URL+"/post-307", nil, ptr("data")), 200); got != "POST data" {
		t.Fatalf("307: %q", got)
	}
}

func TestCrossOriginRedirectHeaders(t *testing.T) {
	var atB http.Header
	b := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		atB = r.Header.Clone()
		io.WriteString(w, "at b")
	}))
	defer b.Close()
	a := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, b.URL+"/landing", http.StatusFound)
	}))
	defer a.Close()
	var asked []string
	confirm := ConfirmFunc(func(_ context.Context, req ConfirmRequest) (Decision, error) {
		asked = append(asked, req.Origin)
		return Once, nil
	})
	g := loopGate(t, Config{}, exampleRes(), []*httptest.Server{a, b}, WithConfirmer(confirm))
	got := wantOK(t, get(g, app1, exampleURL(t, a, "/start"), map[string]string{"X-Custom": "private-to-a", "Accept": "text/plain"}), 200)
	if got != "at b" {
		t.Fatalf("body %q", got)
	}
	if atB.Get("X-Custom") != "" || atB.Get("Accept") != "text/plain" {
		t.Fatalf("headers at b: %v", atB)
	}
	if len(asked) != 2 || asked[1] != "https://127.0.0.1:"+portOf(t, b.URL) {
		t.Fatalf("the cross-origin hop needs its own approval; asked %v", asked)
	}
	// Refused approval of the hop.
	deny := ConfirmFunc(func(_ context.Context, req ConfirmRequest) (Decision, error) {
		if strings.Contains(req.URL, "example.com") {
			return Once, nil
		}
		return Deny, nil
	})
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{a, b}, WithConfirmer(deny))
	wantCode(t, get(g2, app1, exampleURL(t, a, "/start"), nil), frame.CodeNetRedirectBlocked)
}

func TestCredentialInjectionAndRedirects(t *testing.T) {
	const token = "tok_live_5f3a9c2e71d04b8a"
	t.Setenv("NETGATE_TEST_TOKEN", token)
	var bHits atomic.Int32
	b := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { bHits.Add(1) }))
	defer b.Close()
	var sawAuth []string
	var mu sync.Mutex
	a := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		sawAuth = append(sawAuth, r.URL.Path+"="+r.Header.Get("Authorization"))
		mu.Unlock()
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, b.URL+"/steal", http.StatusFound)
		case "/same":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/downgrade": // same host, plain http: another origin
			http.Redirect(w, r, "http://example.com:"+portOf(t, b.URL)+"/landing", http.StatusFound)
		case "/landing":
			io.WriteString(w, "landed")
		case "/denied":
			w.WriteHeader(http.StatusUnauthorized)
		case "/forbidden":
			w.WriteHeader(http.StatusForbidden)
		}
	}))
	defer a.Close()
	origin := "https://example.com:" + portOf(t, a.URL)
	cfg := Config{DevHTTPHosts: []string{"example.com"},
		Connections: []Connection{{Name: "api", Origin: origin, Header: "Authorization", ValueFormat: "Bearer {secret}", SecretEnv: "NETGATE_TEST_TOKEN"}}}
	var events []ConnectionEvent
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{a, b}, WithConfirmer(always()),
		WithConnectionHook(func(e ConnectionEvent) { events = append(events, e) }))
	if c := g.Capabilities(); !c.Net || !c.Auth {
		t.Fatalf("capabilities %+v", c)
	}
	if got := wantOK(t, get(g, app1, origin+"/same", nil), 200); got != "landed" {
		t.Fatalf("body %q", got)
	}
	if len(events) != 1 || events[0] != (ConnectionEvent{App: "todo", Connection: "api", State: StateConnected}) {
		t.Fatalf("events %v", events)
	}
	mu.Lock()
	if len(sawAuth) != 2 || sawAuth[0] != "/same=Bearer "+token || sawAuth[1] != "/landing=Bearer "+token {
		t.Fatalf("credential at a: %v", sawAuth)
	}
	mu.Unlock()
	e := wantCode(t, get(g, app1, origin+"/away", nil), frame.CodeNetRedirectBlocked)
	if strings.Contains(e.Message, token) {
		t.Fatal("the message holds the secret")
	}
	e = wantCode(t, get(g, app1, origin+"/downgrade", nil), frame.CodeNetRedirectBlocked)
	if !strings.Contains(e.Message, "credential") {
		t.Fatalf("message %q", e.Message)
	}
	if bHits.Load() != 0 {
		t.Fatal("the credentialed chain reached another origin")
	}
	wantCode(t, get(g, app1, origin+"/denied", nil), frame.CodeNetAuthFailed)
	wantCode(t, get(g, app1, origin+"/forbidden", nil), frame.CodeNetAuthFailed)
	// Without a credential a 401 is an ordinary answer.
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{a}, WithConfirmer(always()))
	wantOK(t, get(g2, app1, origin+"/denied", nil), 401)
	for _, en := range g.Audit() {
		if b, _ := json.Marshal(en); strings.Contains(string(b), token) {
			t.Fatalf("audit holds the secret: %s", b)
		}
	}
	if err := g.Revoke("todo", origin+"/anything"); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[1].State != StateRevoked {
		t.Fatalf("events %v", events)
	}
}

func TestScrubEchoedSecret(t *testing.T) {
	const token = "sk-echo/9f8e+7d6c5b4a3=21"
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	os.WriteFile(secretFile, []byte(token+"\n"), 0o600)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-Token")
		w.Header().Set("Set-Cookie", "t="+got)
		w.Header().Set("ETag", `"`+got+`"`)
		w.Header().Set("X-Ratelimit-Echo", got)
		w.Header().Set("Content-Type", "application/json")
		js, _ := json.Marshal(map[string]string{"token": got})
		body := fmt.Sprintf("raw=%s json=%s url=%s b64=%s", got, js, url.QueryEscape(got),
			base64.StdEncoding.EncodeToString([]byte(got)))
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") && r.URL.Path == "/gz" {
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, body)
			zw.Close()
			return
		}
		io.WriteString(w, body)
	}))
	defer srv.Close()
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Connections: []Connection{{Name: "echo", URLPrefix: origin + "/", Header: "X-Token", SecretFile: secretFile}}}
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	for _, path := range []string{"/plain", "/gz"} {
		r := get(g, app1, origin+path, map[string]string{"Accept-Encoding": "gzip"})
		body := wantOK(t, r, 200)
		all := body + fmt.Sprint(r.Headers)
		for _, leak := range []string{token, "9f8e", base64.StdEncoding.EncodeToString([]byte(token))[:12]} {
			if strings.Contains(all, leak) {
				t.Fatalf("%s: %q leaks in %s", path, leak, all)
			}
		}
		if strings.Count(body, redacted) != 4 {
			t.Fatalf("%s: body %q", path, body)
		}
		if _, ok := r.Headers["set-cookie"]; ok {
			t.Fatal("set-cookie crossed")
		}
		if r.Headers["etag"] != `"`+redacted+`"` || r.Headers["x-ratelimit-echo"] != redacted {
			t.Fatalf("%s: headers %v", path, r.Headers)
		}
	}
}

func TestTruncationNeverEndsInPartOfASecret(t *testing.T) {
	const token = "PARTIAL-secret-0123456789abcdef"
	t.Setenv("NETGATE_PARTIAL", token)
	limit := frame.MaxNetResponseBodyBytes
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		// The secret straddles the cap, after one whole echo that shrinks
		// when scrubbed.
		io.WriteString(w, token+strings.Repeat("a", limit-len(token)-10)+token+strings.Repeat("b", 100))
	}))
	defer srv.Close()
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Connections: []Connection{{Name: "p", Origin: origin, Header: "X-Key", SecretEnv: "NETGATE_PARTIAL"}}}
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	r := get(g, app1, origin+"/", nil)
	body := wantOK(t, r, 200)
	if r.Truncated == nil || !*r.Truncated {
		t.Fatal("not truncated")
	}
	if strings.Contains(body, token) || strings.HasSuffix(body, token[:5]) || strings.HasSuffix(body, "P") {
		t.Fatalf("body ends %q", body[len(body)-40:])
	}
}

func TestAmbiguousConnection(t *testing.T) {
	t.Setenv("NETGATE_A", "secret-aaaaaaaa")
	t.Setenv("NETGATE_B", "secret-bbbbbbbb")
	var seen []string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("X-A")+"|"+r.Header.Get("X-B"))
	}))
	defer srv.Close()
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Connections: []Connection{
		{Name: "whole", Origin: origin, Header: "X-A", SecretEnv: "NETGATE_A"},
		{Name: "v2", URLPrefix: origin + "/v2", Header: "X-B", SecretEnv: "NETGATE_B"},
	}}
	g := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	e := wantCode(t, get(g, app1, origin+"/v2/items", nil), frame.CodeNetAmbiguousConnection)
	if !strings.Contains(e.Message, "whole") || !strings.Contains(e.Message, "v2") {
		t.Fatalf("message %q", e.Message)
	}
	wantCode(t, get(g, app1, origin+"/v2", nil), frame.CodeNetAmbiguousConnection)
	wantCode(t, get(g, app1, origin+"/v1/../v2/x", nil), frame.CodeNetAmbiguousConnection)
	wantOK(t, get(g, app1, origin+"/v20", nil), 200)
	wantOK(t, get(g, app1, origin+"/other", nil), 200)
	if fmt.Sprint(seen) != "[secret-aaaaaaaa| secret-aaaaaaaa|]" {
		t.Fatalf("credentials at the server: %v", seen)
	}
	if c := g.Check(context.Background(), App{}, "GET", origin+"/v2/x"); c.Code != frame.CodeNetAmbiguousConnection {
		t.Fatalf("check %+v", c)
	}
	if c := g.Check(context.Background(), App{}, "GET", origin+"/x"); !c.Allow || c.Connection != "whole" {
		t.Fatalf("check %+v", c)
	}
}

func TestRateCeiling(t *testing.T) {
	release := make(chan struct{})
	holding := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			holding <- struct{}{}
			<-release
		}
	}))
	defer srv.Close()
	// In flight: one request holds the only slot.
	g := loopGate(t, Config{Rate: Rate{PerMinute: 1000, InFlight: 1}}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	done := make(chan *frame.NetResponse)
	go func() { done <- get(g, app1, srv.URL+"/hold", nil) }()
	<-holding
	e := wantCode(t, get(g, app1, srv.URL+"/quick", nil), frame.CodeNetFetchFailed)
	if e.RetryAfterMs == nil || *e.RetryAfterMs != int(inFlightRetry.Milliseconds()) {
		t.Fatalf("retryAfterMs %v", e.RetryAfterMs)
	}
	// Another app has its own ceiling.
	wantOK(t, get(g, App{Key: "other"}, srv.URL+"/quick", nil), 200)
	close(release)
	wantOK(t, <-done, 200)
	wantOK(t, get(g, app1, srv.URL+"/quick", nil), 200)

	// Per minute: 3 starts, then refused with when to retry.
	g2 := loopGate(t, Config{Rate: Rate{PerMinute: 3}}, nil, []*httptest.Server{srv}, WithConfirmer(always()))
	for i := 0; i < 3; i++ {
		wantOK(t, get(g2, app1, srv.URL+"/quick", nil), 200)
	}
	e = wantCode(t, get(g2, app1, srv.URL+"/quick", nil), frame.CodeNetFetchFailed)
	if e.RetryAfterMs == nil || *e.RetryAfterMs <= 0 || *e.RetryAfterMs > 60000 {
		t.Fatalf("retryAfterMs %v", e.RetryAfterMs)
	}
	if !strings.Contains(e.Message, "rate ceiling") || !e.Retryable {
		t.Fatalf("error %+v", e)
	}
	if a := g2.Audit(); a[len(a)-1].Code != frame.CodeNetFetchFailed || a[len(a)-1].Decision != DecisionFailed {
		t.Fatalf("audit %+v", a[len(a)-1])
	}
}

func TestDefaultRate(t *testing.T) {
	l := newLimiter(DefaultPerMinute, DefaultInFlight)
	now := time.Unix(1_000_000, 0)
	var rels []func()
	for i := 0; i < DefaultInFlight; i++ {
		rel, _, ok := l.acquire("a", now)
		if !ok {
			t.Fatal("refused under the in-flight ceiling")
		}
		rels = append(rels, rel)
	}
	if _, wait, ok := l.acquire("a", now); ok || wait != inFlightRetry {
		t.Fatalf("fifth in flight: ok %v wait %v", ok, wait)
	}
	for _, r := range rels {
		r()
	}
	for i := DefaultInFlight; i < DefaultPerMinute; i++ {
		rel, _, ok := l.acquire("a", now.Add(time.Duration(i)*100*time.Millisecond))
		if !ok {
			t.Fatalf("request %d refused", i)
		}
		rel()
	}
	_, wait, ok := l.acquire("a", now.Add(30*time.Second))
	if ok || wait != 30*time.Second {
		t.Fatalf("61st: ok %v wait %v", ok, wait)
	}
	if rel, _, ok := l.acquire("a", now.Add(60*time.Second)); !ok {
		t.Fatal("the window did not slide")
	} else {
		rel()
	}
}
