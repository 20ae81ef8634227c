package guide_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/guide"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// TestGuideExamplesRunInChromium runs what the guide teaches in a real
// host and browser: the app of "The shape of an app" (its table made, its
// list drawn from the host's database) and the theme section's canvas
// example (it draws with the host's accent and draws again on the theme
// change the runner's toggle sends).
func TestGuideExamplesRunInChromium(t *testing.T) {
	text, err := guide.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shape := regexp.MustCompile("(?s)```html\n(.*?)\n```").FindStringSubmatch(text)
	theme := regexp.MustCompile("(?s)## Theme\n.*?```js\n(.*?)\n```").FindStringSubmatch(text)
	if shape == nil || theme == nil {
		t.Fatal("the guide has no app example or no theme example")
	}
	canvas := guide.ProbeHead + `<canvas id="chart" width="80" height="80"></canvas><script type="module">` + theme[1] + `</script></body></html>`
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(
		hostkit.RawApp("shape", []byte(shape[1])),
		hostkit.RawApp("canvas", []byte(canvas)),
	))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "shape", "canvas")

	app := runner.Frame(0)
	browsertest.WaitFor(t, app, "the app's table", `snug.db.query("select count(*) as n from todo").then(r => r[0].n === 0)`)
	browsertest.Eval[bool](t, app, `snug.db.exec("insert into todo (title) values (?)", ["from the guide"]).then(() => true)`)
	if n := browsertest.Eval[int](t, app, `document.querySelectorAll("#list li").length`); n != 0 {
		t.Fatalf("the list shows %d items before a reload", n)
	}

	pixel := func() string {
		return browsertest.Eval[string](t, runner.Frame(1), `(() => { const [r, g, b] = document.getElementById("chart").getContext("2d").getImageData(10, 10, 1, 1).data; return "rgb(" + r + ", " + g + ", " + b + ")"; })()`)
	}
	accent := func() string {
		return browsertest.Eval[string](t, runner.Tab, `(() => { const d = document.createElement("div"); d.style.color = getComputedStyle(document.documentElement).getPropertyValue("--snug-accent"); document.body.append(d); const c = getComputedStyle(d).color; d.remove(); return c; })()`)
	}
	browsertest.WaitFor(t, runner.Frame(1), "the drawing", `document.getElementById("chart").getContext("2d").getImageData(10, 10, 1, 1).data[3] === 255`)
	if got, want := pixel(), accent(); got != want {
		t.Fatalf("the canvas is %s, the host's accent %s", got, want)
	}
	before := pixel()
	browsertest.Do(t, runner.Tab, "toggle the theme", chromedp.Click(chromedp.ID("theme-toggle")))
	browsertest.WaitFor(t, runner.Frame(1), "the redraw", fmt.Sprintf(`(() => { const [r, g, b] = document.getElementById("chart").getContext("2d").getImageData(10, 10, 1, 1).data; return "rgb(" + r + ", " + g + ", " + b + ")" !== %q; })()`, before))
	if got, want := pixel(), accent(); got != want {
		t.Fatalf("after the theme change the canvas is %s, the host's accent %s", got, want)
	}

	// Another instance of the app draws the row from the host's database.
	runner.Click(`#app-list .app-button[data-app="shape"]`)
	runner.WaitFor("a second instance", `document.querySelectorAll('article.instance').length === 3`)
	again := runner.Frame(2)
	browsertest.WaitFor(t, again, "the row", `document.querySelector("#list li")?.textContent === "from the guide"`)
}

