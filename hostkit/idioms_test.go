package hostkit_test

// Issue 14: apps written the way the web works. Each test drives an app
// written as a model writes it (plain links, Unicode URLs, the Blob and
// <a download> export idiom) in Chromium under the real host and runner.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// startApp starts a host with the one app name from testdata and opts, and
// opens the runner with it mounted.
func startApp(t *testing.T, name string, opts ...hostkit.Option) (*hostkit.Host, *browsertest.Runner, context.Context) {
	t.Helper()
	h, err := hostkit.New(append([]hostkit.Option{hostkit.WithApps(hostkit.RawApp(name, readTestdata(t, name+".html")))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), name)
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the handshake", `snug.ready.then(() => true)`)
	// The console errors the runtime writes, for the test to read.
	browsertest.Eval[bool](t, frame, `(() => { window.consoleErrors = []; const e = console.error;
		console.error = (...a) => { consoleErrors.push(a.join(" ")); e.apply(console, a); }; return true; })()`)
	return h, runner, frame
}

// clickIn clicks the element sel in ctx (an app's frame) as a user does:
// a real mouse click at its centre, with opts (a modifier, another button),
// once the element is laid out and still (browsertest.WaitStill).
func clickIn(t *testing.T, ctx context.Context, sel string, opts ...chromedp.MouseOption) {
	t.Helper()
	browsertest.WaitStill(t, ctx, sel)
	qctx, cancel := context.WithTimeout(ctx, browsertest.Timeout)
	defer cancel()
	nodes, err := chromedp.Run(qctx, chromedp.Nodes(chromedp.CSS(sel)))
	if err != nil || len(nodes) == 0 {
		t.Fatalf("find %s: %v", sel, err)
	}
	browsertest.Do(t, ctx, "click "+sel, chromedp.MouseClickNode(nodes[0], opts...))
}

// live fails the test when the app's frame is no longer the app: the
// runner marks an instance that navigated, and the frame's document is
// still the app's.
func live(t *testing.T, runner *browsertest.Runner, frame context.Context) {
	t.Helper()
	if state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.state`); state != "live" {
		t.Fatalf("the app's instance is %q", state)
	}
	if title := browsertest.Eval[string](t, frame, `document.title + " " + typeof snug`); !strings.HasSuffix(title, " object") {
		t.Fatalf("the frame holds %q, not the app", title)
	}
}

// Item 2: plain links work as on the web. A click on an https link (static,
// inserted later by innerHTML, with target=_blank, with a modifier, with
// the middle button) asks the host's dialog to open it and the app stays
// (five dialogs: the host allows an app six a minute);
// an in-page link scrolls; a link or script navigation that would leave the
// page does not happen and the console says why.
func TestIdiomLinksOpenThroughTheHost(t *testing.T) {
	_, runner, frame := startApp(t, "idiom-links")
	for _, c := range []struct {
		sel       string
		opts      []chromedp.MouseOption
		url, read string
	}{
		{"#docs", nil, "https://example.com/docs", ""},
		{"#blank", nil, "https://xn--mnchen-3ya.de/stadt", "https://münchen.de/stadt"},
		{"#docs", []chromedp.MouseOption{chromedp.ButtonModifiers(chromedp.ModifierCtrl)}, "https://example.com/docs", ""},
		{"#md", []chromedp.MouseOption{chromedp.ButtonMiddle}, "https://de.wikipedia.org/wiki/Z%C3%BCrich", "https://de.wikipedia.org/wiki/Zürich"},
	} {
		clickIn(t, frame, c.sel, c.opts...)
		d := runner.Confirm()
		if d.Kind != "open-url" || d.URL != c.url || d.Readable != c.read {
			t.Fatalf("click on %s %v: the dialog shows %+v, want %s (%q)", c.sel, c.opts, d, c.url, c.read)
		}
		runner.Answer("deny")
		live(t, runner, frame)
	}

	// In-page: the browser's own fragment navigation (the runner sizes the
	// frame to its content, so the runner's page is what scrolls), no dialog.
	clickIn(t, frame, "#jump")
	browsertest.WaitFor(t, frame, "the jump to #notes", `location.hash === "#notes"`)

	// A link out of the page: nothing happens but a console error. The
	// click's default (the navigation) was cancelled when the event reached
	// the window, after the runtime's listener.
	browsertest.Eval[bool](t, frame, `(addEventListener("click", (e) => { window.lastPrevented = e.defaultPrevented }), true)`)
	clickIn(t, frame, "#about")
	browsertest.WaitFor(t, frame, "the console error", `consoleErrors.some(e => e.includes("not following about.html"))`)
	if !browsertest.Eval[bool](t, frame, `window.lastPrevented === true`) {
		t.Fatal("the click on a relative link was not cancelled: the frame would navigate")
	}
	live(t, runner, frame)
	if open := browsertest.Eval[bool](t, runner.Tab, `document.getElementById('confirm').open`); open {
		t.Fatal("a link that cannot leave the page raised the dialog")
	}
	errs := browsertest.Eval[[]string](t, frame, `consoleErrors`)
	if !strings.Contains(errs[0], `"about.html"`) && !strings.Contains(errs[0], "about.html") || !strings.Contains(errs[0], `snug.openUrl("https://…")`) {
		t.Errorf("the relative link's console error = %q; it should name the link and the Snug way", errs[0])
	}

	// window.open(url) as models write it: the host's dialog, and null.
	got := browsertest.Eval[string](t, frame, `String(window.open("https://example.com/w", "_blank"))`)
	if d := runner.Confirm(); d.URL != "https://example.com/w" || got != "null" {
		t.Fatalf("window.open: dialog %+v, returned %s", d, got)
	}
	runner.Answer("deny")
	live(t, runner, frame)

	// A script navigation cannot be stopped from inside the sandbox: the
	// console says why as the page goes, and the runner says what happened.
	browsertest.Eval[bool](t, frame, `(dispatchEvent(new Event("beforeunload")), true)`)
	if errs := browsertest.Eval[[]string](t, frame, `consoleErrors`); !strings.Contains(errs[len(errs)-1], "leaving the page") || !strings.Contains(errs[len(errs)-1], "snug.openUrl") {
		t.Errorf("the console says %q as the page goes", errs[len(errs)-1])
	}
	browsertest.Eval[bool](t, frame, `(setTimeout(() => { location.href = "https://example.com/" }), true)`)
	runner.WaitFor("the instance stopped", `document.querySelector('article.instance').dataset.state === "dead"`)
	if s := browsertest.Eval[string](t, runner.Tab, `(s => s.textContent + " | " + s.title)(document.querySelector('article.instance .state'))`); !strings.Contains(s, "left its page") || !strings.Contains(s, "snug.openUrl(url)") {
		t.Errorf("the runner says %q about an app that navigated", s)
	}
}

// Item 1: URLs as browsers read them. A Unicode path and host, a space in
// a query: what the runtime sends passes the frame checks and the net gate
// (no MALFORMED, no NET_INVALID_REQUEST); the dialog shows the ASCII form
// with the readable one beside it, so a look-alike host is visible. A
// relative URL is refused in the app; a refused open-url tells the app why.
func TestIdiomUnicodeURLs(t *testing.T) {
	_, runner, frame := startApp(t, "idiom-links", hostkit.WithNet(netgate.Config{}))
	for _, c := range []struct{ button, url, read string }{
		{"#wiki", "https://de.wikipedia.org/wiki/Z%C3%BCrich", "https://de.wikipedia.org/wiki/Zürich"},
		{"#lookalike", "https://xn--pple-43d.com/", "https://аpple.com/"},
	} {
		clickIn(t, frame, c.button)
		d := runner.Confirm()
		if d.URL != c.url || d.Readable != c.read {
			t.Fatalf("%s: the dialog shows %q beside %q, want %q beside %q", c.button, d.Readable, d.URL, c.read, c.url)
		}
		runner.Answer("deny")
		browsertest.WaitFor(t, frame, "the answer", `document.getElementById("status").textContent === "declined"`)
		browsertest.Eval[bool](t, frame, `(document.getElementById("status").textContent = "", true)`)
	}

	// net.fetch with a city the user typed into the search form: the gate
	// asks about it.
	clickIn(t, frame, "#city")
	browsertest.Do(t, frame, "type the city", chromedp.SendKeys(chromedp.CSS("#city"), "Zürich café\r"))
	if d := runner.Confirm(); d.Kind != "net" || d.URL != "https://api.example.com/search?q=Z%C3%BCrich%20caf%C3%A9" {
		t.Fatalf("net dialog shows %+v", d)
	}
	runner.Answer("deny")
	browsertest.WaitFor(t, frame, "the search's answer", `document.getElementById("results").textContent !== ""`)
	if got := browsertest.Eval[string](t, frame, `document.getElementById("results").textContent`); got != "NET_CONFIRM_DENIED" {
		t.Fatalf("net.fetch = %q, want the user's NET_CONFIRM_DENIED", got)
	}

	type refusal struct{ Code, Message, Reason string }
	// The baseline: the net request above was relayed after both open-url
	// requests, so once its entry is in, theirs are.
	before := runner.CountsWhen("the search's net request in", func(c browsertest.Counts) bool {
		return c.InByType["snug:net-request"] >= 1
	}).InByType["snug:open-url-request"]
	for _, u := range []string{"/about", "data.json", "example.com/page"} {
		r := browsertest.Eval[refusal](t, frame, fmt.Sprintf(`snug.openUrl(%q).then(s => ({code: "resolved " + s}), e => ({code: e.code, message: e.message}))`, u))
		if r.Code != "MALFORMED" || !strings.Contains(r.Message, "an absolute https:// URL is needed") {
			t.Errorf("openUrl(%q) = %+v", u, r)
		}
	}
	// A refusal: the host's reason reaches the app.
	r := browsertest.Eval[refusal](t, frame, `snug.openUrl("http://example.com/").then(s => ({code: "resolved " + s}), e => ({code: e.code, message: e.message, reason: e.reason}))`)
	if r.Code != "MALFORMED" || !strings.Contains(r.Message, "https://") || !strings.HasPrefix(r.Reason, "MALFORMED: ") {
		t.Errorf(`openUrl("http://…") = %+v, want MALFORMED with the host's reason`, r)
	}
	// Counted once the refused request's entry has arrived (it follows the
	// host's answer), not after a fixed wait.
	c := runner.CountsWhen("the refused open-url request in", func(c browsertest.Counts) bool { return c.InByType["snug:open-url-request"] >= before+1 })
	if n := c.InByType["snug:open-url-request"]; n != before+1 {
		t.Errorf("the host saw %d open-url requests, want 1 (relative URLs never leave the app)", n-before)
	}
}

