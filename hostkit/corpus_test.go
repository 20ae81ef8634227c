package hostkit_test

// Issue 28: apps written the way a model writes them from the guide alone
// (snuggen prompt), each driven in Chromium under the real host and runner
// as its user would.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

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

// dashboardApp loads three things from one API as it starts, the way a
// model writes a dashboard: three fetches at once, no waiting on each other.
const dashboardApp = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="snug:app-id" content="com.example.dashboard">
<meta name="snug:display-name" content="Dashboard">
<title>Dashboard</title>
</head>
<body>
<h1>Today</h1>
<p>Weather: <span id="weather">…</span></p>
<p>News: <span id="news">…</span></p>
<p>Stocks: <span id="stocks">…</span></p>
<button id="refresh">Refresh</button>
<p id="loads">0</p>
<script type="module">
const API = "http://127.0.0.1:PORT";
let loads = 0;
async function show(id, path) {
  try {
    const res = await snug.net.fetch(API + path);
    document.getElementById(id).textContent = (await res.json()).value;
  } catch (err) {
    document.getElementById(id).textContent = err.code;
  }
}
async function refresh() {
  await Promise.all([show("weather", "/weather"), show("news", "/news"), show("stocks", "/stocks")]);
  document.getElementById("loads").textContent = String(++loads);
}
await snug.ready;
refresh();
document.getElementById("refresh").addEventListener("click", refresh);
</script>
</body>
</html>`

// Issue 28 item 3: three requests to one new origin as the app loads raise
// one question, and its answer serves all three; "until I close the page"
// answers that app's later requests to the origin without asking, until
// the page reloads.
func TestCorpusDashboardAsksOncePerOrigin(t *testing.T) {
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintf(w, `{"value":%q}`, strings.TrimPrefix(r.URL.Path, "/")+" ok")
	}))
	defer api.Close()
	ap := netip.MustParseAddrPort(api.Listener.Addr().String())
	app := strings.Replace(dashboardApp, "PORT", fmt.Sprint(ap.Port()), 1)
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("dashboard", []byte(app))),
		hostkit.WithNet(netgate.Config{}, netgate.WithDevLoopback(ap)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "dashboard")
	d := runner.Confirm()
	if !slices.Contains(d.Choices, "session") {
		t.Fatalf("the net dialog offers %v, no 'until I close the page'", d.Choices)
	}
	runner.Answer("once")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the three answers", `document.getElementById("loads").textContent === "1"`)
	if got := browsertest.Eval[string](t, frame, `["weather", "news", "stocks"].map(id => document.getElementById(id).textContent).join(",")`); got != "weather ok,news ok,stocks ok" {
		t.Fatalf("the dashboard shows %q after one 'Allow once'", got)
	}
	if browsertest.Eval[bool](t, runner.Tab, `document.getElementById("confirm").open`) {
		t.Fatal("a second question followed the first: the three requests did not share it")
	}
	// "Once" was that question's: the next refresh asks again, and
	// "until I close the page" then holds for the refreshes after it.
	clickIn(t, frame, "#refresh")
	runner.Confirm()
	runner.Answer("session")
	browsertest.WaitFor(t, frame, "the second load", `document.getElementById("loads").textContent === "2"`)
	before := hits.Load()
	clickIn(t, frame, "#refresh")
	browsertest.WaitFor(t, frame, "the third load, unasked", `document.getElementById("loads").textContent === "3"`)
	if browsertest.Eval[bool](t, runner.Tab, `document.getElementById("confirm").open`) || hits.Load() != before+3 {
		t.Fatalf("after 'until I close the page' the refresh asked again (or did not reach the API: %d requests)", hits.Load()-before)
	}
	// A new page is a new session: the question comes again.
	browsertest.Do(t, runner.Tab, "reload the runner", chromedp.Reload())
	d = runner.Confirm()
	if d.Kind != "net" {
		t.Fatalf("after a reload the dialog shows %+v", d)
	}
	runner.Answer("deny")
	frame = runner.Frame(0)
	browsertest.WaitFor(t, frame, "the refusals", `document.getElementById("loads").textContent === "1"`)
	if got := browsertest.Eval[string](t, frame, `document.getElementById("weather").textContent`); got != "NET_CONFIRM_DENIED" {
		t.Fatalf("after Deny the weather reads %q", got)
	}
}

// corpusApp reads one app of the shared corpus (testdata/corpus), written
// the way a model writes it from the guide alone.
func corpusApp(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", name+".html"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Issue 28 item 4: a person's own clicks on links wait their turn. Seven
// links clicked one after the other, the second right after the first
// dialog's answer, each get their dialog (past the six a minute an app may
// ask on its own), and the ones allowed open; what the app asks on its own
// keeps its limits: a second request while a dialog shows is refused.
func TestCorpusReadingListClicksWaitTheirTurn(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("reading", corpusApp(t, "reading"))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "reading")
	frame := runner.Frame(0)
	urls := browsertest.Eval[[]string](t, frame, `[...document.querySelectorAll("#list a")].map(a => a.getAttribute("href"))`)

	// The app on its own, once the click that opened it has lapsed: two
	// requests at once, one dialog; the other is refused.
	runner.WaitFor("the runner's own click to lapse", `!navigator.userActivation.isActive`)
	browsertest.Eval[bool](t, frame, `(window.own = [], ["https://example.com/1", "https://example.com/2"].forEach((u, i) => snug.openUrl(u).then(s => own[i] = s, e => own[i] = e.message)), true)`)
	d := runner.Confirm()
	browsertest.WaitFor(t, frame, "one refusal", `own.filter(Boolean).length === 1`)
	if refused := browsertest.Eval[string](t, frame, `own.find(Boolean)`); !strings.Contains(refused, "waiting for the user") {
		t.Fatalf("the app's second request while %s is asked: %q, want refused", d.URL, refused)
	}
	runner.Answer("deny")
	browsertest.WaitFor(t, frame, "the first answered", `own.filter(Boolean).length === 2`)

	before := map[string]bool{}
	for _, p := range browsertest.PageTargets(t, runner.Tab) {
		before[string(p.TargetID)] = true
	}
	for i, u := range urls {
		clickIn(t, frame, fmt.Sprintf("#a%d", i+1))
		d := runner.Confirm()
		if d.Kind != "open-url" || d.URL != u {
			t.Fatalf("click %d on %s: the dialog shows %+v", i+1, u, d)
		}
		if i < 2 {
			runner.Answer("once")
		} else {
			runner.Answer("deny")
		}
	}
	browsertest.Until(t, "the two links allowed open", func() bool {
		n := 0
		for _, p := range browsertest.PageTargets(t, runner.Tab) {
			if !before[string(p.TargetID)] && (strings.HasPrefix(p.URL, urls[0]) || strings.HasPrefix(p.URL, urls[1])) {
				n++
			}
		}
		return n == 2
	})
	for _, p := range browsertest.PageTargets(t, runner.Tab) {
		if !before[string(p.TargetID)] {
			_, _ = chromedp.CallBrowser(runner.Tab, target.CloseTarget, target.CloseTargetParams{TargetID: p.TargetID})
		}
	}
}

// Issue 28, how it is checked: an expense tracker with versioned
// migrations, each step one snug.db.script with the version's update. The
// user adds two expenses through the form; then the app is updated with a
// third step (a column) and the runner reloads it: the old rows stay, the
// new column has its default, and the version is 3.
func TestCorpusTrackerMigrates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tracker.html")
	v1 := corpusApp(t, "tracker")
	if err := os.WriteFile(path, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.FileApp("tracker", path)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "tracker")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the form ready", `document.getElementById("add-button").disabled === false`)
	for _, e := range []struct{ what, amount string }{{"Coffee", "3.20"}, {"Train", "9.30"}} {
		browsertest.Do(t, frame, "add "+e.what, chromedp.SendKeys(chromedp.CSS("#what"), e.what), chromedp.SendKeys(chromedp.CSS("#amount"), e.amount+"\r"))
		browsertest.WaitFor(t, frame, e.what+" in the table", fmt.Sprintf(`[...document.querySelectorAll("#rows td")].some(td => td.textContent === %q)`, e.what))
	}
	// The app fills the rows, then asks for the total: wait for it, and
	// say what it reads if it never comes.
	total := func(when string) {
		t.Helper()
		read := func() string {
			return browsertest.Eval[string](t, frame, `document.getElementById("total").textContent`)
		}
		browsertest.Poll(func() bool { return read() == "12.50" })
		if got := read(); got != "12.50" {
			t.Fatalf("the total %s reads %q", when, got)
		}
	}
	total("after two expenses")
	step3 := `  "alter table expenses add column category text not null default 'other'",
];`
	v2 := strings.Replace(string(v1), "\n];\n", "\n"+step3+"\n", 1)
	if v2 == string(v1) {
		t.Fatal("the tracker has no steps list to extend")
	}
	if err := os.WriteFile(path, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	old := runner.Slots()[0]
	if err := h.Apps.Reload(t.Context(), "tracker"); err != nil {
		t.Fatal(err)
	}
	// The runner replaces the instance with a fresh one of the new build.
	runner.WaitFor("the rebuilt instance", fmt.Sprintf(`!document.querySelector('article[data-slot=%q]') && document.querySelectorAll('article.instance[data-slot]').length === 1`, old))
	frame = runner.Frame(0)
	browsertest.WaitFor(t, frame, "the migrated table", `[...document.querySelectorAll("#rows td")].filter(td => td.textContent === "other").length === 2`)
	if got := browsertest.Eval[string](t, frame, `snug.db.query("select version from meta").then(r => String(r[0].version))`); got != "3" {
		t.Fatalf("the schema version after the update: %s", got)
	}
	total("after the migration")
}

// Issue 28, how it is checked: notes with full-text search (FTS5). The
// user writes three notes and searches as they type; the match is
// highlighted, a quote in the query is no syntax error, and a note's markup
// stays text.
func TestCorpusNotesSearch(t *testing.T) {
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("notes", corpusApp(t, "notes"))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "notes")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the empty list", `document.getElementById("count").textContent === "0 notes"`)
	for i, n := range []string{"Buy oat milk and bread", "Call the plumber about the sink", `<img src=x> milk "quoted"`} {
		browsertest.Do(t, frame, "write a note", chromedp.SendKeys(chromedp.CSS("#body"), n), chromedp.Click(chromedp.CSS("#add button")))
		browsertest.WaitFor(t, frame, "the note listed", fmt.Sprintf(`document.getElementById("count").textContent === "%d %s"`, i+1, map[bool]string{true: "note", false: "notes"}[i == 0]))
	}
	browsertest.Do(t, frame, "search", chromedp.SendKeys(chromedp.CSS("#q"), "milk"))
	browsertest.WaitFor(t, frame, "two matches", `document.getElementById("count").textContent === "2 notes"`)
	if got := browsertest.Eval[string](t, frame, `[...document.querySelectorAll("#results mark")].map(m => m.textContent).join(",")`); got != "milk,milk" {
		t.Fatalf("the highlighted words: %q", got)
	}
	if n := browsertest.Eval[int](t, frame, `document.querySelectorAll("#results img").length`); n != 0 {
		t.Fatal("a note's markup became an element")
	}
	// A quote typed in the query is searched as text, no FTS5 syntax: the
	// phrase "milk \"quoted" finds the note holding those two words.
	browsertest.Do(t, frame, "search a quote", chromedp.SendKeys(chromedp.CSS("#q"), ` "quoted`))
	browsertest.WaitFor(t, frame, "the one note", `document.getElementById("count").textContent === "1 note" && document.getElementById("q").value === 'milk "quoted'`)
	if got := browsertest.Eval[string](t, frame, `document.querySelector("#results li").textContent`); got != `<img src=x> milk "quoted"` {
		t.Fatalf("the note found reads %q", got)
	}
}

