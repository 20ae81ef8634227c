package hostkit_test

import (
	"bytes"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

var writeScreenshot = flag.Bool("screenshot", false, "write the runner screenshot to docs/runner.png")

// exampleApps installs every examples/*/app.html, packaged on the fly.
func exampleApps(t *testing.T) hostkit.Option {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "examples", "*", "app.html"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	var apps []hostkit.App
	for _, p := range paths {
		apps = append(apps, hostkit.FileApp(hostkit.KeyFromPath(p), p))
	}
	return hostkit.WithApps(apps...)
}

// Every example mounts in the runner and makes its handshake, and the host
// rejects none of its frames.
func TestExamplesRunInTheRunner(t *testing.T) {
	h, err := hostkit.New(exampleApps(t), hostkit.WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), h.Apps.Keys()...)
	n := len(h.Apps.Keys())
	runner.CountsWhen("every example's announce in", func(c browsertest.Counts) bool { return c.InByType["snug:app-announce"] >= n })
	// An absence window (see settle): an example sends its load-time frames
	// in its own time, so no later frame of ours fences them.
	time.Sleep(settle)
	c := runner.CountsWhen("every example's announce in", func(c browsertest.Counts) bool { return c.InByType["snug:app-announce"] >= n })
	if c.Reject != 0 {
		rows := browsertest.Eval[[]string](t, runner.Tab, `[...document.querySelectorAll('#frames tbody tr[data-verdict="reject"]')].map(tr => tr.textContent)`)
		t.Errorf("the host rejected %d frames from the examples: %q", c.Reject, rows)
	}
	if got := c.InByType["snug:app-announce"]; got != len(h.Apps.Keys()) {
		t.Errorf("%d announces for %d examples", got, len(h.Apps.Keys()))
	}
}

// The README's screenshot: the notes and todo examples with the inspector
// beside them. Written to docs/runner.png with -screenshot; always taken and
// checked.
func TestRunnerScreenshot(t *testing.T) {
	h, err := hostkit.New(exampleApps(t), hostkit.WithDataDir(t.TempDir()), hostkit.WithTheme("light"))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "notes")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the first note", `document.querySelectorAll('#list li').length === 1`)
	for i, note := range []string{"Groceries\nmilk, bread, coffee", "Snug runner\nEvery app in its own sandbox; the host brokers the rest."} {
		if i > 0 {
			browsertest.Do(t, frame, "a new note", chromedp.Click(chromedp.ID("new")))
			browsertest.WaitFor(t, frame, "an empty note", `document.getElementById("text").value === ""`)
		}
		browsertest.Eval[bool](t, frame, fmt.Sprintf(`(() => { const x = document.getElementById("text"); x.value = %q; x.dispatchEvent(new Event("input")); return true; })()`, note))
		browsertest.WaitFor(t, frame, "saved", `document.getElementById("saved").textContent === "saved"`)
	}
	browsertest.WaitFor(t, frame, "two notes", `document.querySelectorAll('#list li').length >= 2`)
	// The picture once the list is laid out and the inspector has drawn the
	// saves (their entries come after their answers, which the app has).
	browsertest.WaitStill(t, frame, "#list li:nth-child(2)")
	runner.CountsWhen("the saves drawn in the inspector", func(c browsertest.Counts) bool { return c.InByType["snug:db-request"] >= 2 })
	buf, err := chromedp.Run(runner.Tab, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 600 {
		t.Fatalf("screenshot is %v", b)
	}
	if *writeScreenshot {
		out := filepath.Join("..", "docs", "runner.png")
		if err := os.WriteFile(out, buf, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s (%d bytes)", out, len(buf))
	}
}
