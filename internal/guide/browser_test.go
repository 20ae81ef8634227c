package guide

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// TestGuideExamplesRunInChromium runs what the guide teaches in a real
// host and browser: the app of "The shape of an app" (its table made, its
// list drawn from the host's database) and the theme section's canvas
// example (it draws with the host's accent and draws again on the theme
// change the runner's toggle sends).
func TestGuideExamplesRunInChromium(t *testing.T) {
	text, err := Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	shape := regexp.MustCompile("(?s)```html\n(.*?)\n```").FindStringSubmatch(text)
	theme := regexp.MustCompile("(?s)## Theme\n.*?```js\n(.*?)\n```").FindStringSubmatch(text)
	if shape == nil || theme == nil {
		t.Fatal("the guide has no app example or no theme example")
	}
	canvas := ProbeHead + `<canvas id="chart" width="80" height="80"></canvas><script type="module">` + theme[1] + `</script></body></html>`
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