// Issue 28, how it is checked: a drawing app that follows the theme. The
// user draws a stroke with the mouse; it is in the host's accent, and the
// theme toggle redraws it in the new accent; the stroke is kept.
func TestCorpusDrawingFollowsTheTheme(t *testing.T) {
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("sketch", corpusApp(t, "drawing"))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "sketch")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the pad", `document.getElementById("count").textContent === "0 strokes"`)
	browsertest.WaitStill(t, frame, "#pad")
	box := browsertest.Eval[[]float64](t, frame, `(r => [r.left, r.top])(document.getElementById("pad").getBoundingClientRect())`)
	x, y := box[0]+40, box[1]+100
	browsertest.Do(t, frame, "draw a stroke",
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+60, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+120, y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x+120, y, chromedp.ButtonLeft))
	browsertest.WaitFor(t, frame, "one stroke", `document.getElementById("count").textContent === "1 stroke"`)
	pixel := func() string {
		return browsertest.Eval[string](t, frame, `(() => { const [r, g, b, a] = document.getElementById("pad").getContext("2d").getImageData(100, 100, 1, 1).data; return a ? "rgb(" + r + ", " + g + ", " + b + ")" : "none"; })()`)
	}
	accent := func() string {
		return browsertest.Eval[string](t, runner.Tab, `(() => { const d = document.createElement("div"); d.style.color = getComputedStyle(document.documentElement).getPropertyValue("--snug-accent"); document.body.append(d); const c = getComputedStyle(d).color; d.remove(); return c; })()`)
	}
	if got, want := pixel(), accent(); got != want {
		t.Fatalf("the stroke is %s, the host's accent %s", got, want)
	}
	before := pixel()
	browsertest.Do(t, runner.Tab, "toggle the theme", chromedp.Click(chromedp.ID("theme-toggle")))
	browsertest.WaitFor(t, frame, "the redraw", fmt.Sprintf(`(() => { const [r, g, b] = document.getElementById("pad").getContext("2d").getImageData(100, 100, 1, 1).data; return "rgb(" + r + ", " + g + ", " + b + ")" !== %q; })()`, before))
	if got, want := pixel(), accent(); got != want {
		t.Fatalf("after the theme change the stroke is %s, the host's accent %s", got, want)
	}
	if got := browsertest.Eval[int](t, frame, `snug.db.get("strokes").then(s => s.length)`); got != 1 {
		t.Fatalf("the host keeps %d strokes", got)
	}
}

