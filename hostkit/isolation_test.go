package hostkit_test

// One app must not be able to hurt another or the host: a busy app keeps
// only its own renderer busy (each app is a site of its own), and the
// runner's HTTP routes answer only for the names they are served under (a
// DNS-rebinding page gets nothing).

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

const tickerApp = `<!doctype html><title>ticker</title><p>ticks</p>
<script>window.ticks = 0; setInterval(() => { window.ticks++; }, 20);</script>`

// A spinning app (while(true){}) leaves another app's timers running: the
// two are served from distinct sites, so Chromium runs them in distinct
// renderer processes.
func TestBusyAppLeavesOtherAppsRunning(t *testing.T) {
	h := startHost(t, hostkit.WithApps(
		hostkit.BuiltApp("spinner", []byte(tickerApp), hostkit.Meta{DisplayName: "Spinner"}),
		hostkit.BuiltApp("ticker", []byte(tickerApp), hostkit.Meta{DisplayName: "Ticker"}),
	))
	runner := browsertest.OpenRunnerUntil(t, h.URL(), "both frames to load",
		`[...document.querySelectorAll('article.instance')].filter(a => a.dataset.state === 'live').length === 2`, "spinner", "ticker")
	slots := runner.Slots()
	spinner, ticker := runner.SlotFrame(slots[0]), runner.SlotFrame(slots[1])
	origins := browsertest.Eval[[]string](t, runner.Tab, `[...document.querySelectorAll('article.instance iframe')].map(f => new URL(f.src).host)`)
	if len(origins) != 2 || origins[0] == origins[1] {
		t.Errorf("the two apps are served from %q: want a host of their own each", origins)
	}
	browsertest.WaitFor(t, ticker, "the ticker to tick", `window.ticks > 2`)

	browsertest.Eval[bool](t, spinner, `(setTimeout(() => { for (;;) {} }, 50), true)`)
	// The spinner no longer answers: its renderer's main thread is taken.
	ctx, cancel := context.WithTimeout(spinner, 2*time.Second)
	_, err := chromedp.Run(ctx, chromedp.Evaluate[int](`new Promise(r => setTimeout(() => r(1), 100))`, chromedp.EvalAwaitPromise))
	cancel()
	if err == nil {
		t.Fatal("the spinner still answers; the test proves nothing")
	}
	t0 := browsertest.Eval[int](t, ticker, `window.ticks`)
	browsertest.WaitFor(t, ticker, "the ticker to keep ticking while the spinner spins", fmt.Sprintf(`window.ticks >= %d`, t0+20))
	// The runner page (another site again) still answers too.
	browsertest.Eval[int](t, runner.Tab, `document.querySelectorAll('article.instance').length`)
}

// rebind returns u with its host replaced by host, keeping the port: what a
// page at host sees after its name was rebound to the runner's address.
func rebind(t *testing.T, u, host string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	p.Host = host + ":" + p.Port()
	return p.String()
}

// A DNS-rebinding page: Chromium resolves rebind-canary.test to the
// runner's address (testenv.ChromiumFlags maps *-canary.test to loopback),
// so a page at that name is same-origin with whatever the runner answers
// for it. The runner answers nothing for a name that is not its own.
func TestDNSRebindingPageReadsNothing(t *testing.T) {
	h := startHost(t)
	tab := browsertest.NewTab(t)
	page := rebind(t, h.URL(), "rebind-canary.test")
	browsertest.Do(t, tab, "open the rebound name", chromedp.Navigate(page))
	type answer struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	for _, path := range []string{"/", "/apps.json", "/favicon.ico"} {
		got := browsertest.Eval[answer](t, tab, fmt.Sprintf(`fetch(%q).then(async r => ({status: r.status, body: (await r.text()).slice(0, 200)}))`, path))
		if got.Status != http.StatusMisdirectedRequest {
			t.Errorf("GET %s from the rebound page: %d %q, want 421", path, got.Status, got.Body)
		}
		if strings.Contains(got.Body, "probe") || strings.Contains(got.Body, "inspector") {
			t.Errorf("GET %s from the rebound page read the runner's data: %q", path, got.Body)
		}
	}
}

// hostRequest sends a real GET for path to the server at base with a forged
// Host header and no redirects followed.
func hostRequest(t *testing.T, base, host, path string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.URL.Opaque = path // sent as written, no cleaning on the client side
	req.Host = host
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// Every route checks Host exactly, as the WebSocket does.
func TestEveryRouteChecksHost(t *testing.T) {
	h := startHost(t)
	base := strings.TrimSuffix(h.URL(), "/")
	u, _ := url.Parse(base)
	for _, host := range []string{"evil.example:" + u.Port(), "evil.example", "127.0.0.1:1", "localhost:" + u.Port(), "127.0.0.1.evil.example:" + u.Port()} {
		for _, path := range []string{"/", "/apps.json", "/favicon.ico", "/ws", "/?app=probe"} {
			res, body := hostRequest(t, base, host, path)
			if res.StatusCode != http.StatusMisdirectedRequest && res.StatusCode != http.StatusBadRequest {
				t.Errorf("Host %q GET %s: %d %.80q, want 421", host, path, res.StatusCode, body)
			}
			if res.StatusCode == http.StatusMisdirectedRequest && !strings.Contains(body, u.Host) {
				t.Errorf("Host %q GET %s: the refusal %q does not name the runner's own address", host, path, body)
			}
		}
	}
	// HTTP/1.0 without a Host header at all.
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "GET /apps.json HTTP/1.0\r\n\r\n")
	raw, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(raw), "HTTP/1.0 421 ") {
		t.Errorf("a request without Host: %.120q, want 421", raw)
	}
	if res, body := hostRequest(t, base, u.Host, "/apps.json"); res.StatusCode != 200 || !strings.Contains(body, "probe") {
		t.Errorf("the runner's own Host: %d %.80q", res.StatusCode, body)
	}
}

// Crafted paths never redirect off the host (no open redirect) and never
// reach a route under another name.
func TestCraftedPathsDoNotRedirect(t *testing.T) {
	h := startHost(t)
	base := strings.TrimSuffix(h.URL(), "/")
	u, _ := url.Parse(base)
	for _, path := range []string{
		"/apps/..%2F%5Cevil.example", "/apps/..%2F%5Cevil.example/", "/apps/%2F%2Fevil.example",
		"/apps/%5C%5Cevil.example", "//evil.example/", "/\\evil.example", "/apps/probe", "/apps/../apps.json",
		"/%2e%2e/apps.json", "/./", "/apps//probe/", "/apps/probe/..%2F..%2Fapps.json",
	} {
		res, _ := hostRequest(t, base, u.Host, path)
		if loc := res.Header.Get("Location"); loc != "" {
			t.Errorf("GET %s redirects to %q", path, loc)
		}
		if res.StatusCode == 200 && strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s reached /apps.json", path)
		}
		if res.StatusCode >= 300 && res.StatusCode < 400 {
			t.Errorf("GET %s: status %d", path, res.StatusCode)
		}
	}
}
