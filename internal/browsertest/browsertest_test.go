package browsertest_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// Two tabs of the one browser: each evaluates in its own page, WaitFor
// sees a condition that turns true later, and both tabs are page targets.
func TestTabsEvalAndWait(t *testing.T) {
	base := browsertest.ServePages(t, map[string]string{
		"/":      `<!doctype html><title>one</title><script>window.n = 1; setTimeout(() => { window.later = true; }, 100);</script>`,
		"/other": `<!doctype html><title>two</title><script>window.n = 2;</script>`,
	})
	one, two := browsertest.NewTab(t), browsertest.NewTab(t)
	browsertest.Do(t, one, "open one", chromedp.Navigate(base+"/"))
	browsertest.Do(t, two, "open two", chromedp.Navigate(base+"/other"))
	if n := browsertest.Eval[int](t, one, `window.n`); n != 1 {
		t.Errorf("tab one: n = %d", n)
	}
	if n := browsertest.EvalWithin[int](t, two, `new Promise(r => setTimeout(() => r(window.n), 10))`, time.Second); n != 2 {
		t.Errorf("tab two: n = %d", n)
	}
	browsertest.WaitFor(t, one, "the later flag", `window.later === true`)
	var urls []string
	for _, p := range browsertest.PageTargets(t, one) {
		urls = append(urls, p.URL)
	}
	seen := map[string]bool{}
	for _, u := range urls {
		seen[u] = true
	}
	if !seen[base+"/"] || !seen[base+"/other"] {
		t.Errorf("page targets %q: want both tabs", urls)
	}
}

// A path the test did not serve is a 404, not some other page.
func TestServePagesNotFound(t *testing.T) {
	base := browsertest.ServePages(t, map[string]string{"/": "<!doctype html>home"})
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open a missing page", chromedp.Navigate(base+"/missing"))
	if got := browsertest.Eval[string](t, tab, `document.body.textContent`); !strings.Contains(got, "404 page not found") {
		t.Errorf("a missing path shows %q, want the 404 text", got)
	}
}
