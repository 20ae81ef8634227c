package netgate

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/snuggen/snuggen/frame"
)

// issueSecret is the secret of issue 11 item 7; the connection injects
// "Authorization: Bearer <secret>".
const issueSecret = "sk-live/AbC+123=xyz/SECRET"

// encodings are the ways a hostile (or merely reflecting) upstream spells the
// credential it was sent, each as the request header's value v and the
// secret s in it.
var echoEncodings = map[string]func(v, s string) string{
	"raw":          func(v, s string) string { return s },
	"json-slash":   func(v, s string) string { return strings.ReplaceAll(s, "/", `\/`) },
	"json-u-lower": func(v, s string) string { return uEscape(s, "\\u%04x") },
	"json-u-upper": func(v, s string) string { return uEscape(s, "\\u%04X") },
	"json-u-some": func(v, s string) string {
		return strings.NewReplacer("/", `\u002F`, "+", `\u002b`, "=", `\u003D`).Replace(s)
	},
	"html-named": func(v, s string) string {
		return strings.NewReplacer("/", "&sol;", "+", "&plus;", "=", "&equals;").Replace(s)
	},
	"html-named-nosc": func(v, s string) string {
		return strings.NewReplacer("/", "&sol", "+", "&plus", "=", "&equals").Replace(s)
	},
	"html-dec":       func(v, s string) string { return uEscape(s, "&#%d;") },
	"html-dec-nosc":  func(v, s string) string { return uEscape(s, "&#%d") },
	"html-dec-zeros": func(v, s string) string { return uEscape(s, "&#%07d;") },
	"html-hex":       func(v, s string) string { return uEscape(s, "&#x%x;") },
	"html-hex-upper": func(v, s string) string { return uEscape(s, "&#X%X;") },
	"html-hex-nosc":  func(v, s string) string { return uEscape(s, "&#x%x") },
	"hex-lower":      func(v, s string) string { return hex.EncodeToString([]byte(s)) },
	"hex-upper":      func(v, s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	"hex-spaced":     func(v, s string) string { return spaced(hex.EncodeToString([]byte(s)), 2) },
	"upper":          func(v, s string) string { return strings.ToUpper(s) },
	"lower":          func(v, s string) string { return strings.ToLower(s) },
	"b64":            func(v, s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"b64-raw":        func(v, s string) string { return base64.RawStdEncoding.EncodeToString([]byte(s)) },
	"b64-url":        func(v, s string) string { return base64.URLEncoding.EncodeToString([]byte(s)) },
	"b64-url-raw":    func(v, s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
	"b64-line-0":     func(v, s string) string { return base64.StdEncoding.EncodeToString([]byte("Authorization: " + v)) },
	"b64-line-1": func(v, s string) string {
		return base64.StdEncoding.EncodeToString([]byte("authorization: " + v + "\r\n"))
	},
	"b64-line-2":     func(v, s string) string { return base64.RawURLEncoding.EncodeToString([]byte("XAuthorization: " + v)) },
	"b64-line-3":     func(v, s string) string { return base64.StdEncoding.EncodeToString([]byte("XYAuthorization: " + v)) },
	"b64-mime":       func(v, s string) string { return spaced(base64.StdEncoding.EncodeToString([]byte(v+v)), 7) },
	"b32":            func(v, s string) string { return base32.StdEncoding.EncodeToString([]byte(s)) },
	"b32-line-lower": func(v, s string) string { return strings.ToLower(base32.StdEncoding.EncodeToString([]byte("x: " + v))) },
	"b32-hex":        func(v, s string) string { return base32.HexEncoding.EncodeToString([]byte("xy" + s)) },
	"url":            func(v, s string) string { return strings.NewReplacer("/", "%2F", "+", "%2B", "=", "%3D").Replace(s) },
	"url-all-lower":  func(v, s string) string { return uEscape(s, "%%%02x") },
	"url-double": func(v, s string) string {
		return strings.NewReplacer("/", "%252F", "+", "%252B", "=", "%253d").Replace(s)
	},
	"js-x":         func(v, s string) string { return uEscape(s, "\\x%02x") },
	"js-u-brace":   func(v, s string) string { return uEscape(s, "\\u{%x}") },
	"fullwidth":    func(v, s string) string { return fullwidth(s) },
	"utf16le":      func(v, s string) string { return utf16le(s) },
	"json-of-html": func(v, s string) string { return strings.ReplaceAll(uEscape(s, "&#%d;"), "&", `\u0026`) },
	"mixed":        func(v, s string) string { return mixed(s) },
	"reversed":     func(v, s string) string { return string(reversed([]byte(s))) },
	"rot13":        func(v, s string) string { return string(rot13([]byte(s))) },
	"b64-json-escaped": func(v, s string) string {
		return strings.ReplaceAll(base64.StdEncoding.EncodeToString([]byte(v)), "/", `\/`)
	},
}

func uEscape(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

func spaced(s string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		if i > 0 {
			b.WriteString(" \r\n"[i/n%3 : i/n%3+1])
		}
		b.WriteString(s[i:min(i+n, len(s))])
	}
	return b.String()
}

func fullwidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > ' ' && r < 0x7f {
			r += 0xff01 - '!'
		}
		b.WriteRune(r)
	}
	return b.String()
}

func utf16le(s string) string {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

// mixed spells each character another way, as a hand-written echo could.
func mixed(s string) string {
	forms := []string{"%c", "\\u%04x", "&#%d;", "&#x%X", "%%%02X", "\\x%02x"}
	var b strings.Builder
	for i, r := range s {
		fmt.Fprintf(&b, forms[i%len(forms)], r)
	}
	return b.String()
}

// hostileEcho answers with the credential it received, spelled the way the
// query asks: in a text body, in the ETag, compressed, by range.
func hostileEcho(t testing.TB) *httptest.Server {
	return httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Authorization")
		s := strings.TrimPrefix(v, "Bearer ")
		enc := r.URL.Query().Get("enc")
		switch r.URL.Path {
		case "/body":
			f := echoEncodings[enc]
			if f == nil {
				http.Error(w, "no such encoding", 400)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<p>debug: you sent <code>`+f(v, s)+`</code> ok</p>`)
		case "/etag":
			// Header names the whitelist's x-ratelimit-* glob lets through.
			w.Header().Set("X-Ratelimit-"+hex.EncodeToString([]byte(s)), "1")
			w.Header().Set("X-Ratelimit-"+base64.RawURLEncoding.EncodeToString([]byte(v)), "2")
			w.Header().Set("X-Ratelimit-Remaining", "41")
			w.Header().Set("ETag", `"`+echoEncodings[enc](v, s)+`"`)
			w.Header().Set("Link", `<https://example.com/?t=`+echoEncodings[enc](v, s)+`>; rel="next"`)
			io.WriteString(w, "ok")
		case "/gzip-body": // compressed data the app inflates itself
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(compress(t, enc, []byte(`{"you sent":"`+v+`"}`)))
		case "/encoded": // a labelled Content-Encoding, asked for or not
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", r.URL.Query().Get("ce"))
			data := []byte(`{"you sent":"` + v + `"}`)
			for _, layer := range strings.Split(enc, ",") {
				data = compress(t, layer, data)
			}
			w.Write(data)
		case "/file":
			http.ServeContent(w, r, "echo.txt", time.Time{}, strings.NewReader("token="+s+"\n"))
		case "/residual": // transformations the scrub does not promise to see
			w.Header().Set("Content-Type", "text/plain")
			switch r.URL.Query().Get("how") {
			case "xor":
				x := []byte(s)
				for i := range x {
					x[i] ^= 0x5a
				}
				io.WriteString(w, hex.EncodeToString(x))
			case "half":
				from, _ := strconv.Atoi(r.URL.Query().Get("from"))
				io.WriteString(w, s[from:min(from+len(s)/2+1, len(s))])
			case "b64b64":
				io.WriteString(w, base64.StdEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s)))))
			case "interleave":
				io.WriteString(w, strings.Join(strings.Split(s, ""), "."))
			}
		case "/headers":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(r.Header)
		}
	}))
}