// Item 3: files to the user. The Blob + <a download> idiom and
// snug.saveFile raise the host's dialog (app, file name, size, type); the
// file is saved through the runner page from the user's click, and only
// then. A name that could pass for another is refused with the reason.
func TestIdiomSaveFile(t *testing.T) {
	_, runner, frame := startApp(t, "idiom-links")
	dir := browsertest.AllowDownloads(t, runner.Tab)
	want := "\"city\",\"note\"\n\"Zürich\",\"café, old town\"\n\"München\",\"Biergarten\""

	clickIn(t, frame, "#export")
	d := runner.Confirm()
	if d.Kind != "save-file" || d.File != "cities.csv" || d.Type != "text/csv" || !strings.HasPrefix(d.Size, fmt.Sprintf("%d bytes", len(want))) || !strings.Contains(d.App, "Reading list") {
		t.Fatalf("the save dialog shows %+v", d)
	}
	for _, c := range d.Choices {
		if c == "always" {
			t.Error("save-file offers 'always'")
		}
	}
	// The bytes reach the runner page with the question; nothing is saved
	// while it waits for the user.
	if have := browsertest.NoDownloads(t, dir); len(have) != 0 {
		t.Fatalf("saved before the click: %q", have)
	}
	runner.Answer("once")
	if got := string(browsertest.Downloaded(t, dir, "cities.csv")); got != want {
		t.Fatalf("cities.csv = %q, want %q", got, want)
	}
	live(t, runner, frame)

	// snug.saveFile: the answer is the user's.
	browsertest.Eval[bool](t, frame, `(window.saved = snug.saveFile("notes.md", new TextEncoder().encode("# Notes\n"), "text/markdown"), true)`)
	if d := runner.Confirm(); d.File != "notes.md" || d.Size != "8 bytes" {
		t.Fatalf("dialog %+v", d)
	}
	runner.Answer("deny")
	if got := browsertest.Eval[string](t, frame, `window.saved`); got != "declined" {
		t.Fatalf("saveFile after Cancel = %q", got)
	}
	if got := string(browsertest.Downloaded(t, dir, "cities.csv")); got != want {
		t.Fatal("the first file changed")
	}
	if have := browsertest.NoDownloads(t, dir); len(have) != 1 {
		t.Fatalf("Cancel saved something: %q", have)
	}
	browsertest.Eval[bool](t, frame, `(window.saved = snug.saveFile("report 10:30.txt", "ok"), true)`)
	if d := runner.Confirm(); d.File != "report 10_30.txt" {
		t.Fatalf("a name with ':' shows as %q, want it as it will be saved", d.File)
	}
	runner.Answer("once")
	if got := string(browsertest.Downloaded(t, dir, "report 10_30.txt")); got != "ok" || browsertest.Eval[string](t, frame, `window.saved`) != "saved" {
		t.Fatalf("report = %q", got)
	}

	// A data: URL in an <a download>, as written in markup.
	browsertest.Eval[bool](t, frame, `(() => { const a = document.createElement("a"); a.id = "dl"; a.download = "hello.txt";
		a.href = "data:text/plain;charset=utf-8,Hello%20W%C3%B6rld"; a.textContent = "download"; document.body.prepend(a); return true; })()`)
	clickIn(t, frame, "#dl")
	if d := runner.Confirm(); d.File != "hello.txt" || d.Type != "text/plain" {
		t.Fatalf("data: download shows %+v", d)
	}
	runner.Answer("once")
	if got := string(browsertest.Downloaded(t, dir, "hello.txt")); got != "Hello Wörld" {
		t.Fatalf("hello.txt = %q", got)
	}

	// Hostile names: refused with the reason, no dialog.
	type refusal struct{ Code, Message string }
	for _, name := range []string{"invoice\u202etxt.exe", "../../.bashrc", "setup.exe", ".profile", "a\u200bb.txt"} {
		r := browsertest.Eval[refusal](t, frame, fmt.Sprintf(`snug.saveFile(%q, "x").then(s => ({code: "resolved " + s}), e => ({code: e.code, message: e.message}))`, name))
		if r.Code != "HOST_ERROR" || r.Message == "" || r.Message == "refused by the host" {
			t.Errorf("saveFile(%q) = %+v, want a refusal with the host's reason", name, r)
		}
	}
	if open := browsertest.Eval[bool](t, runner.Tab, `document.getElementById('confirm').open`); open {
		t.Fatal("a refused name raised the dialog")
	}
	if have := browsertest.NoDownloads(t, dir); len(have) != 3 {
		t.Fatalf("downloads = %q", have)
	}
}