// TestGuideStorageCapabilitiesMarkdownRunInChromium runs issue 28's
// examples as the guide shows them, in a real host: the migration steps,
// each one script (run twice: the second run does nothing) with INSERT …
// RETURNING, the
// capabilities fallback on a host without a database (CAPABILITY_ABSENT at
// once, the page still drawn), and the Markdown renderer.
func TestGuideStorageCapabilitiesMarkdownRunInChromium(t *testing.T) {
	text, err := guide.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	section := func(name string) string {
		m := regexp.MustCompile("(?s)## " + name + "\n.*?```js\n(.*?)\n```").FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("the guide has no %s example", name)
		}
		return m[1]
	}
	page := func(body, script string) []byte {
		return []byte(guide.ProbeHead + body + `<script type="module">` + script + "\n</script></body></html>")
	}
	storage := page(`<p id="out"></p>`, `window.run = async () => {`+section("Storage")+`
document.getElementById("out").textContent = task.id + " " + task.title; };
await run(); await run(); window.done = true;`)
	caps := page(`<p id="note"></p><button id="exportButton">Export</button>`, section("Capabilities")+`
window.code = await snug.db.exec("select 1").then(() => "ok", (e) => e.code);`)
	md := page(`<div id="answer"></div>`, `const answer = { message: "# Plan\nBuy **milk** and `+"`eggs`"+`.\n\n- [Shop](https://example.com/shop)\n- home" };
`+section("Markdown"))
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(
		hostkit.RawApp("storage", storage), hostkit.RawApp("md", md)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "storage", "md")
	app := runner.Frame(0)
	browsertest.WaitFor(t, app, "the migrations, twice", `window.done === true`)
	if got := browsertest.Eval[string](t, app, `document.getElementById("out").textContent`); got != "2 Plan" {
		t.Fatalf("after two runs of the migrations the page shows %q, want the second task", got)
	}
	if got := browsertest.Eval[string](t, app, `snug.db.query("select (select version from meta) as v, (select count(*) from pragma_index_list('tasks')) as i, (select count(*) from pragma_table_info('tasks') where name = 'due') as d").then(r => JSON.stringify(r[0]))`); got != `{"v":2,"i":1,"d":1}` {
		t.Fatalf("the migrated schema: %s", got)
	}
	browsertest.WaitFor(t, runner.Frame(1), "the Markdown", `document.querySelector("#answer a") !== null`)
	if got := browsertest.Eval[string](t, runner.Frame(1), `document.getElementById("answer").innerHTML`); got != `<h2>Plan</h2><p>Buy <strong>milk</strong> and <code>eggs</code>.</p><ul><li><a href="https://example.com/shop">Shop</a></li><li>home</li></ul>` {
		t.Fatalf("the Markdown renders as %s", got)
	}

	noDB, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("caps", caps)),
		hostkit.WithBrokerOptions(func(o *broker.Options) { o.DB = nil }))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, noDB)
	r2 := browsertest.OpenRunner(t, noDB.URL(), "caps")
	browsertest.WaitFor(t, r2.Frame(0), "the fallback", `window.code !== undefined`)
	if got := browsertest.Eval[string](t, r2.Frame(0), `window.code + " | " + document.getElementById("note").textContent`); got != "CAPABILITY_ABSENT | Notes last until this page closes." {
		t.Fatalf("on a host without a database: %s", got)
	}
}

// TestGuideAPIExamplesRunInChromium runs the API section's examples one
// after the other in one app on a real host (and the Errors section's
// handler, called once), with the page's own names
// they use (a title, a row drawer, a note element) defined: each finishes
// without an error. The dialogs they raise (a file, a link) are answered
// No, as a user may; net.fetch's example reaches the public internet and is
// left to the build check.
func TestGuideAPIExamplesRunInChromium(t *testing.T) {
	text, err := guide.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"snug.ready", "snug.capabilities", "snug.db.exec", "snug.db.query", "snug.db.script", "snug.db.get", "snug.db.set",
		"snug.db.export", "snug.db.import", "snug.ask", "snug.openUrl", "snug.saveFile", "snug.on", "snug.off", "snug.emit"}
	var script strings.Builder
	script.WriteString(`const title = "from the guide", text = "Some text to sum up.";
const addRow = () => {}, showOfflineNotice = () => {}, drawChart = () => {}, onHint = () => {};
const exportButton = document.createElement("button"), preview = document.createElement("p"), note = document.createElement("p");
const rows = [["a", 1], ["b", 2]];
let paused = false;
window.ran = [];
const run = async (name, f) => { try { await f(); ran.push(name); } catch (e) { ran.push(name + ": " + (e.code || "") + " " + e.message); } };
`)
	for _, n := range names {
		m := regexp.MustCompile("(?s)### `" + regexp.QuoteMeta(n) + "`\n.*?```js\n(.*?)\n```").FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("the guide has no example for %s", n)
		}
		body := m[1]
		if n == "snug.db.import" {
			body = "const file = new Blob([await snug.db.export()]);\n" + body
		}
		fmt.Fprintf(&script, "await run(%q, async () => {\n%s\n});\n", n, body)
	}
	// The Errors section's handler, called as an app calls it.
	m := regexp.MustCompile("(?s)## Errors\n.*?```js\n(.*?)\n```").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("the guide has no Errors example")
	}
	fmt.Fprintf(&script, "await run(\"SnugError\", async () => {\n%s\nif (await summarize(text) === undefined) throw new Error(\"no summary\");\n});\n", m[1])
	names = append(names, "SnugError")
	page := []byte(guide.ProbeHead + `<script type="module">` + script.String() + "</script></body></html>")
	h, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithApps(hostkit.RawApp("api", page)))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "api")
	app := runner.Frame(0)
	// Answer each dialog No until every example has run.
	browsertest.Until(t, "every example", func() bool {
		if browsertest.Eval[bool](t, runner.Tab, `document.getElementById('confirm').open && document.getElementById('confirm').dataset.armed === 'true'`) {
			runner.Answer("deny")
		}
		return browsertest.Eval[int](t, app, `window.ran ? ran.length : 0`) == len(names)
	})
	ran := browsertest.Eval[[]string](t, app, `ran`)
	t.Logf("ran: %q", ran)
	for i, n := range names {
		if ran[i] != n {
			t.Errorf("the example of %s: %s", n, ran[i])
		}
	}
}
