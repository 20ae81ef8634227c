// Package testenv finds the external programs the test suite drives (node,
// Chromium, npm packages) and decides what a test does when one is missing: outside CI it
// skips with a note; when CI is set it fails, so a missing install can never
// hide behind a skip. -short skips the Chromium suites on purpose (the fast
// inner loop); CI runs without -short.
package testenv

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// InCI reports whether the CI environment variable is set.
func InCI() bool { return os.Getenv("CI") != "" }

// missing fails the test in CI and skips it elsewhere.
func missing(t testing.TB, what, install string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s not found and CI is set: %s", what, install)
	}
	t.Skipf("%s not found (%s); the test runs in CI", what, install)
}

// Node returns the path of the node binary.
func Node(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node", "install Node.js 20 or later")
	}
	return p
}

// SkipUnderRace skips a test whose subject is a time or CPU budget when the
// binary runs under the race detector, which slows instrumented code several
// times over: the budget would measure the detector. The test still runs in
// the suite proper (go test ./..., without -race); why says what it measures.
func SkipUnderRace(t testing.TB, why string) {
	t.Helper()
	if RaceEnabled {
		t.Skipf("under -race: %s is a budget the race detector's slowdown would break; it runs without -race", why)
	}
}

// Chromium returns the path of a Chromium binary: $SNUG_CHROMIUM, then the
// usual names on PATH. With -short it skips the test, CI or not: the
// Chromium suites are the slow part of the suite, and -short is the inner
// loop's (go test -short ./...); CI runs without it, so every browser test
// runs there.
func Chromium(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the Chromium suites run without -short (CI runs them all)")
	}
	if p := os.Getenv("SNUG_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	missing(t, "Chromium", "apt-get install -y chromium, or set SNUG_CHROMIUM")
	return ""
}

// ChromiumFlags are the command-line switches every browser test starts
// Chromium with: headless, no background traffic, and a resolver that maps
// every name except loopback to nothing, so the browser reaches only this
// machine: 127.0.0.1 and the names under localhost (which Chromium resolves
// to loopback itself; hostkit serves each app from <label>.localhost) are
// left alone, *-canary.test names go to 127.0.0.1 (the tests' canaries).
// Tests add --user-data-dir with a fresh temporary directory.
var ChromiumFlags = []string{
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
	"--disable-default-apps",
	"--disable-extensions",
	"--host-resolver-rules=MAP *-canary.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost",
	"--allow-loopback-in-peer-connection",
}

// LocalhostClient is an HTTP client that reaches names under localhost
// (such as hostkit's app hosts, <label>.localhost:<port>) on 127.0.0.1, as
// browsers do; Go's resolver asks DNS for them. Other names dial as usual.
// It follows no redirects, so a test sees each answer as sent.
var LocalhostClient = &http.Client{
	Timeout: 30 * time.Second,
	Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err == nil && (host == "localhost" || strings.HasSuffix(host, ".localhost")) {
				addr = net.JoinHostPort("127.0.0.1", port)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		},
	},
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// NPMPackages installs the npm packages specs (name@version each) into a
// cache directory kept between runs ($SNUG_NPM_CACHE, else the user cache
// directory's snuggen/npm, one folder per set of specs) and returns its
// node_modules folder. A test that needs published JavaScript (a real MCP
// Apps host, say) calls it; without npm, or when the registry cannot be
// reached, it fails under CI and skips elsewhere.
func NPMPackages(t testing.TB, specs ...string) string {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if err != nil {
		missing(t, "npm", "apt-get install -y npm")
	}
	root := os.Getenv("SNUG_NPM_CACHE")
	if root == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			c = os.TempDir()
		}
		root = filepath.Join(c, "snuggen", "npm")
	}
	sum := sha256.Sum256([]byte(strings.Join(specs, "\n")))
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	done := filepath.Join(dir, "installed")
	if _, err := os.Stat(done); err == nil {
		return filepath.Join(dir, "node_modules")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append([]string{"install", "--prefix", dir, "--no-audit", "--no-fund", "--loglevel=error"}, specs...)
	out, err := exec.CommandContext(ctx, npm, args...).CombinedOutput()
	if err != nil {
		missing(t, "npm packages "+strings.Join(specs, " "), fmt.Sprintf("npm install failed: %v\n%s", err, out))
	}
	if err := os.WriteFile(done, []byte(strings.Join(specs, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "node_modules")
}

// PostgresBin returns the directory holding PostgreSQL's initdb and
// postgres (SNUG_PGBIN, then initdb on PATH, then Debian's
// /usr/lib/postgresql/<version>/bin, newest first).
func PostgresBin(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("SNUG_PGBIN"); p != "" {
		return p
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(p), "postgres")); err == nil {
			return filepath.Dir(p)
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	missing(t, "PostgreSQL (initdb, postgres)", "apt-get install -y postgresql, or set SNUG_PGBIN")
	return ""
}
