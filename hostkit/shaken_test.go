package hostkit_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// Two apps as a model writes them: one that names the one member it uses,
// one that reaches the member through a variable.
const (
	shakenApp = `<!doctype html><meta name="snug:app-id" content="shaken"><meta name="snug:display-name" content="Shaken"><title>Shaken</title>
<button id="go">Explain</button><pre id="out"></pre><p id="more"></p>
<script type="module">
document.querySelector("#go").addEventListener("click", async () => {
  const answer = await snug.ask("explain", { word: "snug" }, { schema: { type: "object", required: ["meaning"], properties: { meaning: { type: "string" } } } });
  document.querySelector("#out").textContent = answer.meaning;
  document.querySelector("#more").innerHTML = 'More on <a id="src" href="https://en.wiktionary.org/wiki/snug" target="_blank">Wiktionary</a>';
});
</script>`
	dynamicApp = `<!doctype html><meta name="snug:app-id" content="dynamic"><meta name="snug:display-name" content="Dynamic"><title>Dynamic</title>
<button id="go">Explain</button><pre id="out"></pre><p id="more"></p>
<script type="module">
const call = (what, ...args) => snug[what](...args);
document.querySelector("#go").addEventListener("click", async () => {
  const answer = await call("ask", "explain", { word: "snug" }, { schema: { type: "object", required: ["meaning"], properties: { meaning: { type: "string" } } } });
  document.querySelector("#out").textContent = answer.meaning;
  document.querySelector("#more").innerHTML = 'More on <a id="src" href="https://en.wiktionary.org/wiki/snug" target="_blank">Wiktionary</a>';
});
</script>`
)

// TestTreeShakenRuntimeInTheBrowser: an app that names snug.ask gets the
// runtime with ask and without db, net and saveFile, and its ask works end to
// end in Chromium through the runner and the offline agent, and a plain link
// it inserts with innerHTML, as an app rendering the agent's Markdown does,
// opens through the host's dialog (the sink keeps the link routing, with
// openUrl, though the app never names openUrl: pack's mayLink); an app that
// reaches snug[what] gets the whole runtime, with a note saying why, and
// works the same.
func TestTreeShakenRuntimeInTheBrowser(t *testing.T) {
	for _, c := range []struct {
		key, html string
		full      bool
	}{{"shaken", shakenApp, false}, {"dynamic", dynamicApp, true}} {
		res, err := pack.Build(context.Background(), pack.Options{Path: c.key + ".html", HTML: []byte(c.html), Strict: true})
		if err != nil {
			t.Fatalf("%s: %v", c.key, err)
		}
		full := bytes.Contains(res.HTML, runtimejs.Injected(runtimejs.Script))
		if full != c.full || runtimejs.TargetOf(res.HTML) != "snug" {
			t.Errorf("%s: whole runtime injected = %v, want %v", c.key, full, c.full)
		}
		var notes []string
		for _, d := range res.Diagnostics {
			if d.Severity == pack.SeverityNote && d.Code == "runtime.full" {
				notes = append(notes, d.Message)
			}
		}
		if c.full != (len(notes) == 1) || c.full && !strings.Contains(notes[0], "computed member") {
			t.Errorf("%s: notes %q", c.key, notes)
		}
	}

	h := startHost(t, hostkit.WithApps(hostkit.RawApp("shaken", []byte(shakenApp)), hostkit.RawApp("dynamic", []byte(dynamicApp))),
		hostkit.WithAgent(offline.New(offline.Options{})))
	for _, c := range []struct {
		key    string
		hasDB  bool
		member string
	}{{"shaken", false, "undefined"}, {"dynamic", true, "object"}} {
		runner := browsertest.OpenRunner(t, h.URL(), c.key)
		frame := runner.Frame(0)
		if got := browsertest.Eval[string](t, frame, `typeof snug.db`); got != c.member {
			t.Errorf("%s: typeof snug.db = %q, want %q", c.key, got, c.member)
		}
		browsertest.Eval[bool](t, frame, `(document.querySelector("#go").click(), true)`)
		browsertest.WaitFor(t, frame, c.key+": the agent's answer", `document.querySelector("#out").textContent.length > 0`)
		if got := browsertest.Eval[string](t, frame, `typeof snug.saveFile`); got != map[bool]string{false: "undefined", true: "function"}[c.hasDB] {
			t.Errorf("%s: typeof snug.saveFile = %q", c.key, got)
		}
		// A plain link the app inserted with innerHTML, in an app that
		// never names openUrl: its runtime has the link routing (the sink
		// keeps it) and takes the click to the host's dialog.
		clickIn(t, frame, "#src")
		if d := runner.Confirm(); d.Kind != "open-url" || d.URL != "https://en.wiktionary.org/wiki/snug" {
			t.Errorf("%s: the link's click shows %+v", c.key, d)
		}
		runner.Answer("deny")
		live(t, runner, frame)
	}
}

// formApp is an ask-only app with a form, as a model writes one: the
// question is sent on the form's submit.
const formApp = `<!doctype html><meta name="snug:app-id" content="formed"><meta name="snug:display-name" content="Formed"><title>Formed</title>
<form id="f"><input id="q" name="q" required value="snug"><button id="go">Explain</button></form><pre id="out"></pre>
<script type="module">
document.querySelector("#f").addEventListener("submit", async (e) => {
  e.preventDefault();
  const answer = await snug.ask("explain", { word: document.querySelector("#q").value }, { schema: { type: "object", required: ["meaning"], properties: { meaning: { type: "string" } } } });
  document.querySelector("#out").textContent = answer.meaning;
});
</script>`

// TestTreeShakenFormAppInTheBrowser: an app with a <form> that names only
// snug.ask gets the ask-only runtime with the forms before it (pack's
// mayForm), not the whole runtime, and its form submits in the runner's
// sandbox (which drops every submission itself): the button's click fires
// the submit event, the app asks, the answer shows.
func TestTreeShakenFormAppInTheBrowser(t *testing.T) {
	res, err := pack.Build(context.Background(), pack.Options{Path: "formed.html", HTML: []byte(formApp), Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	askOnly, _ := runtimejs.Shaken("snug", func(m string) bool { return m == "ask" || m == "forms" })
	if !bytes.Contains(res.HTML, askOnly) || bytes.Contains(res.HTML, runtimejs.Injected(runtimejs.Script)) {
		t.Error("the form app did not get the ask-only runtime with the forms")
	}
	h := startHost(t, hostkit.WithApps(hostkit.RawApp("formed", []byte(formApp))), hostkit.WithAgent(offline.New(offline.Options{})))
	runner := browsertest.OpenRunner(t, h.URL(), "formed")
	frame := runner.Frame(0)
	if got := browsertest.Eval[string](t, frame, `typeof snug.db + " " + typeof snug.ask`); got != "undefined function" {
		t.Errorf("typeof snug.db, snug.ask = %q", got)
	}
	clickIn(t, frame, "#go")
	browsertest.WaitFor(t, frame, "the agent's answer to the form", `document.querySelector("#out").textContent.length > 0`)
	live(t, runner, frame)
}
