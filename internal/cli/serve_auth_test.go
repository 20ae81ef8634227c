package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/proxyauth"
	"github.com/snuggen/snuggen/internal/relayclient"
)

const testProxySecret = "snug-test-proxy-secret-0123456789abcdef"

// writeSecret writes a secret file of mode 600 and returns its path.
func writeSecret(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// authProxy is an authenticating proxy in front of origin as the README
// asks for: it strips the client's copies of the user and secret headers,
// signs the client in from its own session cookie, and adds the secret.
func authProxy(t *testing.T, origin string) string {
	t.Helper()
	target, err := url.Parse(origin)
	if err != nil {
		t.Fatal(err)
	}
	p := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		pr.Out.Header.Del("X-Forwarded-User")
		pr.Out.Header.Del(proxyauth.SecretHeader)
		if c, err := pr.In.Cookie("session"); err == nil {
			pr.Out.Header.Set("X-Forwarded-User", c.Value)
		}
		pr.Out.Header.Set(proxyauth.SecretHeader, testProxySecret)
		pr.Out.Header.Set("Origin", origin) // the page's origin is the host's
	}}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// serve --user-header believes the header only from the proxy: a process
// that reaches serve's port itself and claims alice gets 401 and sees
// nothing; through the proxy, each user reaches their own data, whatever
// user header the client added.
func TestServeBelievesTheUserHeaderOnlyFromTheProxy(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.html"), []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv,
		userHeader: "X-Forwarded-User", proxySecretFile: writeSecret(t, "# current\n"+testProxySecret+"\n")}
	line, _, _ := startServe(t, o, dir)
	u, err := url.Parse(line[2])
	if err != nil {
		t.Fatal(err)
	}
	origin := u.Scheme + "://" + u.Host
	proxy := authProxy(t, origin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	open := func(base string, h http.Header) (*relayclient.Client, string) {
		t.Helper()
		c, err := relayclient.Dial(ctx, base, h)
		if err != nil {
			t.Fatalf("dial %s with %v: %v", base, h, err)
		}
		t.Cleanup(func() { c.Close() })
		inst, err := c.Mount(ctx, "s1", "hello")
		if err != nil {
			t.Fatal(err)
		}
		return c, inst
	}
	exec := func(c *relayclient.Client, inst, sql string, params ...any) *frame.DBResponse {
		t.Helper()
		r, err := c.DB(ctx, "s1", inst, frame.DBRequest{Op: frame.OpExec, SQL: &sql, Params: params})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	alice, inst := open(proxy, http.Header{"Cookie": {"session=alice"}})
	for _, sql := range []string{"CREATE TABLE notes(text)", "INSERT INTO notes VALUES ('alice''s secret')"} {
		if r := exec(alice, inst, sql); !r.OK {
			t.Fatalf("%s: %+v", sql, r.Error)
		}
	}

	// Straight to the port: every claim without the proxy's proof is 401.
	for _, h := range []http.Header{
		{"X-Forwarded-User": {"alice"}},
		{"X-Forwarded-User": {"alice"}, proxyauth.SecretHeader: {"guess-guess-guess-guess-guess-guess"}},
		{"X-Forwarded-User": {"alice"}, proxyauth.SecretHeader: {testProxySecret[:20]}},
		{proxyauth.SecretHeader: {testProxySecret}},
	} {
		c, err := relayclient.Dial(ctx, origin, h)
		if err == nil {
			c.Close()
			t.Errorf("a client straight to the port with %v connected", h)
		} else if !strings.Contains(err.Error(), "HTTP 401") {
			t.Errorf("a client straight to the port with %v: %v, want HTTP 401", h, err)
		}
	}

	// Through the proxy, a client's own user header is not believed: it
	// is mallory's page, with none of alice's data.
	mallory, minst := open(proxy, http.Header{"Cookie": {"session=mallory"}, "X-Forwarded-User": {"alice"},
		proxyauth.SecretHeader: {"x"}})
	if r := exec(mallory, minst, "SELECT group_concat(text) FROM notes"); r.OK {
		t.Errorf("mallory read alice's notes: %v", r.Result.Rows)
	}
	if r := exec(alice, inst, "SELECT group_concat(text) FROM notes"); !r.OK || r.Result.Rows[0][0] != "alice's secret" {
		t.Errorf("alice's own read: %+v %+v", r.Result, r.Error)
	}
}

// A user header that would be believed from anyone is refused at start,
// and so is a secret file others can read or a short secret.
func TestServeUserHeaderNeedsAProof(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hello.html")
	if err := os.WriteFile(file, []byte(helloApp), 0o644); err != nil {
		t.Fatal(err)
	}
	open := writeSecret(t, testProxySecret)
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--user-header", "X-Forwarded-User"}, "alone would believe any client"},
		{[]string{"--user-header", "X-Forwarded-User", "--proxy-secret-file", open}, "chmod 600"},
		{[]string{"--user-header", "X-Forwarded-User", "--proxy-secret-file", writeSecret(t, "short\n")}, "secret:1: a secret of 5 bytes"},
		{[]string{"--user-header", "X-Forwarded-User", "--trusted-proxy", "10.0.0.300"}, `--trusted-proxy "10.0.0.300"`},
		{[]string{"--proxy-secret-file", open}, "go with --user-header"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"serve", "--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...), file)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
