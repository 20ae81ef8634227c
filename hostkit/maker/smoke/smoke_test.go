package smoke_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/hostkit/maker/smoke"
	"github.com/snuggen/snuggen/internal/fakemodel"
	"github.com/snuggen/snuggen/internal/guide"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/pack"
)

const head = `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="test.smoke"><meta name="snug:display-name" content="Smoke">
<title>Smoke</title></head><body><ul id="list"></ul>
`

func build(t *testing.T, body string) []byte {
	t.Helper()
	res, err := pack.Build(context.Background(), pack.Options{Path: "app.html", HTML: []byte(head + body + "</body></html>")})
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return res.HTML
}

func start(t *testing.T) *smoke.Browser {
	t.Helper()
	exe := testenv.Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b, err := smoke.Start(ctx, exe)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// TestRunFindsWhatBreaksAtStart: an app that throws, logs an error, leaves
// a rejection unhandled and navigates its frame away gets one finding for
// each; a working app (storage used, an ask answered) gets none.
func TestRunFindsWhatBreaksAtStart(t *testing.T) {
	b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	good := build(t, `<script type="module">
await snug.ready;
await snug.db.exec("create table if not exists habit (id integer primary key, name text)");
await snug.db.exec("insert into habit (name) values (?)", ["walk"]);
for (const r of await snug.db.query("select name from habit")) {
  const li = document.createElement("li"); li.textContent = r.name; document.getElementById("list").append(li);
}
</script>`)
	found, err := b.Run(ctx, good)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 0 {
		t.Fatalf("a working app got findings: %v", found)
	}

	bad := build(t, `<script>window.notAFunction();</script>
<script type="module">
await snug.ready;
console.error("could not load the habits");
Promise.reject(new Error("nobody waits for me"));
document.getElementById("lst").append("x");
</script>`)
	found, err = b.Run(ctx, bad)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range found {
		all = append(all, f.What)
		if f.Fix == "" {
			t.Errorf("finding %q has no fix", f.What)
		}
	}
	text := strings.Join(all, "\n")
	t.Logf("findings:\n%s", text)
	for _, want := range []string{"console.error: could not load the habits", "nobody waits for me", "Cannot read properties of null", "notAFunction is not a function"} {
		if !strings.Contains(text, want) {
			t.Errorf("findings miss %q:\n%s", want, text)
		}
	}
}

// TestRunSeesNavigationAway: an app that sends its frame elsewhere (past
// the build's checks, by a computed name) is reported.
func TestRunSeesNavigationAway(t *testing.T) {
	b := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	found, err := b.Run(ctx, build(t, `<script type="module">
await snug.ready;
window["loc" + "ation"]["hr" + "ef"] = "/elsewhere";
</script>`))
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, f := range found {
		all = append(all, f.What)
	}
	if text := strings.Join(all, "\n"); !strings.Contains(text, "navigated away") {
		t.Fatalf("no navigation finding:\n%s", text)
	}
}

// TestMakeCorpusWithSmokeRuns runs the loop over the whole corpus with
// the smoke run on, as snuggen make does where Chromium is found: every
// app ends working, in the rounds each needs (quotes' second draft builds
// but throws at start, which only the smoke run sees), and each round's
// line, with the loop's own time, is logged (the closing figures of issue
// 29: go test -v -run TestMakeCorpusWithSmokeRuns ./hostkit/maker/smoke).
func TestMakeCorpusWithSmokeRuns(t *testing.T) {
	b := start(t)
	g, err := guide.Render(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"habits": 2, "quotes": 3, "reading": 2, "tips": 1, "todos": 2, "markdown": 2}
	for _, app := range fakemodel.Corpus(t) {
		author := fakemodel.NewAuthor(app, true)
		s := fakemodel.New(t, "openai", author.Answer)
		var lines []string
		opts := maker.Options{Agent: s.Backend(t), Guide: g, Timeout: 2 * time.Minute, Smoke: b.Run,
			Progress: func(r maker.Round) { lines = append(lines, r.Line()) }}
		res, err := maker.Make(context.Background(), opts, maker.Request{Prompt: app.Prompt})
		if err != nil {
			t.Errorf("%s: %v", app.Name, err)
			continue
		}
		if len(res.Rounds) != want[app.Name] || len(author.Missed()) > 0 {
			t.Errorf("%s: %d rounds, want %d; missed %q", app.Name, len(res.Rounds), want[app.Name], author.Missed())
		}
		t.Logf("%s: %d rounds\n  %s", app.Name, len(res.Rounds), strings.Join(lines, "\n  "))
	}
}