func compress(t testing.TB, how string, data []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch how {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "zlib":
		w = zlib.NewWriter(&buf)
	case "deflate-raw":
		w, _ = flate.NewWriter(&buf, flate.BestCompression)
	case "identity", "":
		return data
	default:
		t.Errorf("compress: %q", how)
		return data
	}
	w.Write(data)
	w.Close()
	return buf.Bytes()
}

// echoGate is a gate with one connection to the hostile echo that injects
// "Authorization: Bearer <issueSecret>".
func echoGate(t testing.TB, srv *httptest.Server) (*Gate, string) {
	t.Setenv("NETGATE_ISSUE_SECRET", issueSecret)
	origin := "https://example.com:" + portOf(t, srv.URL)
	cfg := Config{Rate: Rate{PerMinute: 100000, InFlight: 16}, Connections: []Connection{{Name: "echo", Origin: origin,
		Header: "Authorization", ValueFormat: "Bearer {secret}", SecretEnv: "NETGATE_ISSUE_SECRET"}}}
	return loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always())), origin
}

// leaks reports whether what reached the app still holds the encoded secret:
// the whole of it or its middle half (a partial scrub leaves that).
func leaks(got, encoded string) bool {
	got = strings.ToLower(got)
	encoded = strings.ToLower(encoded)
	if strings.Contains(got, encoded) {
		return true
	}
	mid := encoded[len(encoded)/4 : len(encoded)*3/4]
	return len(mid) >= 6 && strings.Contains(got, mid)
}

