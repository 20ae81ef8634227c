// Package smoke runs a built app once in the real runner, in headless
// Chromium, and reports what went wrong, for the authoring loop
// (hostkit/maker): snug.ready must resolve, and the app's frame must log no
// console error, throw no uncaught exception, leave no promise rejection
// unhandled and not navigate away from its document.
//
// Each run serves the app alone from a fresh host on loopback (the offline
// agent, a throwaway data directory, no network) and opens it in a new tab
// of one browser the Browser keeps for the whole make. Its limit: it loads
// the app and watches it settle; it clicks nothing, so what only a user's
// action reaches is left to the build's checks.
package smoke

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/conform"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/maker"
)

// Settle is how long a run watches the app after snug.ready resolved, for
// what its start-up code does next (its first queries, its first render).
const Settle = 1500 * time.Millisecond

// ReadyWait bounds the wait for the frame and for snug.ready.
const ReadyWait = 20 * time.Second

// key is the app's key in the smoke host.
const key = "smoke"

// Browser is one headless Chromium for a make's smoke runs.
type Browser struct {
	ctx    context.Context // the browser
	cancel func()
	dir    string
}

// Start starts Chromium (exe, or conform.FindChromium's when ""), with a
// fresh profile removed by Close. The browser reaches loopback only.
func Start(ctx context.Context, exe string) (*Browser, error) {
	if exe == "" {
		var err error
		if exe, err = conform.FindChromium(); err != nil {
			return nil, err
		}
	}
	dir, err := os.MkdirTemp("", "snug-smoke-chromium-")
	if err != nil {
		return nil, fmt.Errorf("smoke: %w", err)
	}
	u, _ := url.Parse("http://127.0.0.1/")
	actx, acancel := chromedp.NewExecAllocator(context.WithoutCancel(ctx),
		append(conform.ChromiumOptions(u), chromedp.ExecPath(exe), chromedp.UserDataDir(dir))...)
	bctx, bcancel := chromedp.NewContext(actx)
	b := &Browser{ctx: bctx, cancel: func() { bcancel(); acancel() }, dir: dir}
	if err := chromedp.Do(bctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("smoke: start %s: %w", exe, err)
	}
	return b, nil
}

// Close ends the browser and removes its profile.
func (b *Browser) Close() {
	b.cancel()
	os.RemoveAll(b.dir)
}

