package scaffold_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/mock"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/scaffold"
	"github.com/snuggen/snuggen/pack"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// Scaffold → build → serve → browser: a fresh app scaffold builds with
// --strict and no diagnostics, and in the real runner its ask (with a schema,
// streaming) and its db history work, the history surviving a second
// instance.
func TestAppScaffoldRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "word-explainer")
	p := scaffold.Params{Name: "word-explainer", AppID: "app.word-explainer", DisplayName: scaffold.DisplayName("word-explainer")}
	if _, err := scaffold.Write(scaffold.App, dir, p, false); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "app.html")
	res, err := pack.Build(context.Background(), pack.Options{Path: page, Strict: true})
	if err != nil || len(res.Diagnostics) != 0 {
		t.Fatalf("build --strict: %v %v", err, res.Diagnostics)
	}

	h, err := hostkit.New(
		hostkit.WithApps(hostkit.FileApp("word-explainer", page)),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithAgent(mock.New(mock.Options{ChunkSize: 8, Delay: 5 * time.Millisecond})),
	)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- h.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})

	r := browsertest.OpenRunner(t, h.URL(), "word-explainer")
	if name := browsertest.Eval[string](t, r.Tab, `document.querySelector('#app-list .app-button .app-name')?.textContent ?? ''`); name != "Word Explainer" {
		t.Errorf("the runner lists the app as %q", name)
	}
	f := r.Frame(0)
	browsertest.WaitFor(t, f, "the Explain button", `document.getElementById('go').disabled === false`)
	browsertest.Eval[bool](t, f, `(() => { window.seen = []; new MutationObserver(() => { const s = document.getElementById('stream').textContent;
		if (s) seen.push(s); }).observe(document.getElementById('stream'), {childList: true, characterData: true, subtree: true}); return true; })()`)
	browsertest.Do(t, f, "type a word and press Enter", chromedp.SendKeys(chromedp.CSS("#word"), "serendipity\r"))
	browsertest.WaitFor(t, f, "the answer", `document.querySelector('#answer h2')?.textContent === 'serendipity'`)
	answer := browsertest.Eval[[]string](t, f, `[...document.querySelectorAll('#answer p')].map(p => p.textContent)`)
	if len(answer) != 2 || answer[0] == "" || answer[1] == "" {
		t.Fatalf("answer paragraphs %q: want the definition and the example", answer)
	}
	if seen := browsertest.Eval[[]string](t, f, `window.seen`); len(seen) < 2 {
		t.Errorf("the stream preview showed %q: want the answer streaming in", seen)
	}
	browsertest.WaitFor(t, f, "one history row", `document.querySelectorAll('#history li').length === 1`)
	want := fmt.Sprintf("serendipity: %s", answer[0])
	if got := browsertest.Eval[string](t, f, `document.querySelector('#history li').textContent`); got != want {
		t.Fatalf("history %q, want %q", got, want)
	}

	// A second instance reads the history from the app's database.
	r2 := browsertest.OpenRunner(t, h.URL(), "word-explainer")
	f2 := r2.Frame(0)
	browsertest.WaitFor(t, f2, "the saved history", fmt.Sprintf(`document.querySelector('#history li')?.textContent === %q`, want))
}