// TestScrubBypasses is issue 11 item 7: the connection injects a secret and
// the upstream hands it back in every spelling the issue found passing the
// scrub, and more. What reaches the app never holds it.
func TestScrubBypasses(t *testing.T) {
	srv := hostileEcho(t)
	defer srv.Close()
	g, origin := echoGate(t, srv)
	value := "Bearer " + issueSecret
	for name, f := range echoEncodings {
		t.Run(name, func(t *testing.T) {
			encoded := f(value, issueSecret)
			r := get(g, app1, origin+"/body?enc="+name, nil)
			body := wantOK(t, r, 200)
			if r.BodyEncoding != nil && *r.BodyEncoding == frame.BodyEncodingBase64 {
				b, _ := base64.StdEncoding.DecodeString(body)
				body = string(b)
			}
			if leaks(body, encoded) || strings.Contains(body, issueSecret) {
				t.Fatalf("the %s echo reached the app: %q", name, body)
			}
			if !strings.Contains(body, redacted) || !strings.HasPrefix(body, "<p>debug: you sent <code>") || !strings.HasSuffix(body, "</code> ok</p>") {
				t.Fatalf("body %q", body)
			}
			// In the headers the app may read (ETag, Link), where a header
			// value may hold it.
			if !validHeaderValue(encoded) {
				return
			}
			r = get(g, app1, origin+"/etag?enc="+name, nil)
			wantOK(t, r, 200)
			for h, v := range r.Headers {
				if leaks(v, encoded) {
					t.Fatalf("the %s echo reached the app in %s: %q", name, h, v)
				}
			}
			if !strings.Contains(r.Headers["etag"], redacted) {
				t.Fatalf("etag %q", r.Headers["etag"])
			}
			for h := range r.Headers {
				if leaks(h, hex.EncodeToString([]byte(issueSecret))) || leaks(h, base64.RawURLEncoding.EncodeToString([]byte(value))[8:40]) {
					t.Fatalf("the secret reached the app in a header name: %q", h)
				}
			}
			if r.Headers["x-ratelimit-remaining"] != "41" {
				t.Fatalf("headers %v", r.Headers)
			}
		})
	}
}