// Issue 28, how it is checked: a three-step wizard. The user fills a step,
// presses Enter, cannot pass a step with a required field empty, goes
// back and forth, and books; the booking is kept and shown next time.
func TestCorpusWizard(t *testing.T) {
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("trip", corpusApp(t, "wizard"))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "trip")
	frame := runner.Frame(0)
	step := `[...document.querySelectorAll(".step")].findIndex(s => !s.hidden)`
	browsertest.WaitFor(t, frame, "step 1", step+` === 0 && document.activeElement?.id === "name"`)
	clickIn(t, frame, "#next")
	if got := browsertest.Eval[int](t, frame, step); got != 0 {
		t.Fatalf("Next with the name empty went to step %d", got+1)
	}
	browsertest.Do(t, frame, "type the name", chromedp.SendKeys(chromedp.CSS("#name"), "Ada\r"))
	browsertest.WaitFor(t, frame, "step 2", step+` === 1`)
	clickIn(t, frame, `input[value="Oslo"]`)
	clickIn(t, frame, "#back")
	browsertest.WaitFor(t, frame, "back to step 1", step+` === 0 && document.getElementById("name").value === "Ada"`)
	clickIn(t, frame, "#next")
	browsertest.WaitFor(t, frame, "step 2 again", step+` === 1 && document.querySelector('input[value="Oslo"]').checked`)
	clickIn(t, frame, "#next")
	browsertest.WaitFor(t, frame, "the summary", `document.getElementById("summary").textContent === "Ada, 1 to Oslo" && document.getElementById("next").textContent === "Book"`)
	clickIn(t, frame, "#next")
	browsertest.WaitFor(t, frame, "booked", `document.getElementById("done").textContent === "Booked: Oslo for Ada"`)
	runner.Click(`#app-list .app-button[data-app="trip"]`)
	runner.WaitFor("a second instance", `document.querySelectorAll('article.instance').length === 2`)
	browsertest.WaitFor(t, runner.Frame(1), "the booking kept", `document.getElementById("done").textContent === "Last booked: Oslo for Ada"`)
}

