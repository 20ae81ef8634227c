package guide_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
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