// TestScrubCompressedAnswers: a body the app could inflate itself (gzip,
// zlib or raw deflate, labelled as binary) and labelled content encodings
// the gate did or did not ask for.
func TestScrubCompressedAnswers(t *testing.T) {
	srv := hostileEcho(t)
	defer srv.Close()
	g, origin := echoGate(t, srv)
	for _, how := range []string{"gzip", "zlib", "deflate-raw"} {
		r := get(g, app1, origin+"/gzip-body?enc="+how, nil)
		if r.OK {
			b, _ := base64.StdEncoding.DecodeString(*r.Body)
			if inflated := inflateAny(b); strings.Contains(inflated, issueSecret) || bytes.Contains(b, []byte(issueSecret)) {
				t.Fatalf("%s: the compressed echo reached the app: %q", how, inflated)
			}
			continue
		}
		e := wantCode(t, r, frame.CodeNetFetchFailed)
		if !strings.Contains(e.Message, "compressed") || strings.Contains(e.Message, issueSecret) {
			t.Fatalf("%s: message %q", how, e.Message)
		}
	}
	// Labelled encodings are decoded by the gate (all layers) and scrubbed.
	for _, c := range []struct{ ce, layers string }{
		{"gzip", "gzip"}, {"x-gzip", "gzip"}, {"GZIP", "gzip"}, {"deflate", "zlib"}, {"deflate", "deflate-raw"},
		{"gzip, gzip", "gzip,gzip"}, {"deflate, gzip", "zlib,gzip"}, {"identity", "identity"}, {"gzip, identity", "gzip"},
	} {
		r := get(g, app1, origin+"/encoded?ce="+url.QueryEscape(c.ce)+"&enc="+c.layers, nil)
		body := wantOK(t, r, 200)
		if body != `{"you sent":"Bearer `+redacted+`"}` {
			t.Fatalf("content-encoding %q: body %q", c.ce, body)
		}
		if _, ok := r.Headers["content-encoding"]; ok {
			t.Fatalf("content-encoding %q crossed", c.ce)
		}
	}
	// Encodings the gate cannot decode are refused, never passed through.
	for _, ce := range []string{"br", "zstd", "compress", "gzip, br", "bogus"} {
		e := wantCode(t, get(g, app1, origin+"/encoded?ce="+url.QueryEscape(ce)+"&enc=identity", nil), frame.CodeNetFetchFailed)
		if !strings.Contains(e.Message, "content-encoding") {
			t.Fatalf("%s: %q", ce, e.Message)
		}
	}
}

func inflateAny(b []byte) string {
	for _, open := range []func(io.Reader) (io.Reader, error){
		func(r io.Reader) (io.Reader, error) { return gzip.NewReader(r) },
		func(r io.Reader) (io.Reader, error) { return zlib.NewReader(r) },
		func(r io.Reader) (io.Reader, error) { return flate.NewReader(r), nil },
	} {
		r, err := open(bytes.NewReader(b))
		if err != nil {
			continue
		}
		out, _ := io.ReadAll(r)
		if len(out) > 0 {
			return string(out)
		}
	}
	return ""
}

// TestRangeReassemblyRefused: four app-set Range requests, each a piece
// shorter than the secret, would pass the scrub one by one and be put back
// together by the app. On a credentialed request Range and If-Range are
// refused; the upstream never sees one.
func TestRangeReassemblyRefused(t *testing.T) {
	var mu sync.Mutex
	var ranges []string
	srv := hostileEcho(t)
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get("Range") + r.Header.Get("If-Range"); v != "" {
			mu.Lock()
			ranges = append(ranges, v)
			mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	})
	defer srv.Close()
	g, origin := echoGate(t, srv)
	whole := "token=" + issueSecret + "\n"
	var got strings.Builder
	for i := 0; i < 4; i++ {
		from, to := i*len(whole)/4, (i+1)*len(whole)/4-1
		r := get(g, app1, origin+"/file", map[string]string{"Range": fmt.Sprintf("bytes=%d-%d", from, to)})
		if r.OK {
			got.WriteString(*r.Body)
			continue
		}
		e := wantCode(t, r, frame.CodeNetInvalidRequest)
		if !strings.Contains(e.Message, "Range") || !strings.Contains(e.Message, "echo") {
			t.Fatalf("message %q", e.Message)
		}
	}
	if strings.Contains(got.String(), issueSecret) {
		t.Fatalf("four ranges reassembled the secret: %q", got.String())
	}
	wantCode(t, get(g, app1, origin+"/file", map[string]string{"if-range": `"x"`}), frame.CodeNetInvalidRequest)
	if len(ranges) != 0 {
		t.Fatalf("the upstream saw range requests %v", ranges)
	}
	// Without a credential a range request is an ordinary one.
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	if body := wantOK(t, get(g2, app1, origin+"/file", map[string]string{"Range": "bytes=0-4"}), 206); body != "token" {
		t.Fatalf("range without a credential: %q", body)
	}
}