// Item 5: the theme. The runner sends the documented token set with the
// mode; the runtime sets them as CSS custom properties; an app that draws
// on a canvas reads them and draws again on theme-change; host-ready
// carries the page's locale.
func TestIdiomThemeTokensAndLocale(t *testing.T) {
	_, runner, app := startApp(t, "idiom-theme")
	type look struct {
		Mode   string            `json:"mode"`
		Tokens map[string]string `json:"tokens"`
		Pixel  string            `json:"pixel"`
		Locale string            `json:"locale"`
	}
	read := func() look {
		return browsertest.Eval[look](t, app, `snug.ready.then(i => {
			const css = getComputedStyle(document.documentElement), tokens = {};
			for (const n of `+"`"+strings.Join(frame.ThemeTokens, " ")+"`"+`.split(" ")) tokens[n] = css.getPropertyValue(n).trim();
			const [r, g, b] = document.getElementById("chart").getContext("2d").getImageData(100, 140, 1, 1).data;
			return {mode: i.theme.mode, tokens, pixel: "rgb(" + r + ", " + g + ", " + b + ")", locale: i.locale || ""};
		})`)
	}
	// What the runner's own stylesheet says, for the mode it shows.
	runnerTokens := func() map[string]string {
		return browsertest.Eval[map[string]string](t, runner.Tab, `(() => { const css = getComputedStyle(document.documentElement), o = {};
			for (const n of `+"`"+strings.Join(frame.ThemeTokens, " ")+"`"+`.split(" ")) o[n] = css.getPropertyValue(n).trim(); return o; })()`)
	}
	rgb := func(hex string) string {
		var r, g, b int
		if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &r, &g, &b); err != nil {
			t.Fatalf("token %q is no #rrggbb colour", hex)
		}
		return fmt.Sprintf("rgb(%d, %d, %d)", r, g, b)
	}
	first := read()
	want := runnerTokens()
	for _, name := range frame.ThemeTokens {
		if first.Tokens[name] == "" || first.Tokens[name] != want[name] {
			t.Errorf("%s in the app = %q, the runner's = %q", name, first.Tokens[name], want[name])
		}
	}
	if first.Pixel != rgb(want["--snug-accent"]) {
		t.Errorf("the canvas bar is %s, want the accent %s", first.Pixel, want["--snug-accent"])
	}
	if lang := browsertest.Eval[string](t, runner.Tab, `navigator.language`); first.Locale != lang || lang == "" {
		t.Errorf("host-ready's locale = %q, the runner's navigator.language = %q", first.Locale, lang)
	}

	browsertest.Do(t, runner.Tab, "toggle the theme", chromedp.Click(chromedp.ID("theme-toggle")))
	browsertest.WaitFor(t, app, "the theme-change", fmt.Sprintf(`document.getElementById("when").dataset.mode === %q`, map[string]string{"light": "dark", "dark": "light"}[first.Mode]))
	second, want2 := read(), runnerTokens()
	if second.Tokens["--snug-accent"] != want2["--snug-accent"] || second.Tokens["--snug-accent"] == first.Tokens["--snug-accent"] {
		t.Errorf("after the toggle the accent is %q (runner %q, before %q)", second.Tokens["--snug-accent"], want2["--snug-accent"], first.Tokens["--snug-accent"])
	}
	if second.Pixel != rgb(want2["--snug-accent"]) {
		t.Errorf("after theme-change the canvas bar is %s, want %s", second.Pixel, want2["--snug-accent"])
	}
}

