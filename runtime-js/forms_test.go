package runtimejs

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// formsHost frames the app at the top-left corner, so page coordinates are
// the app's, and records the app's reports (log) apart from its acks of the
// test's commands (acks).
const formsHost = `<!doctype html><body style="margin:0">
<iframe sandbox="SANDBOX" src="/app" style="position:absolute;left:0;top:0;width:400px;height:300px;border:0"></iframe>
<script>window.log = []; window.acks = [];
addEventListener("message", (e) => typeof e.data == "string" && (e.data.startsWith("ack ") ? acks : log).push(e.data));</script>`

// formsApp has a form with a required field and a submit button, a form
// with one field and no button, and a form whose submit button is outside
// it (form=); it reports every submit event it sees, and acks each command
// of the test ("fill#3") once it has carried it out.
const formsApp = `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="com.example.forms"><meta name="snug:display-name" content="Forms">
<script>RUNTIME</script></head><body style="margin:0">
<form id="f1"><input id="i1" required style="display:block;height:30px"><button id="b1" style="display:block;height:30px;width:100px">Go</button></form>
<form id="f2"><input id="i2" style="display:block;height:30px"></form>
<form id="f3"><input id="i3" style="display:block;height:30px"></form><button id="b3" form="f3">Go</button>
<script>
const report = (m) => parent.postMessage(m, "*");
addEventListener("submit", (e) => { e.preventDefault(); report("submit " + e.target.id + " by " + (e.submitter ? e.submitter.id : "none")); });
addEventListener("message", (e) => {
  const cmd = String(e.data).split("#")[0];
  if (cmd == "fill") { i1.value = "x"; i1.focus(); }
  if (cmd == "focus2") i2.focus();
  if (cmd == "focus3") i3.focus();
  if (cmd == "request") f2.requestSubmit();
  report("ack " + e.data);
});
report("loaded");
</script></body></html>`

// TestBrowserFormsSubmit proves the runtime's form support in a real
// sandboxed iframe, where Chromium itself fires no submit event: a click on
// the submit button, Enter in a field, Enter in a form without a button,
// Enter in a form whose submit button is outside it (form=) and
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

	// do posts the command m to the app and waits until the app has carried
	// it out (its ack): a message and its effects in the frame, not a time.
	commands := 0
	do := func(m string) {
		t.Helper()
		commands++
		m = fmt.Sprintf("%s#%d", m, commands)
		browsertest.Eval[bool](t, ctx, `(document.querySelector("iframe").contentWindow.postMessage(`+strconv.Quote(m)+`, "*"), true)`)
		browsertest.WaitFor(t, ctx, "the app's ack of "+m, `acks.includes(`+strconv.Quote("ack "+m)+`)`)
	}
	// settled returns the app's reports once it has handled all input given
	// so far: a submit a click or key caused is reported in the event's
	// task, before the app handles (and acks) a message posted after it.
	settled := func() []string {
		t.Helper()
		do("ping")
		return browsertest.Eval[[]string](t, ctx, `log`)
	}

	browsertest.Do(t, ctx, "open the host page", chromedp.Navigate(base+"/"))
	browsertest.WaitFor(t, ctx, "the app loaded", `log.length >= 1`)
	// The first field is required and empty: a click submits nothing.
	browsertest.Do(t, ctx, "click the submit button of the invalid form", chromedp.MouseClickXY(50, 45))
	if log := settled(); len(log) != 1 {
		t.Fatalf("an invalid form was submitted: %q", log)
	}
	steps := []struct {
		name    string
		command string
		do      []chromedp.Action[chromedp.Void]
		report  string
	}{
		{"click on the submit button", "fill", []chromedp.Action[chromedp.Void]{chromedp.MouseClickXY(50, 45)}, "submit f1 by b1"},
		{"Enter in a field of a form with a button", "fill", []chromedp.Action[chromedp.Void]{chromedp.KeyEvent("\r")}, "submit f1 by b1"},
		{"Enter in a form without a button", "focus2", []chromedp.Action[chromedp.Void]{chromedp.KeyEvent("\r")}, "submit f2 by none"},
		{"requestSubmit()", "request", nil, "submit f2 by none"},
		// Its default button is the one outside it: the browser clicks
		// that, and the form is submitted once, by it.
		{"Enter in a form whose button is outside it", "focus3", []chromedp.Action[chromedp.Void]{chromedp.KeyEvent("\r")}, "submit f3 by b3"},
	}
	for i, s := range steps {
		do(s.command)
		if len(s.do) > 0 {
			browsertest.Do(t, ctx, s.name, s.do...)
		}
		if log := settled(); len(log) != i+2 || log[i+1] != s.report {
			t.Fatalf("%s: the app saw %q, want exactly one more line %q", s.name, log, s.report)
		}
	}
	// waitLog waits until the app has reported n lines, or 10 s: a
	// submission that navigated the frame reports "loaded" again.
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
	if log := waitLog(len(steps) + 1); slices.Contains(log[1:], "loaded") {
		t.Fatalf("the app reloaded: a submission navigated the frame: %q", log)
	}
}