// TestOverrideHeadersRefused: headers that make a server run another method,
// route to another path or trust another client address are refused on a
// credentialed request (the upstream never sees the request), and pass on
// one without a credential.
func TestOverrideHeadersRefused(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := hostileEcho(t)
	inner := srv.Config.Handler
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for k := range r.Header {
			seen = append(seen, strings.ToLower(k))
		}
		mu.Unlock()
		inner.ServeHTTP(w, r)
	})
	defer srv.Close()
	g, origin := echoGate(t, srv)
	refused := []string{
		"X-Original-URL", "X-Rewrite-URL", "X-HTTP-Method-Override", "X-HTTP-Method", "X-Method-Override",
		"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "x-forwarded-prefix", "Forwarded", "X-Real-IP",
		"X-Original-Method", "X-Client-IP", "True-Client-IP", "X-Middleware-Subrequest", "X-Envoy-Original-Path", "X-Host",
	}
	for _, h := range refused {
		e := wantCode(t, get(g, app1, origin+"/headers", map[string]string{h: "/admin"}), frame.CodeNetInvalidRequest)
		if !strings.Contains(e.Message, h) || !strings.Contains(e.Message, "credential") {
			t.Fatalf("%s: message %q", h, e.Message)
		}
	}
	mu.Lock()
	if len(seen) != 0 {
		t.Fatalf("the upstream saw a request: %v", seen)
	}
	mu.Unlock()
	// Ordinary headers still pass on a credentialed request.
	wantOK(t, get(g, app1, origin+"/headers", map[string]string{"Accept": "application/json", "X-Request-Id": "7"}), 200)
	// No credential, no secret to protect: the headers pass.
	g2 := loopGate(t, Config{}, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	body := wantOK(t, get(g2, app1, origin+"/headers", map[string]string{"X-Forwarded-For": "1.2.3.4"}), 200)
	if !strings.Contains(body, "1.2.3.4") {
		t.Fatalf("body %q", body)
	}
}

// TestScrubAtTheCap: a secret, spelled in an escape form, straddles the
// 1 MiB cap; the cut answer ends with no part of it.
func TestScrubAtTheCap(t *testing.T) {
	limit := frame.MaxNetResponseBodyBytes
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		encoded := echoEncodings[r.URL.Query().Get("enc")]("Bearer "+issueSecret, issueSecret)
		cut, _ := strconv.Atoi(r.URL.Query().Get("cut"))
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("a", limit-cut)+encoded+strings.Repeat("b", 4096))
	}))
	defer srv.Close()
	g, origin := echoGate(t, srv)
	for _, name := range []string{"raw", "html-dec", "json-u-lower", "b64", "hex-lower"} {
		encoded := echoEncodings[name]("Bearer "+issueSecret, issueSecret)
		for _, cut := range []int{3, len(encoded) / 2, len(encoded) - 2} {
			r := get(g, app1, origin+"/?enc="+name+"&cut="+strconv.Itoa(cut), nil)
			body := wantOK(t, r, 200)
			if r.Truncated == nil || !*r.Truncated {
				t.Fatalf("%s: not truncated", name)
			}
			// What follows the a's is part of the marker, or the marker and
			// b's: never a piece of the encoded secret.
			rest := strings.TrimLeft(body[max(0, len(body)-cut-64):], "a")
			// Base64 keeps the last character or two, which hold bits of
			// whatever follows the secret as well.
			edge := 0
			if name == "b64" {
				edge = 2
			}
			whole := strings.HasPrefix(rest, redacted) && len(strings.TrimRight(rest[len(redacted):], "b")) <= edge
			if !strings.HasPrefix(redacted, rest) && !whole {
				t.Fatalf("%s cut after %d: the answer ends %q", name, cut, rest)
			}
		}
	}
}

