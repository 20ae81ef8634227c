package maker_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/internal/fakemodel"
	"github.com/snuggen/snuggen/internal/guide"
	"github.com/snuggen/snuggen/pack"
)

var theGuide = sync.OnceValues(func() (string, error) { return guide.Render(context.Background()) })

func options(t *testing.T, s *fakemodel.Server) maker.Options {
	t.Helper()
	g, err := theGuide()
	if err != nil {
		t.Fatal(err)
	}
	return maker.Options{Agent: s.Backend(t), Guide: g, Timeout: time.Minute}
}

// wantRounds is how many rounds each corpus app needs without a smoke run
// when the model fixes what it is told.
var wantRounds = map[string]int{"habits": 2, "reading": 2, "tips": 1, "quotes": 2, "todos": 2, "markdown": 2}

// wantFinal is the draft each ends with: the first that builds (quotes' 2.html
// throws at start; only a smoke run sees that: cli.TestMakeSmokeRunFeedsBack).
var wantFinal = map[string]string{"habits": "2.html", "reading": "3.html", "tips": "1.html", "quotes": "2.html", "todos": "2.html", "markdown": "2.html"}

func reply(t *testing.T, app fakemodel.App, file string) string {
	t.Helper()
	for _, r := range app.Replies {
		if r.File == file {
			return r.Text
		}
	}
	t.Fatalf("%s has no %s", app.Name, file)
	return ""
}

// TestMakeCorpus runs the loop on every corpus app against both wire
// formats: the model's first drafts make the mistakes models make (fetch,
// localStorage, confirm, an inline handler, a link to another page, a form
// that posts, location.reload, prose instead of an app), and it fixes only
// what the turns tell it. Every diagnostic must reach it with its place and
// fix, and the loop must end with the app that builds.
func TestMakeCorpus(t *testing.T) {
	for _, wire := range fakemodel.Wires {
		for _, app := range fakemodel.Corpus(t) {
			t.Run(wire+"/"+app.Name, func(t *testing.T) {
				author := fakemodel.NewAuthor(app, wire == "openai")
				s := fakemodel.New(t, wire, author.Answer)
				opts := options(t, s)
				var lines []string
				opts.Progress = func(r maker.Round) { lines = append(lines, r.Line()) }
				start := time.Now()
				res, err := maker.Make(context.Background(), opts, maker.Request{Prompt: app.Prompt})
				if err != nil {
					t.Fatalf("make: %v\nmissed: %q", err, author.Missed())
				}
				if m := author.Missed(); len(m) > 0 {
					t.Errorf("the model was not told: %q", m)
				}
				if len(res.Rounds) != wantRounds[app.Name] || len(lines) != len(res.Rounds) {
					t.Errorf("rounds %d (progress lines %q), want %d", len(res.Rounds), lines, wantRounds[app.Name])
				}
				if strings.TrimSpace(string(res.Source)) != strings.TrimSpace(reply(t, app, wantFinal[app.Name])) {
					t.Errorf("the result is not the model's last draft:\n%s", res.Source)
				}
				if len(res.Doc) == 0 || res.Manifest.AppID == "" {
					t.Errorf("no built document or manifest: %+v", res.Manifest)
				}
				turns := s.Turns()
				for i, turn := range turns {
					if !strings.HasPrefix(turn.System, strings.TrimRight(opts.Guide, "\n")) {
						t.Errorf("turn %d: the system prompt is not the guide", i+1)
					}
					if !strings.Contains(turn.User, app.Prompt) {
						t.Errorf("turn %d does not carry the request", i+1)
					}
					if strings.Contains(turn.System+turn.User, fakemodel.Key) {
						t.Errorf("turn %d carries the API key", i+1)
					}
				}
				t.Logf("%s: %d rounds, %d turns, %s; %q", app.Name, len(res.Rounds), len(turns), time.Since(start).Round(time.Millisecond), lines)
			})
		}
	}
}

// TestEveryDiagnosticReachesTheModel reads the fix turn itself: each
// diagnostic of the first habits draft is in it with its line, column,
// source line, why and fix, and the draft is in it whole.
func TestEveryDiagnosticReachesTheModel(t *testing.T) {
	codes := map[string]bool{}
	for _, d := range fixTurnCarriesDiagnostics(t, "openai", "habits") {
		codes[d.Code] = true
	}
	if len(codes) < 5 {
		t.Errorf("the draft should make five kinds of mistake, made %v", codes)
	}
}

