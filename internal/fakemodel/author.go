package fakemodel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/pack"
)

// App is one app of the test corpus (testdata/make/NAME): the user's
// sentence and the model's replies in order, each a draft the way models
// write them (N.html, the first with the mistakes models make) or prose
// with no app at all (N.txt).
type App struct {
	Name    string
	Prompt  string
	Replies []Reply
}

// Reply is one reply of the corpus.
type Reply struct {
	File string
	Text string
	Doc  bool // an HTML draft, not prose
}

// Corpus loads testdata/make from the repository's root.
func Corpus(t testing.TB) []App {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "make")
	dirs, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var out []App
	for _, d := range dirs {
		if d.IsDir() {
			out = append(out, loadApp(t, filepath.Join(root, d.Name())))
		}
	}
	return out
}

// CorpusApp is the corpus app called name.
func CorpusApp(t testing.TB, name string) App {
	t.Helper()
	for _, a := range Corpus(t) {
		if a.Name == name {
			return a
		}
	}
	t.Fatalf("no corpus app %q", name)
	return App{}
}

func loadApp(t testing.TB, dir string) App {
	prompt, err := os.ReadFile(filepath.Join(dir, "prompt.txt"))
	if err != nil {
		t.Fatal(err)
	}
	a := App{Name: filepath.Base(dir), Prompt: strings.TrimSpace(string(prompt))}
	files, _ := filepath.Glob(filepath.Join(dir, "[0-9]*.*"))
	sort.Slice(files, func(i, j int) bool { return order(files[i]) < order(files[j]) })
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		a.Replies = append(a.Replies, Reply{File: filepath.Base(f), Text: string(b), Doc: strings.HasSuffix(f, ".html")})
	}
	return a
}

func order(f string) int {
	n, _ := strconv.Atoi(strings.SplitN(filepath.Base(f), ".", 2)[0])
	return n
}

// Author is a scripted model that writes one corpus app as a model does:
// the first turn gets the first reply; each later turn gets the next reply
// only when the turn told the model everything it needed about the last one
// (a draft that fails snuggen build --strict: the draft itself and every
// diagnostic with its file, line, column, message and fix), and the last
// one again when it did not, as a model that was not told would. What a
// turn left out is kept in Missed.
type Author struct {
	App    App
	Fenced bool // wrap drafts in an ```html fence with a sentence before it, as chat models do; else bare

	mu     sync.Mutex
	last   int // the reply last sent, -1 before the first
	missed []string
}

// NewAuthor returns an Author of app.
func NewAuthor(app App, fenced bool) *Author { return &Author{App: app, Fenced: fenced, last: -1} }

// Missed lists what turns left out, "reply N: what".
func (a *Author) Missed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.missed...)
}

// Answer is the Author as a Server's Answer.
func (a *Author) Answer(_ int, t Turn) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	next := a.last + 1
	if a.last >= 0 {
		if miss := told(a.App.Replies[a.last], t.User); len(miss) > 0 {
			for _, m := range miss {
				a.missed = append(a.missed, fmt.Sprintf("after %s: %s", a.App.Replies[a.last].File, m))
			}
			next = a.last
		}
	}
	next = min(next, len(a.App.Replies)-1)
	a.last = next
	r := a.App.Replies[next]
	if !r.Doc || !a.Fenced {
		return r.Text
	}
	return "Here is the app. It keeps everything in the host's storage.\n\n```html\n" + r.Text + "```\n\nOpen it in a Snug host to try it."
}

// told returns what a turn failed to say about reply: for a draft that
// does not build, the draft and each diagnostic's place, message and fix.
func told(r Reply, turn string) []string {
	if !r.Doc {
		return nil
	}
	res, err := pack.Build(context.Background(), pack.Options{Path: "app.html", HTML: []byte(r.Text), Strict: true})
	if err == nil || res == nil {
		return nil
	}
	var miss []string
	if !strings.Contains(turn, strings.TrimSpace(r.Text)) {
		miss = append(miss, "the current source")
	}
	for _, d := range res.Diagnostics {
		if d.Severity != pack.SeverityError {
			continue
		}
		for _, want := range []string{fmt.Sprintf("%s:%d:%d: error: %s", d.File, d.Line, d.Column, d.Message), "fix: " + d.Fix} {
			if !strings.Contains(turn, want) {
				miss = append(miss, want)
			}
		}
	}
	return miss
}
