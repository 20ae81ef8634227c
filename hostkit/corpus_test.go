package hostkit_test

// Issue 28: apps written the way a model writes them from the guide alone
// (snuggen prompt), each driven in Chromium under the real host and runner
// as its user would.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// quotesApp is "a client for my quotes service on localhost": the guide's
// net.fetch on load, errors shown by code, a refresh button.
const quotesApp = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="snug:app-id" content="com.example.quotes">
<meta name="snug:display-name" content="Quotes">
<meta name="snug:icon-emoji" content="💬">
<title>Quotes</title>
<style>
  body { background: var(--snug-background, #fff); color: var(--snug-text, #111); font: var(--snug-font, 15px system-ui, sans-serif); }
  .error { color: var(--snug-danger, #c00); }
</style>
</head>
<body>
<h1>Quotes</h1>
<ul id="quotes"></ul>
<p id="status"></p>
<button id="refresh">Refresh</button>
<script type="module">
const API = "http://127.0.0.1:PORT";
const list = document.getElementById("quotes");
const status = document.getElementById("status");

async function load() {
  status.textContent = "Loading…";
  try {
    const res = await snug.net.fetch(API + "/quotes", { headers: { accept: "application/json" } });
    if (!res.ok) throw new Error("HTTP " + res.status);
    const quotes = await res.json();
    list.replaceChildren(...quotes.map((q) => {
      const li = document.createElement("li");
      li.textContent = q.text + " — " + q.author;
      return li;
    }));
    status.textContent = quotes.length + " quotes";
  } catch (err) {
    status.className = "error";
    status.textContent = err.code ? err.code + ": " + err.message : err.message;
  }
}

const { capabilities } = await snug.ready;
if (!capabilities.net) {
  status.textContent = "This host offers no network.";
} else {
  load();
  document.getElementById("refresh").addEventListener("click", load);
}
</script>
</body>
</html>`

// Issue 28 item 1: an app developed against a local API. With the service
// exempted (serve --dev-loopback), the runner says so, the user is asked
// once about its origin as about any other, and the app shows the API's
// answer; a second loopback service, not named, stays out of reach.
func TestCorpusQuotesAgainstALocalAPI(t *testing.T) {
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `[{"text":"Simplicity is prerequisite for reliability.","author":"Dijkstra"},{"text":"Make it work.","author":"Beck"}]`)
	}))
	defer api.Close()
	var strayHits atomic.Int32
	stray := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { strayHits.Add(1) }))
	defer stray.Close()
	ap := netip.MustParseAddrPort(api.Listener.Addr().String())
	app := strings.Replace(quotesApp, "PORT", fmt.Sprint(ap.Port()), 1)
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("quotes", []byte(app))),
		hostkit.WithNet(netgate.Config{}, netgate.WithDevLoopback(ap)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "quotes")
	notice := browsertest.Eval[string](t, runner.Tab, `(n => n.hidden ? "" : n.textContent)(document.getElementById("notices"))`)
	if !strings.Contains(notice, ap.String()) || !strings.Contains(notice, "Nothing else on loopback") {
		t.Fatalf("the runner's notice says %q while %s is exempt", notice, ap)
	}
	d := runner.Confirm()
	if d.Kind != "net" || !strings.HasPrefix(d.URL, "http://127.0.0.1:"+fmt.Sprint(ap.Port())+"/quotes") {
		t.Fatalf("the dialog shows %+v", d)
	}
	runner.Answer("once")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the quotes", `document.getElementById("status").textContent === "2 quotes"`)
	if got := browsertest.Eval[string](t, frame, `document.querySelector("#quotes li").textContent`); !strings.Contains(got, "Dijkstra") {
		t.Fatalf("the first quote reads %q", got)
	}
	// The audit in the runner marks the request as the dev service's.
	if a := h.Net.Audit(); len(a) == 0 || !a[len(a)-1].Dev {
		t.Errorf("the audit's last entry is not marked dev: %+v", a)
	}
	// Another service on loopback: refused before any dialog, never reached.
	code := browsertest.Eval[string](t, frame, fmt.Sprintf(`snug.net.fetch(%q).then(() => "fetched", e => e.code)`, stray.URL+"/"))
	if code != "NET_SCHEME_BLOCKED" && code != "NET_SSRF_BLOCKED" || strayHits.Load() != 0 {
		t.Fatalf("a loopback service that was not named: %s, %d requests reached it", code, strayHits.Load())
	}
}

// Issue 28 item 2, the runner's half: with WithBrokenApps the host starts
// though one app does not build; the runner lists that app with its
// diagnostics and offers no instance of it, and runs the others.
func TestRunnerListsAppsThatDoNotBuild(t *testing.T) {
	broken := strings.Replace(quotesApp, `const API = "http://127.0.0.1:PORT";`, `const API = "http://127.0.0.1:1"; fetch(API);`, 1)
	h, err := hostkit.New(hostkit.WithBrokenApps(), hostkit.WithApps(
		hostkit.RawApp("quotes", []byte(broken)),
		hostkit.RawApp("pay", []byte(payApp)),
	))
	if err != nil {
		t.Fatalf("New with a broken app and WithBrokenApps: %v", err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunnerUntil(t, h.URL(), "the app that builds", `document.querySelectorAll('article.instance[data-instance-id]').length === 1`, "pay", "quotes")
	runner.WaitFor("the broken app's diagnostics", `!!document.querySelector('#app-list li[data-problems="broken"] pre.problems')`)
	text := browsertest.Eval[string](t, runner.Tab, `document.querySelector('#app-list li[data-problems="broken"] pre.problems').textContent`)
	if !strings.Contains(text, "fetch is not available in the sandbox") || !strings.Contains(text, "snug.net.fetch") {
		t.Errorf("the runner lists the broken app as %q", text)
	}
	if !browsertest.Eval[bool](t, runner.Tab, `document.querySelector('#app-list .app-button[data-app="quotes"]').disabled`) {
		t.Error("the broken app's button opens an instance")
	}
	if n := len(runner.Slots()); n != 1 {
		t.Errorf("the runner has %d instances, want the one app that builds", n)
	}
	if _, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("quotes", []byte(broken)))); err == nil {
		t.Error("without WithBrokenApps, New starts with an app that does not build")
	}
}