// fixTurnCarriesDiagnostics makes corpus app name over wire with a model
// whose first draft fails the strict build, checks that the fix turn the
// model received holds each diagnostic of that build (file, line, column,
// the source line, why and fix) and the draft whole, and returns the
// diagnostics.
func fixTurnCarriesDiagnostics(t *testing.T, wire, name string) []pack.Diagnostic {
	t.Helper()
	app := fakemodel.CorpusApp(t, name)
	s := fakemodel.New(t, wire, fakemodel.NewAuthor(app, wire == "openai").Answer)
	if _, err := maker.Make(context.Background(), options(t, s), maker.Request{Prompt: app.Prompt}); err != nil {
		t.Fatal(err)
	}
	turns := s.Turns()
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2", len(turns))
	}
	draft := app.Replies[0].Text
	res, err := pack.Build(context.Background(), pack.Options{Path: "app.html", HTML: []byte(draft), Strict: true})
	if err == nil {
		t.Fatal("the first draft builds")
	}
	for _, d := range res.Diagnostics {
		for _, want := range []string{fmt.Sprintf("app.html:%d:%d: error: %s", d.Line, d.Column, d.Message),
			fmt.Sprintf("%5d | %s", d.Line, strings.ReplaceAll(d.LineText, "\t", " ")), "why: " + d.Why, "fix: " + d.Fix} {
			if !strings.Contains(turns[1].User, want) {
				t.Errorf("the fix turn lacks %q", want)
			}
		}
	}
	if !strings.Contains(turns[1].User, strings.TrimSpace(draft)) {
		t.Error("the fix turn lacks the current source")
	}
	return res.Diagnostics
}

// TestOfflineAgentsAndProse: a model that answers prose twice gets a clear
// ErrNoDocument and no app; the retry told it what was wrong.
func TestProseTwiceIsNoApp(t *testing.T) {
	s := fakemodel.New(t, "anthropic", func(int, fakemodel.Turn) string {
		return "I'm sorry, but I can't help with building that."
	})
	res, err := maker.Make(context.Background(), options(t, s), maker.Request{Prompt: "a habit tracker"})
	if !errors.Is(err, maker.ErrNoDocument) || res != nil {
		t.Fatalf("got %v, %v; want ErrNoDocument and no result", res, err)
	}
	if !strings.Contains(err.Error(), "I'm sorry") {
		t.Errorf("the error does not quote the reply: %v", err)
	}
	turns := s.Turns()
	if len(turns) != 2 || !strings.Contains(turns[1].User, "held no HTML document") {
		t.Fatalf("want one retry that says why, got %d turns", len(turns))
	}
}

// TestRoundsRunOut: a model that never fixes anything ends the loop after
// the rounds asked for, with the problems left and no app.
func TestRoundsRunOut(t *testing.T) {
	draft := fakemodel.CorpusApp(t, "habits").Replies[0].Text
	s := fakemodel.New(t, "openai", func(int, fakemodel.Turn) string { return draft })
	opts := options(t, s)
	opts.Rounds = 2
	res, err := maker.Make(context.Background(), opts, maker.Request{Prompt: "habits"})
	var ue *maker.UnfinishedError
	if !errors.As(err, &ue) || res != nil {
		t.Fatalf("got %v, %v; want an UnfinishedError", res, err)
	}
	if len(ue.Rounds) != 2 || len(s.Turns()) != 2 {
		t.Errorf("%d rounds, %d turns; want 2", len(ue.Rounds), len(s.Turns()))
	}
	if !strings.Contains(err.Error(), "localStorage is not available") {
		t.Errorf("the error does not name what is left: %v", err)
	}
}