// Run serves doc (a built app) in a fresh host, opens it in the runner and
// returns what went wrong; an error means the run itself failed.
func (b *Browser) Run(ctx context.Context, doc []byte) ([]maker.Finding, error) {
	data, err := os.MkdirTemp("", "snug-smoke-data-")
	if err != nil {
		return nil, fmt.Errorf("smoke: %w", err)
	}
	defer os.RemoveAll(data)
	h, err := hostkit.New(hostkit.WithAddr("127.0.0.1:0"), hostkit.WithDataDir(data),
		hostkit.WithApps(hostkit.BuiltApp(key, doc, hostkit.MetaFromHTML(doc, key))))
	if err != nil {
		return nil, fmt.Errorf("smoke: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- h.Serve() }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = h.Shutdown(sctx)
		<-served
	}()
	tab, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	return watch(tab, h)
}

// watch opens the runner in tab and reads the app's frame.
func watch(tab context.Context, h *hostkit.Host) ([]maker.Finding, error) {
	if err := chromedp.Do(tab, chromedp.Navigate(h.AppURL(key))); err != nil {
		return nil, fmt.Errorf("smoke: open the runner: %w", err)
	}
	frame, err := attach(tab)
	if err != nil {
		return nil, err
	}
	c := &console{}
	if err := chromedp.Listen(frame, c.record); err != nil {
		return nil, fmt.Errorf("smoke: watch the app's console: %w", err)
	}
	// Attaching enabled the Runtime domain before the listener was there;
	// enabling it again replays what the frame logged until now.
	if _, err := chromedp.Call(frame, runtime.Disable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("smoke: watch the app's console: %w", err)
	}
	if _, err := chromedp.Call(frame, runtime.Enable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("smoke: watch the app's console: %w", err)
	}
	if _, err := chromedp.Call(frame, log.Enable, cdp.Empty{}); err != nil {
		return nil, fmt.Errorf("smoke: watch the app's console: %w", err)
	}
	var found []maker.Finding
	ready, err := chromedp.Run(frame, chromedp.Evaluate[string](readyJS, chromedp.EvalAwaitPromise))
	if err != nil {
		return nil, fmt.Errorf("smoke: read snug.ready: %w", err)
	}
	if ready != "ok" {
		found = append(found, maker.Finding{What: "snug.ready did not resolve: " + ready,
			Fix: "load no script that stops the page before the runtime's; await snug.ready once, at the top of a module script"})
	}
	select {
	case <-time.After(Settle):
	case <-tab.Done():
		return nil, fmt.Errorf("smoke: %w", context.Cause(tab))
	}
	href, err := chromedp.Run(frame, chromedp.Evaluate[string](`location.href`))
	if err == nil && href != h.AppDocumentURL(key) {
		found = append(found, navigatedAway(href))
	} else if err != nil {
		found = append(found, navigatedAway("(the frame's document is gone)"))
	}
	return append(found, c.findings()...), nil
}

func navigatedAway(to string) maker.Finding {
	return maker.Finding{What: "the app's frame navigated away from the app, to " + to,
		Fix: "do not set location or submit a form to another page; show other views inside this page, and call event.preventDefault() in a form's submit handler"}
}

// readyJS waits for snug.ready and says how it ended.
var readyJS = fmt.Sprintf(`(() => {
	if (typeof snug !== "object" || !snug || !snug.ready) return "the snug global is missing";
	return Promise.race([
		Promise.resolve(snug.ready).then(() => "ok", (e) => "it rejected: " + (e && e.message || e)),
		new Promise((r) => setTimeout(() => r("it was still pending after %d s"), %d)),
	]);
})()`, int(ReadyWait/time.Second), ReadyWait.Milliseconds())

// attach finds the runner's app frame (out of process: a target of its
// own) and attaches to it.
func attach(tab context.Context) (context.Context, error) {
	ctx, cancel := context.WithTimeout(tab, ReadyWait)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`article[data-slot] iframe`)))
	if err != nil || len(nodes) == 0 {
		return nil, fmt.Errorf("smoke: the runner showed no app frame: %v", err)
	}
	id := target.ID(nodes[0].FrameID)
	for {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			return nil, fmt.Errorf("smoke: list targets: %w", err)
		}
		for _, in := range infos {
			if in.TargetID == id {
				frame, _ := chromedp.NewContext(tab, chromedp.WithTargetID(id))
				if err := chromedp.Do(frame); err != nil {
					return nil, fmt.Errorf("smoke: attach to the app's frame: %w", err)
				}
				return frame, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, errors.New("smoke: the app's frame never became a target of its own")
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// console collects the frame's errors: console.error calls, uncaught
// exceptions and unhandled rejections (the Runtime domain replays those
// logged before it was enabled), and the browser's own error entries (a
// blocked navigation, a CSP violation).
type console struct {
	mu   sync.Mutex
	msgs []maker.Finding
	seen map[string]bool
}

func (c *console) add(f maker.Finding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.seen == nil {
		c.seen = map[string]bool{}
	}
	if !c.seen[f.What] && len(c.msgs) < 20 {
		c.seen[f.What] = true
		c.msgs = append(c.msgs, f)
	}
}

func (c *console) findings() []maker.Finding {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]maker.Finding(nil), c.msgs...)
}

func (c *console) record(ev any) {
	switch e := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := e.ExceptionDetails
		what := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			what += " " + firstLine(d.Exception.Description)
		}
		fix := "the app's start-up code threw: check the element ids it looks up, and await each snug call inside try/catch"
		if strings.Contains(d.Text, "in promise") {
			fix = "a promise rejected with no handler: await each snug call inside try/catch and show the error in the page"
		}
		c.add(maker.Finding{What: "uncaught exception: " + what, Fix: fix})
	case *runtime.EventConsoleAPICalled:
		if e.Type != runtime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range e.Args {
			if a.Value != nil {
				parts = append(parts, strings.Trim(string(a.Value), `"`))
			} else {
				parts = append(parts, firstLine(a.Description))
			}
		}
		c.add(maker.Finding{What: "console.error: " + strings.Join(parts, " "),
			Fix: "the app reported an error while starting: fix its cause (the message says what failed)"})
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			c.add(maker.Finding{What: fmt.Sprintf("the browser reported (%s): %s", e.Entry.Source, e.Entry.Text),
				Fix: "the sandbox blocked something the app did: use the snug call the guide names for it"})
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
