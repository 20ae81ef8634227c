package runtimejs

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// formsHost frames the app at the top-left corner, so page coordinates are
// the app's, and records the app's reports.
const formsHost = `<!doctype html><body style="margin:0">
<iframe sandbox="SANDBOX" src="/app" style="position:absolute;left:0;top:0;width:400px;height:300px;border:0"></iframe>
<script>window.log = []; addEventListener("message", (e) => typeof e.data == "string" && log.push(e.data));</script>`

// formsApp has a form with a required field and a submit button, and a form
// with one field and no button; it reports every submit event it sees.
const formsApp = `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="com.example.forms"><meta name="snug:display-name" content="Forms">
<script>RUNTIME</script></head><body style="margin:0">
<form id="f1"><input id="i1" required style="display:block;height:30px"><button id="b1" style="display:block;height:30px;width:100px">Go</button></form>
<form id="f2"><input id="i2" style="display:block;height:30px"></form>
<script>
const report = (m) => parent.postMessage(m, "*");
addEventListener("submit", (e) => { e.preventDefault(); report("submit " + e.target.id + " by " + (e.submitter ? e.submitter.id : "none")); });
addEventListener("message", (e) => {
  if (e.data == "fill") { i1.value = "x"; i1.focus(); }
  if (e.data == "focus2") i2.focus();
  if (e.data == "request") f2.requestSubmit();
});
report("loaded");
</script></body></html>`

// TestBrowserFormsSubmit proves the runtime's form support in a real
// sandboxed iframe, where Chromium itself fires no submit event: a click on
// the submit button, Enter in a field, Enter in a form without a button and
// requestSubmit() each fire exactly one submit event, and an invalid form
// fires none. The same holds in a frame that allows forms, as some MCP Apps
// hosts' do: the runtime stops the browser's own submission, so the app
// sees one submit event and the frame does not navigate.
func TestBrowserFormsSubmit(t *testing.T) {
	for _, sandbox := range []string{"allow-scripts", "allow-scripts allow-forms"} {
		t.Run(sandbox, func(t *testing.T) { testFormsSubmit(t, sandbox) })
	}
}

func testFormsSubmit(t *testing.T, sandbox string) {
	base := browsertest.ServePages(t, map[string]string{
		"/":    strings.Replace(formsHost, "SANDBOX", sandbox, 1),
		"/app": strings.Replace(formsApp, "RUNTIME", string(Script), 1),
	})
	ctx := browsertest.NewTab(t)

	post := func(m string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.querySelector("iframe").contentWindow.postMessage("` + m + `", "*")`)
	}
	// waitLog waits until the app has reported n lines.
	waitLog := func(n int) []string {
		t.Helper()
		var log []string
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(30 * time.Millisecond) {
			log = browsertest.Eval[[]string](t, ctx, `log`)
			if len(log) >= n {
				break
			}
		}
		return log
	}
	settle := chromedp.Sleep(300 * time.Millisecond)

	browsertest.Do(t, ctx, "open the host page", chromedp.Navigate(base+"/"))
	waitLog(1)
	// The first field is required and empty: a click submits nothing.
	browsertest.Do(t, ctx, "click the submit button of the invalid form", chromedp.MouseClickXY(50, 45), settle)
	if log := waitLog(1); len(log) != 1 {
		t.Fatalf("an invalid form was submitted: %q", log)
	}
	steps := []struct {
		name   string
		do     []chromedp.Action[chromedp.Void]
		report string
	}{
		{"click on the submit button", []chromedp.Action[chromedp.Void]{post("fill"), settle, chromedp.MouseClickXY(50, 45)}, "submit f1 by b1"},
		{"Enter in a field of a form with a button", []chromedp.Action[chromedp.Void]{post("fill"), settle, chromedp.KeyEvent("\r")}, "submit f1 by b1"},
		{"Enter in a form without a button", []chromedp.Action[chromedp.Void]{post("focus2"), settle, chromedp.KeyEvent("\r")}, "submit f2 by none"},
		{"requestSubmit()", []chromedp.Action[chromedp.Void]{post("request")}, "submit f2 by none"},
	}
	for i, s := range steps {
		browsertest.Do(t, ctx, s.name, append(s.do, settle)...)
		log := waitLog(i + 2)
		if len(log) != i+2 || log[i+1] != s.report {
			t.Fatalf("%s: the app saw %q, want exactly one more line %q", s.name, log, s.report)
		}
	}
	if log := waitLog(len(steps) + 1); slices.Contains(log[1:], "loaded") {
		t.Fatalf("the app reloaded: a submission navigated the frame: %q", log)
	}
}