// TestReplyBound: a reply over MaxReplyBytes ends the make with
// ErrTooLarge; the backend stopped reading it.
func TestReplyBound(t *testing.T) {
	big := "```html\n<!doctype html><html><body>" + strings.Repeat("<p>streak</p>", 10000) + "</body></html>\n```"
	s := fakemodel.New(t, "openai", func(int, fakemodel.Turn) string { return big })
	opts := options(t, s)
	opts.MaxReplyBytes = 32 << 10
	if _, err := maker.Make(context.Background(), opts, maker.Request{Prompt: "habits"}); !errors.Is(err, maker.ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
}

// TestTimeBound: a model that stalls ends the make at its time bound.
func TestTimeBound(t *testing.T) {
	release := make(chan struct{})
	s := fakemodel.New(t, "anthropic", func(int, fakemodel.Turn) string { <-release; return "" })
	t.Cleanup(func() { close(release) })
	opts := options(t, s)
	opts.Timeout = 300 * time.Millisecond
	start := time.Now()
	_, err := maker.Make(context.Background(), opts, maker.Request{Prompt: "habits"})
	if !errors.Is(err, maker.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the make took %s past a 300ms bound", d)
	}
}

// TestHostileDraftReadsNothing: a draft that points at the host's files
// (an absolute path, a climb, a file: URL) never gets them: the build reads
// nothing from disk, each reference is a diagnostic, the file's content
// never reaches the model, and the make ends without an app.
func TestHostileDraftReadsNothing(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("TOP-SECRET-CONTENT"), 0o600); err != nil {
		t.Fatal(err)
	}
	draft := fmt.Sprintf(`<!doctype html><html><head><meta name="snug:app-id" content="x.y"><meta name="snug:display-name" content="X">
<link rel="stylesheet" href="%s"><script src="../../..%s"></script></head>
<body><img src="file://%s"></body></html>`, secret, secret, secret)
	s := fakemodel.New(t, "openai", func(int, fakemodel.Turn) string { return draft })
	res, err := maker.Make(context.Background(), options(t, s), maker.Request{Prompt: "x"})
	var ue *maker.UnfinishedError
	if !errors.As(err, &ue) || res != nil {
		t.Fatalf("got %v, %v; want an UnfinishedError", res, err)
	}
	if n := len(ue.Rounds[0].Diagnostics); n < 3 {
		t.Errorf("%d diagnostics, want one per reference: %v", n, ue.Rounds[0].Diagnostics)
	}
	for _, turn := range s.Turns() {
		if strings.Contains(turn.User, "TOP-SECRET-CONTENT") {
			t.Fatal("the host file's content reached the model")
		}
	}
}

func TestExtract(t *testing.T) {
	doc := "<!doctype html>\n<html><body>hi</body></html>\n"
	for name, reply := range map[string]string{
		"fenced":      "Here you go:\n```html\n" + doc + "```\nEnjoy!",
		"bare":        "Sure.\n" + doc + "\nThat is all.",
		"plain fence": "```\n" + doc + "```",
		"two fences":  "```js\nconsole.log(1)\n```\nand\n```html\n" + doc + "```",
		"unclosed":    "```html\n" + doc,
	} {
		got, ok := maker.Extract(reply)
		if !ok || got != doc {
			t.Errorf("%s: got %q, %v", name, got, ok)
		}
	}
	for _, reply := range []string{"I can't help with that.", "```js\nconsole.log(1)\n```", "Use <b>bold</b> text."} {
		if got, ok := maker.Extract(reply); ok {
			t.Errorf("%q: extracted %q", reply, got)
		}
	}
}

// TestCarelessDiagnosticsReachTheModel reads the fix turn the model
// received after a careless first draft (testdata/make/todos: CREATE
// TABLE on every start, document.cookie, an inline onclick in a template,
// confirm, no metas; testdata/make/markdown: a script and an import from
// CDNs off the allowlist, clipboard.readText, localStorage): every
// diagnostic of the strict build is in it with its file, line, column,
// the source line, why and fix, over both wire formats.
func TestCarelessDiagnosticsReachTheModel(t *testing.T) {
	wantCodes := map[string][]string{
		"todos":    {"CREATE TABLE todos", "document.cookie", "onclick", "confirm", "snug:app-id"},
		"markdown": {"code.jquery.com", "esm.sh", "navigator.clipboard.readText", "localStorage"},
	}
	for _, wire := range fakemodel.Wires {
		for name, words := range wantCodes {
			t.Run(wire+"/"+name, func(t *testing.T) {
				var msgs []string
				for _, d := range fixTurnCarriesDiagnostics(t, wire, name) {
					msgs = append(msgs, d.Message)
				}
				all := strings.Join(msgs, "\n")
				for _, w := range words {
					if !strings.Contains(all, w) {
						t.Errorf("the build does not name %q: %q", w, msgs)
					}
				}
			})
		}
	}
}
