package hostkit_test

// The runner's make boxes (issue 29 item 3): a sentence in the "New app"
// box becomes a running app through the authoring loop with the host's
// agent (a scripted model on loopback), a "Change this app" box changes it
// and keeps its data, a failed change leaves the working version, and the
// made app is listed again after a restart. The relay's make messages are
// as protected as the runner's other actions.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/fakemodel"
	"github.com/snuggen/snuggen/internal/guide"
)

// Words that steer the scripted model below.
const (
	changeWord = "WEEKLY-CHART"
	breakWord  = "BREAK-IT"
)

// makeModel is a scripted model that writes the corpus's habits app (a
// first draft with six mistakes, then the fix the diagnostics ask for),
// changes its heading when asked for changeWord, and answers breakWord
// with the broken first draft, every time.
func makeModel(t *testing.T) (*fakemodel.Server, fakemodel.App, string) {
	t.Helper()
	app := fakemodel.CorpusApp(t, "habits")
	fixed := app.Replies[1].Text
	weekly := strings.Replace(fixed, "<h1>Habits</h1>", "<h1>Habits, weekly</h1>", 1)
	if weekly == fixed {
		t.Fatal("the corpus's habits app lost its heading")
	}
	author := fakemodel.NewAuthor(app, true)
	s := fakemodel.New(t, "openai", func(n int, turn fakemodel.Turn) string {
		switch {
		case strings.Contains(turn.User, changeWord):
			return "Here it is:\n```html\n" + weekly + "```"
		case strings.Contains(turn.User, breakWord):
			return app.Replies[0].Text
		}
		return author.Answer(n, turn)
	})
	return s, app, weekly
}