// Item 6: a schema-constrained ask previews as it streams: onPartial hears
// the object the answer is writing (never the raw JSON text), each reading
// a beginning of the final answer, the last one the answer itself.
func TestIdiomOnPartialPreview(t *testing.T) {
	// The agent streams one step at a time: each step reaches the app
	// before the next is made, so none is coalesced with the next.
	paced := &pacedAgent{func(agent.Completion) agent.Backend { return offline.New(offline.Options{ChunkSize: 20}) }, newStepper()}
	_, runner, app := startApp(t, "idiom-theme", hostkit.WithAgent(paced))
	clickIn(t, app, "#ask button")
	for done := false; !done; {
		select {
		case n := <-paced.emitted:
			runner.CountsWhen(fmt.Sprintf("step %d sent to the app", n), func(c browsertest.Counts) bool { return c.Streaming >= n })
			paced.next <- struct{}{}
		case <-paced.done:
			done = true
		case <-time.After(browsertest.WaitTimeout):
			t.Fatal("the agent neither made a step nor finished")
		}
	}
	browsertest.WaitFor(t, app, "the answer", `!!window.quiz`)
	type result struct {
		Partials []map[string]any `json:"partials"`
		Quiz     map[string]any   `json:"quiz"`
		Items    int              `json:"items"`
	}
	r := browsertest.Eval[result](t, app, `({partials, quiz, items: document.querySelectorAll("#preview li").length})`)
	if len(r.Partials) < 5 {
		t.Fatalf("onPartial heard %d readings, want the answer growing", len(r.Partials))
	}
	last, _ := json.Marshal(r.Partials[len(r.Partials)-1])
	final, _ := json.Marshal(r.Quiz)
	if string(last) != string(final) || r.Items != 3 {
		t.Fatalf("last reading %s, answer %s, %d items shown", last, final, r.Items)
	}
	var prev string
	for i, p := range r.Partials {
		b, _ := json.Marshal(p)
		if string(b) == prev {
			t.Errorf("reading %d repeats the one before", i)
		}
		prev = string(b)
		if qs, ok := p["questions"].([]any); ok && len(qs) > 3 {
			t.Errorf("reading %d has %d questions", i, len(qs))
		}
	}
}

