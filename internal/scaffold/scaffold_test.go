package scaffold_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/scaffold"
	"github.com/snuggen/snuggen/pack"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// Scaffold → build → serve → browser: a fresh app scaffold builds with
// --strict and no diagnostics, and in the real runner its ask (with a schema,
// streaming) and its db history work, the history surviving a second
// instance.
func TestAppScaffoldRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "word-explainer")
	p := scaffold.Params{Name: "word-explainer", AppID: "app.word-explainer", DisplayName: scaffold.DisplayName("word-explainer")}
	if _, err := scaffold.Write(scaffold.App, dir, p, false); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "app.html")
	res, err := pack.Build(context.Background(), pack.Options{Path: page, Strict: true})
	if err != nil || len(res.Diagnostics) != 0 {
		t.Fatalf("build --strict: %v %v", err, res.Diagnostics)
	}

	h, err := hostkit.New(
		hostkit.WithApps(hostkit.FileApp("word-explainer", page)),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithAgent(offline.New(offline.Options{ChunkSize: 8, Delay: 5 * time.Millisecond})),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)

	r := browsertest.OpenRunner(t, h.URL(), "word-explainer")
	if name := browsertest.Eval[string](t, r.Tab, `document.querySelector('#app-list .app-button .app-name')?.textContent ?? ''`); name != "Word Explainer" {
		t.Errorf("the runner lists the app as %q", name)
	}
	f := r.Frame(0)
	browsertest.WaitFor(t, f, "the Explain button", `document.getElementById('go').disabled === false`)
	browsertest.Eval[bool](t, f, `(() => { window.seen = []; new MutationObserver(() => { const s = document.getElementById('stream').textContent;
		if (s) seen.push(s); }).observe(document.getElementById('stream'), {childList: true, characterData: true, subtree: true}); return true; })()`)
	browsertest.Do(t, f, "type a word and press Enter", chromedp.SendKeys(chromedp.CSS("#word"), "serendipity\r"))
	browsertest.WaitFor(t, f, "the answer", `document.querySelector('#answer h2')?.textContent === 'serendipity'`)
	answer := browsertest.Eval[[]string](t, f, `[...document.querySelectorAll('#answer p')].map(p => p.textContent)`)
	if len(answer) != 2 || answer[0] == "" || answer[1] == "" {
		t.Fatalf("answer paragraphs %q: want the definition and the example", answer)
	}
	if seen := browsertest.Eval[[]string](t, f, `window.seen`); len(seen) < 2 {
		t.Errorf("the stream preview showed %q: want the answer streaming in", seen)
	}
	browsertest.WaitFor(t, f, "one history row", `document.querySelectorAll('#history li').length === 1`)
	want := fmt.Sprintf("serendipity: %s", answer[0])
	if got := browsertest.Eval[string](t, f, `document.querySelector('#history li').textContent`); got != want {
		t.Fatalf("history %q, want %q", got, want)
	}

	// A second instance reads the history from the app's database.
	r2 := browsertest.OpenRunner(t, h.URL(), "word-explainer")
	f2 := r2.Frame(0)
	browsertest.WaitFor(t, f2, "the saved history", fmt.Sprintf(`document.querySelector('#history li')?.textContent === %q`, want))
}

// The host scaffold's example app runs in the real runner: its greeting
// (ask), its visit counter (db), its fetch (net, through a connection to a
// loopback TLS server) and its link (open-url, declined in the dialog).
func TestHostScaffoldHelloAppInBrowser(t *testing.T) {
	files, err := scaffold.Render(scaffold.Host, scaffold.Params{Name: "h", AppID: "app.hello", DisplayName: "H",
		Module: "example.com/h", SnuggenPath: "github.com/snuggen/snuggen", GoVersion: "1.26"})
	if err != nil {
		t.Fatal(err)
	}
	var hello []byte
	for _, f := range files {
		if f.Path == "apps/hello/app.html" {
			hello = f.Contents
		}
	}
	if hello == nil {
		t.Fatal("the host scaffold has no apps/hello/app.html")
	}

	const token = "hello-token-0123456789"
	t.Setenv("SNUG_SCAFFOLD_TEST_TOKEN", token)
	api := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"authorized":%t}`, r.Header.Get("Authorization") == "Bearer "+token)
	}))
	defer api.Close()
	ap := netip.MustParseAddrPort(api.Listener.Addr().String())
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	origin := fmt.Sprintf("https://api.example.com:%d", ap.Port())
	cfg := netgate.Config{Connections: []netgate.Connection{{Name: "example-api", Origin: origin,
		Header: "Authorization", ValueFormat: "Bearer {secret}", SecretEnv: "SNUG_SCAFFOLD_TEST_TOKEN"}}}

	h, err := hostkit.New(
		hostkit.WithApps(hostkit.RawApp("hello", hello)),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithNet(cfg, netgate.WithResolver(netgate.StaticResolver{"api.example.com": {ap.Addr()}}),
			netgate.WithAllowedAddrs(ap), netgate.WithTLSConfig(&tls.Config{RootCAs: roots})),
	)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)

	r := browsertest.OpenRunner(t, h.URL(), "hello")
	f := r.Frame(0)
	browsertest.WaitFor(t, f, "the visit counter", `document.getElementById('visits').textContent === 'visit number 1'`)

	browsertest.Do(t, f, "greet", chromedp.Click(chromedp.CSS("#greet")))
	browsertest.WaitFor(t, f, "a greeting", `(t => t.length > 0 && !t.startsWith('{') && !/^[A-Z_]+: /.test(t))(document.getElementById('greeting').textContent)`)

	browsertest.Eval[bool](t, f, fmt.Sprintf(`(document.getElementById('url').value = %q, true)`, origin+"/hello"))
	browsertest.Do(t, f, "fetch", chromedp.Click(chromedp.CSS("#fetch")))
	if d := r.Confirm(); d.Kind != "net" || d.URL != origin+"/hello" {
		t.Fatalf("net dialog %+v", d)
	}
	r.Answer("once")
	browsertest.WaitFor(t, f, "the API's answer", `document.getElementById('response').textContent === '200\n{"authorized":true}'`)

	browsertest.Do(t, f, "open the link", chromedp.Click(chromedp.CSS("#open")))
	if d := r.Confirm(); d.Kind != "open-url" || d.URL != "https://example.com/" {
		t.Fatalf("open-url dialog %+v", d)
	}
	r.Answer("deny")
	browsertest.WaitFor(t, f, "declined", `document.getElementById('opened').textContent === 'declined'`)

	// The counter is kept: a second instance is visit number 2.
	r2 := browsertest.OpenRunner(t, h.URL(), "hello")
	browsertest.WaitFor(t, r2.Frame(0), "the second visit", `document.getElementById('visits').textContent === 'visit number 2'`)
}