func makeHost(t *testing.T, s *fakemodel.Server, data string, opts ...hostkit.Option) *hostkit.Host {
	t.Helper()
	h, err := hostkit.New(append([]hostkit.Option{
		hostkit.WithDataDir(data),
		hostkit.WithAgent(s.Backend(t)),
		hostkit.WithMake(hostkit.MakeOptions{Guide: func(context.Context) (string, error) { return theGuide() }, Rounds: 2, Timeout: time.Minute}),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestRunnerMakeBoxes drives the boxes in Chromium: "New app" streams each
// round's line and diagnostics, installs the app into the data directory
// and opens it; data entered in it survives "Change this app", whose new
// version reloads the open frame and keeps the old one; a change whose
// drafts never build leaves the working version running and on disk; one
// click restores the first version, data and all; a restarted host lists
// the app again.
func TestRunnerMakeBoxes(t *testing.T) {
	s, app, weekly := makeModel(t)
	data := t.TempDir()
	h := makeHost(t, s, data)
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunnerUntil(t, h.URL(), "the New app box", `document.querySelector('#make').dataset.ready === 'true'`)

	browsertest.Do(t, r.Tab, "describe the app",
		chromedp.SendKeys(chromedp.CSS("#make-prompt"), app.Prompt))
	r.Click("#make button[type=submit]")
	r.WaitFor("the make to end", `['done','failed'].includes(document.querySelector('#make').dataset.state)`)
	log := browsertest.Eval[[]string](t, r.Tab, `[...document.querySelectorAll('#make [data-make-log] li')].map(li => li.textContent)`)
	if got := browsertest.Eval[string](t, r.Tab, `document.querySelector('#make').dataset.state`); got != "done" {
		t.Fatalf("the make failed: %q", log)
	}
	if len(log) != 3 || !strings.HasPrefix(log[0], "round 1: ") || !strings.Contains(log[0], "build: 6 problems") ||
		!strings.Contains(log[0], "localStorage") || !strings.Contains(log[0], "fix: ") ||
		!strings.Contains(log[1], "round 2: ") || !strings.Contains(log[1], "build: ok") || !strings.Contains(log[2], "Made habits in 2 rounds") {
		t.Fatalf("the box's log: %q", log)
	}
	r.WaitFor("the made app open", `!!document.querySelector('article.instance[data-app="habits"][data-instance-id]')`)
	src, err := os.ReadFile(filepath.Join(data, hostkit.MadeAppsDir, "habits", maker.Page))
	if err != nil || strings.TrimSpace(string(src)) != strings.TrimSpace(app.Replies[1].Text) {
		t.Fatalf("the data directory does not hold the fixed draft (%v)", err)
	}
	if !browsertest.Eval[bool](t, r.Tab, `!!document.querySelector('#app-list [data-app="habits"]')`) {
		t.Fatal("the made app is not in the list")
	}

	// Data the first version keeps, written through its own runtime as
	// its Add button does.
	fr := r.SlotFrame(slotOf(t, r, "habits"))
	if got := browsertest.EvalWithin[string](t, fr, `snug.ready.then(() => snug.db.set("habits", [{name: "Read", days: [], tip: ""}])).then(() => snug.db.get("habits")).then(JSON.stringify)`, browsertest.Timeout); !strings.Contains(got, "Read") {
		t.Fatalf("the first version's storage holds %s", got)
	}

	changeTo(t, r, "habits", "add a weekly chart "+changeWord)
	if got := browsertest.Eval[string](t, r.Tab, `document.querySelector('.make-box.change').dataset.state`); got != "done" {
		t.Fatalf("the change failed: %q", browsertest.Eval[[]string](t, r.Tab, `[...document.querySelectorAll('.make-box.change li')].map(li => li.textContent)`))
	}
	r.WaitFor("the new version open", `!!document.querySelector('article.instance[data-app="habits"][data-instance-id]')`)
	fr = r.SlotFrame(slotOf(t, r, "habits"))
	browsertest.WaitFor(t, fr, "the new version with the old data",
		`document.querySelector('h1').textContent === 'Habits, weekly' && document.getElementById('list').textContent.includes('Read')`)
	if vs, _ := maker.Versions(filepath.Join(data, hostkit.MadeAppsDir, "habits")); len(vs) != 1 {
		t.Fatalf("versions kept: %v, want the first", vs)
	}

	changeTo(t, r, "habits", "please "+breakWord)
	end := browsertest.Eval[string](t, r.Tab, `document.querySelector('.make-box.change [data-end]').textContent`)
	if !strings.Contains(end, "Not made") || !strings.Contains(end, "still has problems after 2 rounds") {
		t.Fatalf("the failed change says %q", end)
	}
	if got, _ := os.ReadFile(filepath.Join(data, hostkit.MadeAppsDir, "habits", maker.Page)); string(got) != strings.TrimSpace(weekly)+"\n" {
		t.Fatalf("a failed change replaced the working version:\n%s", got)
	}
	browsertest.WaitFor(t, r.SlotFrame(slotOf(t, r, "habits")), "the working version still running",
		`document.querySelector('h1').textContent === 'Habits, weekly'`)

	// One click brings the first version back, with its data.
	sel := `article.instance[data-app="habits"]`
	r.Click(sel + ` [data-make-restore]`)
	r.WaitFor("the restore to end", `['done','failed'].includes(document.querySelector('.make-box.change').dataset.state)`)
	if end := browsertest.Eval[string](t, r.Tab, `document.querySelector('.make-box.change [data-end]').textContent`); !strings.Contains(end, "Restored version 1") {
		t.Fatalf("the restore says %q", end)
	}
	r.WaitFor("the first version open", `!!document.querySelector('article.instance[data-app="habits"][data-instance-id]')`)
	browsertest.WaitFor(t, r.SlotFrame(slotOf(t, r, "habits")), "the first version with the data",
		`document.querySelector('h1').textContent === 'Habits' && document.getElementById('list').textContent.includes('Read')`)

	// A restart lists it again, as an app the box may change.
	h2 := makeHost(t, s, data, hostkit.WithAddr("127.0.0.1:0"))
	defer h2.Shutdown(context.Background())
	infos := h2.Server.Apps()
	if len(infos) != 1 || infos[0].App != "habits" || !infos[0].Made || infos[0].Broken {
		t.Fatalf("after a restart: %+v", infos)
	}
}

// changeTo opens the change box of app's instance, sends what, and waits
// for the change to end.
func changeTo(t *testing.T, r *browsertest.Runner, app, what string) {
	t.Helper()
	sel := `article.instance[data-app="` + app + `"]`
	r.WaitFor("the Change button", `!!document.querySelector('`+sel+` button.change:not([hidden])')`)
	if !browsertest.Eval[bool](t, r.Tab, `!!document.querySelector('`+sel+` .make-box.change:not([hidden])')`) {
		r.Click(sel + ` button.change`)
	}
	browsertest.Eval[string](t, r.Tab, `document.querySelector('`+sel+` .make-box.change textarea').value = ''`)
	browsertest.Do(t, r.Tab, "describe the change", chromedp.SendKeys(chromedp.CSS(sel+` .make-box.change textarea`), what))
	r.Click(sel + ` .make-box.change button[type=submit]`)
	r.WaitFor("the change to end", `['done','failed'].includes(document.querySelector('.make-box.change').dataset.state)`)
}

func slotOf(t *testing.T, r *browsertest.Runner, app string) string {
	t.Helper()
	return browsertest.Eval[string](t, r.Tab, `document.querySelector('article.instance[data-app="`+app+`"]').dataset.slot`)
}

// relayDial opens the runner's WebSocket as origin.
func relayDial(t *testing.T, h *hostkit.Host, origin string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.Origin(), "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {origin}}})
	if ws != nil {
		t.Cleanup(func() { ws.CloseNow() })
	}
	return ws, resp, err
}

// next reads relay messages until one of type typ.
func next(t *testing.T, ws *websocket.Conn, typ string) map[string]any {
	t.Helper()
	return nextOf(t, ws, typ)
}

// nextOf reads messages until one of the types comes, and returns it; the
// ones between are dropped.
func nextOf(t *testing.T, ws *websocket.Conn, types ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for %v: %v", types, err)
		}
		var m map[string]any
		if json.Unmarshal(b, &m) == nil && slices.Contains(types, fmt.Sprint(m["t"])) {
			return m
		}
	}
}

func sendJSON(t *testing.T, ws *websocket.Conn, v any) {
	t.Helper()
	b, _ := json.Marshal(v)
	if err := ws.Write(context.Background(), websocket.MessageText, b); err != nil {
		t.Fatal(err)
	}
}

// TestMakeIsTheRunnersOwn: the make messages ride the runner's WebSocket
// only: a page of another origin cannot open it (a cross-site page cannot
// start a make), an unauthenticated one is refused, a signed-in user the
// host does not allow is told why and nothing reaches the model, and the
// offline agent says it cannot write apps with the fix. Nothing is
// installed by any of them.
func TestMakeIsTheRunnersOwn(t *testing.T) {
	s, app, _ := makeModel(t)
	data := t.TempDir()
	h := makeHost(t, s, data, hostkit.WithAuthenticate(func(r *http.Request) (string, error) {
		if c, err := r.Cookie("session"); err == nil {
			return c.Value, nil
		}
		return "", http.ErrNoCookie
	}))
	browsertest.ServeHost(t, h)

	if _, resp, err := relayDial(t, h, "http://evil.example"); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign origin opened the relay: %v", err)
	}
	if _, resp, err := relayDial(t, h, h.Origin()); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an unauthenticated page opened the relay: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(h.Origin(), "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Origin": {h.Origin()}, "Cookie": {"session=mallory"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	sendJSON(t, ws, map[string]string{"t": "make-info"})
	if info := next(t, ws, "make-info"); info["ready"] != false || !strings.Contains(info["why"].(string), "operators") {
		t.Fatalf("make-info for a user not allowed: %v", info)
	}
	sendJSON(t, ws, map[string]string{"t": "make", "id": "m1", "prompt": app.Prompt})
	if end := next(t, ws, "make-end"); end["id"] != "m1" || end["app"] != nil || !strings.Contains(end["error"].(string), "operators") {
		t.Fatalf("make-end for a user not allowed: %v", end)
	}
	if n := len(s.Turns()); n != 0 {
		t.Fatalf("the model was asked %d times", n)
	}
	if _, err := os.Stat(filepath.Join(data, hostkit.MadeAppsDir)); !os.IsNotExist(err) {
		t.Fatalf("something was installed: %v", err)
	}

	// The offline agent: the box says why, with the fix.
	off, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithAgent(offline.New(offline.Options{})), hostkit.WithMake(hostkit.MakeOptions{Guide: guide.Render}))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, off)
	ws2, _, err := relayDial(t, off, off.Origin())
	if err != nil {
		t.Fatal(err)
	}
	sendJSON(t, ws2, map[string]string{"t": "make-info"})
	if info := next(t, ws2, "make-info"); info["ready"] != false || !strings.Contains(info["why"].(string), "offline agent cannot write apps") ||
		!strings.Contains(info["why"].(string), "--agent openai") {
		t.Fatalf("make-info with the offline agent: %v", info)
	}
}

// TestMakeOverTheRelay: a make sent over the relay streams a make-round per
// round with each diagnostic's line and fix, and ends with the app
// installed; a second make of the same page while one runs is refused.
func TestMakeOverTheRelay(t *testing.T) {
	s, app, _ := makeModel(t)
	h := makeHost(t, s, t.TempDir())
	browsertest.ServeHost(t, h)
	ws, _, err := relayDial(t, h, h.Origin())
	if err != nil {
		t.Fatal(err)
	}
	sendJSON(t, ws, map[string]string{"t": "make", "id": "m1", "prompt": app.Prompt})
	sendJSON(t, ws, map[string]string{"t": "make", "id": "m2", "prompt": app.Prompt})
	// The refusal of m2 and m1's rounds come in either order: read until
	// m1 ends, keeping each kind of message in the order it came.
	var rounds []map[string]any
	ends := map[string]map[string]any{}
	for ends["m1"] == nil {
		m := nextOf(t, ws, "make-round", "make-end")
		if m["t"] == "make-round" {
			rounds = append(rounds, m)
		} else {
			ends[m["id"].(string)] = m
		}
	}
	if end := ends["m2"]; end == nil || !strings.Contains(end["error"].(string), "already making") {
		t.Fatalf("a second make of one page: %v", end)
	}
	if len(rounds) != 2 {
		t.Fatalf("rounds: %v", rounds)
	}
	r1 := rounds[0]
	diags, _ := r1["diagnostics"].([]any)
	if r1["round"] != 1.0 || len(diags) != 6 || !strings.Contains(diags[0].(string), "app.html:") || !strings.Contains(diags[0].(string), "fix: ") {
		t.Fatalf("round 1: %v", r1)
	}
	if r2 := rounds[1]; r2["round"] != 2.0 || r2["diagnostics"] != nil {
		t.Fatalf("round 2: %v", r2)
	}
	if end := ends["m1"]; end["app"] != "habits" || end["rounds"] != 2.0 {
		t.Fatalf("make-end: %v", end)
	}
	if !slices.Contains(h.Apps.Keys(), "habits") {
		t.Fatalf("apps: %v", h.Apps.Keys())
	}
}

// theGuide is the authoring guide, rendered once for the tests.
var theGuide = sync.OnceValues(func() (string, error) { return guide.Render(context.Background()) })

// notesV1 keeps notes in a table made by the guide's numbered steps.
const notesV1 = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="snug:app-id" content="com.example.notes">
<meta name="snug:display-name" content="Notes">
<title>Notes</title>
</head>
<body>
<h1>Notes</h1>
<ul id="list"></ul>
<script type="module">
await snug.ready;
const steps = [
  "create table if not exists notes (id integer primary key, body text not null)",
];
let version = (await snug.db.get("schemaVersion")) ?? 0;
for (; version < steps.length; version++) {
  await snug.db.exec(steps[version]);
  await snug.db.set("schemaVersion", version + 1);
}
const [{ n }] = await snug.db.query("select count(*) as n from notes");
if (n === 0) await snug.db.exec("insert into notes (body) values (?)", ["first note"]);
for (const row of await snug.db.query("select body from notes")) {
  const li = document.createElement("li");
  li.textContent = row.body;
  document.getElementById("list").append(li);
}
</script>
</body>
</html>
`

// TestRunnerChangeMigratesTheSchema: a change whose version adds a column
// (the guide's migration: a numbered step after the app's own) runs on the
// app's database as it is: the row written by the first version is there,
// with the new column, and nothing was made twice.
func TestRunnerChangeMigratesTheSchema(t *testing.T) {
	notesV2 := strings.NewReplacer(
		`  "create table if not exists notes (id integer primary key, body text not null)",
`, `  "create table if not exists notes (id integer primary key, body text not null)",
  "alter table notes add column pinned integer not null default 0",
`,
		`select body from notes`, `select body, pinned from notes`,
		`li.textContent = row.body;`, `li.textContent = row.body + (row.pinned ? " (pinned)" : " (not pinned)");`,
	).Replace(notesV1)
	s := fakemodel.New(t, "anthropic", func(_ int, turn fakemodel.Turn) string {
		if !strings.Contains(turn.User, "add a pinned flag") || !strings.Contains(turn.User, "schemaVersion") {
			return "I need the current app and the request."
		}
		return "```html\n" + notesV2 + "```"
	})
	data := t.TempDir()
	if _, err := maker.Install(filepath.Join(data, hostkit.MadeAppsDir, "notes"), []byte(notesV1)); err != nil {
		t.Fatal(err)
	}
	h := makeHost(t, s, data)
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunner(t, h.URL(), "notes")
	browsertest.WaitFor(t, r.SlotFrame(slotOf(t, r, "notes")), "the first note", `document.getElementById('list').textContent === 'first note'`)

	changeTo(t, r, "notes", "add a pinned flag to each note")
	if got := browsertest.Eval[string](t, r.Tab, `document.querySelector('.make-box.change').dataset.state`); got != "done" {
		t.Fatalf("the change failed: %q", browsertest.Eval[[]string](t, r.Tab, `[...document.querySelectorAll('.make-box.change li')].map(li => li.textContent)`))
	}
	r.WaitFor("the new version open", `!!document.querySelector('article.instance[data-app="notes"][data-instance-id]')`)
	fr := r.SlotFrame(slotOf(t, r, "notes"))
	browsertest.WaitFor(t, fr, "the old row with the new column", `document.getElementById('list').textContent === 'first note (not pinned)'`)
	if got := browsertest.EvalWithin[string](t, fr, `snug.db.query("select count(*) as n, max(pinned) as p from notes").then(JSON.stringify)`, browsertest.Timeout); got != `[{"n":1,"p":0}]` {
		t.Fatalf("the table after the migration: %s", got)
	}
}

// TestRunnerWithoutMakeShowsNoBox: a host without WithMake shows no make
// box; one whose agent cannot write apps shows why, with the fix.
func TestRunnerWithoutMakeShowsNoBox(t *testing.T) {
	plain := runnerHost(t)
	r := browsertest.OpenRunner(t, plain.URL(), "probe")
	r.WaitFor("the host's make-info answer", `document.querySelector('#make').dataset.ready === 'false'`)
	if browsertest.Eval[bool](t, r.Tab, `!document.querySelector('#make').hidden`) {
		t.Fatal("a host without WithMake shows the New app box")
	}
	off, err := hostkit.New(hostkit.WithDataDir(t.TempDir()), hostkit.WithMake(hostkit.MakeOptions{Guide: guide.Render}))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, off)
	r = browsertest.OpenRunnerUntil(t, off.URL(), "the box saying why", `!document.querySelector('#make').hidden`)
	note := browsertest.Eval[string](t, r.Tab, `document.querySelector('#make [data-make-note]').textContent`)
	if !strings.Contains(note, "offline agent cannot write apps") || !browsertest.Eval[bool](t, r.Tab, `document.querySelector('#make form').hidden`) {
		t.Fatalf("the box says %q", note)
	}
}