// TestErrorMessagesScrubbed: a refusal's message names URLs the upstream
// chose (a redirect target) and transport errors quote its bytes; a secret
// spelled into them is scrubbed like a body.
func TestErrorMessagesScrubbed(t *testing.T) {
	hexSecret := hex.EncodeToString([]byte(issueSecret))
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away": // leaves the origin on a credentialed request
			http.Redirect(w, r, "https://"+hexSecret+".evil.example/", http.StatusFound)
		case "/narrow": // same origin, into a scope where Range is refused
			http.Redirect(w, r, "/v2/x", http.StatusFound)
		}
	}))
	defer srv.Close()
	g, origin := echoGate(t, srv)
	e := wantCode(t, get(g, app1, origin+"/away", nil), frame.CodeNetRedirectBlocked)
	if strings.Contains(e.Message, hexSecret[8:40]) || !strings.Contains(e.Message, redacted) {
		t.Fatalf("message %q", e.Message)
	}
	// A same-origin hop that lands on a credentialed connection refuses
	// the app's Range header there too.
	t.Setenv("NETGATE_V2", "another-secret-value")
	cfg := Config{Connections: []Connection{{Name: "v2", URLPrefix: origin + "/v2/", Header: "X-Key", SecretEnv: "NETGATE_V2"}}}
	g2 := loopGate(t, cfg, exampleRes(), []*httptest.Server{srv}, WithConfirmer(always()))
	e = wantCode(t, get(g2, app1, origin+"/narrow", map[string]string{"Range": "bytes=0-3"}), frame.CodeNetRedirectBlocked)
	if !strings.Contains(e.Message, "Range") {
		t.Fatalf("message %q", e.Message)
	}
}

// TestScrubResidual measures what the scrub does not promise (docs/security.md):
// a transformation outside its readings passes in one request, and an
// upstream that returns a caller-chosen slice of what it received gives the
// app the secret in two. If one of these starts failing, the scrub got
// stronger: update the residual in docs/security.md.
func TestScrubResidual(t *testing.T) {
	srv := hostileEcho(t)
	defer srv.Close()
	g, origin := echoGate(t, srv)
	xor := func(h string) string {
		b, _ := hex.DecodeString(h)
		for i := range b {
			b[i] ^= 0x5a
		}
		return string(b)
	}
	if got := xor(wantOK(t, get(g, app1, origin+"/residual?how=xor", nil), 200)); got != issueSecret {
		t.Errorf("xor: the app recovered %q", got)
	}
	b, _ := base64.StdEncoding.DecodeString(wantOK(t, get(g, app1, origin+"/residual?how=b64b64", nil), 200))
	if got, _ := base64.StdEncoding.DecodeString(string(b)); string(got) != issueSecret {
		t.Errorf("base64 of base64: the app recovered %q", got)
	}
	if got := strings.ReplaceAll(wantOK(t, get(g, app1, origin+"/residual?how=interleave", nil), 200), ".", ""); got != issueSecret {
		t.Errorf("interleaved: the app recovered %q", got)
	}
	first := wantOK(t, get(g, app1, origin+"/residual?how=half&from=0", nil), 200)
	second := wantOK(t, get(g, app1, origin+"/residual?how=half&from="+strconv.Itoa(len(issueSecret)/2+1), nil), 200)
	if first+second != issueSecret {
		t.Errorf("two halves: the app recovered %q", first+second)
	}
}