// payApp is a model's checkout page that sends the user to the payment
// site with location.href, as the open web does.
const payApp = `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="test.pay"><meta name="snug:display-name" content="Pay"><title>Pay</title></head><body>
<button id="pay">Pay now</button>
<script type="module">
document.getElementById("pay").addEventListener("click", () => {
  location.href = "https://example.com/pay";
});
</script></body></html>`

// Issue 28 item 7: the runtime's "leaving the page" console error is the
// app's own navigation's alone. Reloading the runner page or replacing the
// frame's document (as a host that reloads an app does) unloads the app
// without a word; the app's own location.href still gets one.
func TestIdiomOnlyTheAppsNavigationIsBlamed(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("pay", []byte(payApp))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	for _, c := range []struct {
		name   string
		unload func(runner *browsertest.Runner, frame context.Context)
		blamed bool
	}{
		{"the runner page reloads", func(r *browsertest.Runner, _ context.Context) {
			browsertest.Do(t, r.Tab, "reload the runner", chromedp.Reload())
		}, false},
		{"the host replaces the frame's document", func(r *browsertest.Runner, _ context.Context) {
			browsertest.Eval[bool](t, r.Tab, `(f => (f.src = f.src, true))(document.querySelector("article.instance iframe"))`)
		}, false},
		{"the app sets location.href", func(_ *browsertest.Runner, frame context.Context) {
			clickIn(t, frame, "#pay")
		}, true},
	} {
		runner := browsertest.OpenRunner(t, h.URL(), "pay")
		frame := runner.Frame(0)
		console := browsertest.WatchConsole(t, frame)
		// Registered after the runtime's listener, so it runs after it: once
		// it has logged, the runtime has had its say.
		browsertest.Eval[bool](t, frame, `(addEventListener("beforeunload", () => console.log("unloaded")), true)`)
		c.unload(runner, frame)
		browsertest.Until(t, c.name+": the frame unloads", func() bool {
			return slices.ContainsFunc(console.Messages(), func(m string) bool { return strings.Contains(m, "unloaded") })
		})
		blamed := slices.ContainsFunc(console.Messages(), func(m string) bool { return strings.Contains(m, "leaving the page") })
		if blamed != c.blamed {
			t.Errorf("%s: the console says the app left its page: %v, want %v\n  %s", c.name, blamed, c.blamed, strings.Join(console.Messages(), "\n  "))
		}
	}
}