// Issue 28, how it is checked: an exporter. The user adds contacts and
// exports them as CSV through snug.saveFile and as JSON through an
// <a download> of a blob URL; each is asked in the host's dialog and
// saved with the data the app holds.
func TestCorpusExporter(t *testing.T) {
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("contacts", corpusApp(t, "exporter"))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "contacts")
	frame := runner.Frame(0)
	dir := browsertest.AllowDownloads(t, runner.Tab)
	browsertest.WaitFor(t, frame, "the app", `document.getElementById("json").href.startsWith("blob:")`)
	for _, c := range []struct{ name, phone string }{{"Grace, Admiral", "555-0101"}, {"Ada", ""}} {
		browsertest.Do(t, frame, "add "+c.name, chromedp.SendKeys(chromedp.CSS("#name"), c.name), chromedp.SendKeys(chromedp.CSS("#phone"), c.phone+"\r"))
		browsertest.WaitFor(t, frame, c.name+" listed", fmt.Sprintf(`[...document.querySelectorAll("#list li")].some(li => li.textContent.startsWith(%q))`, c.name))
	}
	clickIn(t, frame, "#csv")
	if d := runner.Confirm(); d.Kind != "save-file" || d.File != "contacts.csv" {
		t.Fatalf("the CSV export's dialog shows %+v", d)
	}
	runner.Answer("once")
	browsertest.WaitFor(t, frame, "saved", `document.getElementById("status").textContent === "Saved contacts.csv"`)
	if got, want := string(browsertest.Downloaded(t, dir, "contacts.csv")), "name,phone\nAda,\n\"Grace, Admiral\",555-0101"; got != want {
		t.Fatalf("contacts.csv holds %q, want %q", got, want)
	}
	clickIn(t, frame, "#json")
	if d := runner.Confirm(); d.Kind != "save-file" || d.File != "contacts.json" {
		t.Fatalf("the JSON download's dialog shows %+v", d)
	}
	runner.Answer("once")
	if got := string(browsertest.Downloaded(t, dir, "contacts.json")); !strings.Contains(got, `"name": "Grace, Admiral"`) || !strings.Contains(got, `"phone": null`) {
		t.Fatalf("contacts.json holds %s", got)
	}
}
