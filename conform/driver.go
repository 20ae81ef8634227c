package conform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// DefaultTimeout bounds one run of the kit, from opening the page to the
// report.
const DefaultTimeout = 5 * time.Minute

// RunOptions configure Run.
type RunOptions struct {
	// URL is the page that shows the kit: a runner with the kit mounted,
	// such as http://127.0.0.1:7878/?app=snug-conform.
	URL string
	// Chromium is the browser to run; "" finds one (FindChromium).
	Chromium string
	// Timeout bounds the run (DefaultTimeout when zero).
	Timeout time.Duration
	// Only, when set, names the cases to run (DriveOptions.Only).
	Only []string
	// Logf, when set, gets the driver's progress: the kit found, dialogs
	// answered.
	Logf func(format string, args ...any)
}

// FindChromium returns a Chromium to drive: $SNUG_CHROMIUM, else the first
// of chromium, chromium-browser, google-chrome, chrome on PATH.
func FindChromium() (string, error) {
	if p := os.Getenv("SNUG_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found: install it (apt-get install -y chromium) or set SNUG_CHROMIUM to its path")
}

// ChromiumOptions are the switches the driver starts Chromium with: headless,
// no background traffic, and a resolver that knows only loopback, the names
// under localhost and the host named in the URL, so the kit's pages reach
// nothing else. Chromium refuses to run as root without --no-sandbox; it is
// added only then.
func ChromiumOptions(u *url.URL) []chromedp.ExecAllocatorOption {
	rules := "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost, EXCLUDE *.localhost"
	if h := u.Hostname(); h != "" && net.ParseIP(h) == nil && h != "localhost" && !strings.HasSuffix(h, ".localhost") {
		rules += ", EXCLUDE " + h + ", EXCLUDE *." + h
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("host-resolver-rules", rules),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}

// Run opens opts.URL in a headless Chromium of its own (a fresh profile,
// removed afterwards) and drives the kit there (Drive).
func Run(ctx context.Context, opts RunOptions) (*Report, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("conform: %q is not an http(s) URL of a page that shows the kit", opts.URL)
	}
	exe := opts.Chromium
	if exe == "" {
		if exe, err = FindChromium(); err != nil {
			return nil, fmt.Errorf("conform: %w", err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "snug-conform-chromium-")
	if err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	defer os.RemoveAll(dir)
	aopts := append(ChromiumOptions(u), chromedp.ExecPath(exe), chromedp.UserDataDir(dir))
	actx, acancel := chromedp.NewExecAllocator(ctx, aopts...)
	defer acancel()
	tab, tcancel := chromedp.NewContext(actx)
	defer tcancel()
	if err := chromedp.Do(tab); err != nil {
		return nil, fmt.Errorf("conform: start %s: %w", exe, err)
	}
	if err := chromedp.Do(tab, chromedp.Navigate(opts.URL)); err != nil {
		return nil, fmt.Errorf("conform: open %s in %s: %w", opts.URL, exe, err)
	}
	return Drive(tab, DriveOptions{Only: opts.Only, Logf: opts.Logf})
}

// DriveOptions configure Drive.
type DriveOptions struct {
	// Only, when set, names the cases to run (by id); the kit runs them all
	// when the driver attaches after they started.
	Only []string
	// Logf, when set, gets the driver's progress.
	Logf func(format string, args ...any)

	// afterState, in tests, runs between a step's reading of the kit's
	// state and its reading of the page's dialog.
	afterState func(st kitState)
}

// The kit's side of the driver protocol, evaluated in its frame.
const (
	isKitJS  = `typeof snugConform === "object" && snugConform !== null && snugConform.kit === "snug-conform"`
	stateJS  = `JSON.stringify(snugConform.state())`
	reportJS = `document.getElementById("report").textContent`
	// dialogWait bounds how long a dialog the kit asked for may take to
	// appear, and armWait how long it may take to arm once shown; both only
	// end a wait for a host that shows none (the kit's own wait for the
	// driver's word is longer), so they are generous for a loaded machine.
	dialogWait = 20 * time.Second
	armWait    = 15 * time.Second
)

// dialogJS reads the host's dialog in the top page by the contract of
// docs/conformance.md: visible buttons carrying data-snug-confirm (deny,
// once), an ancestor whose data-armed says whether they take input yet, the
// URL it shows in [data-snug-confirm-url], the file name in
// [data-snug-confirm-file] (the visible ones).
const dialogJS = `(() => {
	const shown = (e) => e.getClientRects().length > 0;
	const b = [...document.querySelectorAll("[data-snug-confirm]")].find(shown);
	if (!b) return JSON.stringify({open: false});
	const box = b.closest("[data-armed]") || b.closest("dialog,[role=dialog]") || document.body;
	const text = (sel) => { const e = [...box.querySelectorAll(sel), ...document.querySelectorAll(sel)].find(shown); return e ? e.textContent : ""; };
	const armed = box.dataset.armed === undefined || box.dataset.armed === "true";
	return JSON.stringify({open: true, armed, id: box.dataset.id || "", kind: box.dataset.kind || "", url: text("[data-snug-confirm-url]"), file: text("[data-snug-confirm-file]")});
})()`

type kitState struct {
	Status string `json:"status"`
	Wants  *struct {
		ID       string `json:"id"`
		Kind     string `json:"kind"`
		URL      string `json:"url"`
		Decision string `json:"decision"`
	} `json:"wants"`
}

type dialogState struct {
	Open  bool   `json:"open"`
	Armed bool   `json:"armed"`
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	URL   string `json:"url"`
	File  string `json:"file"`
}

// asking is whether the kit wants a dialog of this kind answered.
func asking(kind string) bool { return kind == "open-url" || kind == "save-file" }

// shows is what the dialog shows of the thing it asks about: the file for
// a save, else the URL.
func (dl dialogState) shows() string {
	if dl.Kind == "save-file" {
		return dl.File
	}
	return dl.URL
}

// Drive drives the kit shown in tab (a chromedp context of a page that
// shows it, in a runner or any host page) until it is done, and returns its
// report. It finds the kit's frame among the browser's targets (a sandboxed
// frame runs out of process), tells the kit it is attached, answers the
// host's dialogs the kit asks for with real clicks (once armed), denies any
// other dialog and tells the kit, provokes a host-event where the host marks
// a theme toggle with data-snug-theme-toggle, and reads the report. tab's
// context bounds the run.
func Drive(tab context.Context, o DriveOptions) (*Report, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	d := &driver{tab: tab, logf: logf, only: o.Only, afterState: o.afterState, probed: map[target.ID]bool{}, handled: map[string]bool{}, wantSince: map[string]time.Time{}}
	defer d.close()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	busy := 0 // consecutive rounds the kit's frame did not answer in time
	for {
		select {
		case <-tab.Done():
			if d.kit == nil {
				return nil, fmt.Errorf("conform: no kit found in the page (a frame with window.snugConform): %w", context.Cause(tab))
			}
			return nil, fmt.Errorf("conform: the kit did not finish: %w", context.Cause(tab))
		case <-tick.C:
		}
		if d.kit == nil {
			if err := d.find(); err != nil {
				return nil, err
			}
			continue
		}
		r, err := d.step()
		if errors.Is(err, context.DeadlineExceeded) && tab.Err() == nil && busy < 3 {
			// The kit's frame is busy (building a large frame); try again.
			busy++
			continue
		}
		busy = 0
		if err != nil || r != nil {
			return r, err
		}
	}
}

type driver struct {
	tab       context.Context
	only      []string
	logf      func(string, ...any)
	kit       context.Context
	kitCancel context.CancelFunc
	probed    map[target.ID]bool
	handled   map[string]bool
	wantSince map[string]time.Time
	opened    []target.ID // tabs an allowed open-url opened

	afterState func(st kitState)
}

func (d *driver) close() {
	for _, id := range d.opened {
		_, _ = chromedp.Call(d.tab, target.CloseTarget, target.CloseTargetParams{TargetID: id})
	}
	if d.kitCancel != nil {
		d.kitCancel()
	}
}

// eval evaluates js in ctx within a few seconds.
func eval[T any](ctx context.Context, js string) (T, error) {
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(c, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
}

// find looks for the kit's frame among the page and frame targets.
func (d *driver) find() error {
	infos, err := chromedp.Targets(d.tab)
	if err != nil {
		return fmt.Errorf("conform: list the browser's targets: %w", err)
	}
	for _, in := range infos {
		if (in.Type != "iframe" && in.Type != "page") || d.probed[in.TargetID] {
			continue
		}
		// Detach, never close: the target is the host's page or frame.
		// The first Do attaches, with the context's own life (a Run under
		// a shorter context would tie the attachment to it).
		ctx, cancel := chromedp.NewContext(d.tab, chromedp.WithTargetID(in.TargetID), chromedp.WithDetachOnCancel())
		if err := chromedp.Do(ctx); err != nil {
			cancel()
			continue
		}
		ok, err := eval[bool](ctx, isKitJS)
		if err != nil || !ok {
			cancel()
			if err == nil && in.Type == "iframe" {
				// A frame whose document has not run yet is probed again.
				continue
			}
			d.probed[in.TargetID] = err == nil
			continue
		}
		attach := fmt.Sprintf(`snugConform.driver(%s)`, jsArg(map[string]any{"name": "snuggen conform", "dialogs": true, "only": d.only}))
		if _, err := eval[bool](ctx, attach); err != nil {
			cancel()
			return fmt.Errorf("conform: attach to the kit: %w", err)
		}
		d.kit, d.kitCancel = ctx, cancel
		d.logf("the kit is in %s", in.URL)
		return nil
	}
	return nil
}

// step does one round: reads the kit's state and the page's dialog, acts.
func (d *driver) step() (*Report, error) {
	st, err := d.state()
	if err != nil {
		return nil, err
	}
	if st.Status == "done" {
		rep, err := eval[string](d.kit, reportJS)
		if err != nil {
			return nil, fmt.Errorf("conform: read the report: %w", err)
		}
		return ParseReport([]byte(rep))
	}
	if d.afterState != nil {
		d.afterState(st)
	}
	dl, err := d.dialog()
	if err != nil {
		return nil, err
	}
	w := st.Wants
	pending := w != nil && !d.handled[w.ID]
	if dl.Open && !(pending && asking(w.Kind)) {
		// The state was read before the dialog: the kit may have asked
		// for it since (it sets what it wants before it sends the request
		// that opens the dialog), so its state read now says whether it
		// did. Only a dialog the kit does not want then is unexpected.
		if st, err = d.state(); err != nil {
			return nil, err
		}
		w = st.Wants
		pending = w != nil && !d.handled[w.ID]
	}
	switch {
	case dl.Open && pending && asking(w.Kind):
		if err := d.answer(w.Decision); err != nil {
			return nil, err
		}
		d.handled[w.ID] = true
		d.logf("answered the host's %s dialog for %s: %s", dl.Kind, dl.shows(), w.Decision)
		return nil, d.tell(fmt.Sprintf(`snugConform.answered(%s)`, jsArg(map[string]string{"id": w.ID, "kind": dl.Kind, "url": dl.URL, "shown": dl.shows(), "decision": w.Decision})))
	case dl.Open:
		if err := d.answer("deny"); err != nil {
			return nil, err
		}
		d.logf("denied a dialog the kit did not ask for: %s %s", dl.Kind, dl.shows())
		return nil, d.tell(fmt.Sprintf(`snugConform.unexpected(%s)`, jsArg(map[string]string{"kind": dl.Kind, "url": dl.shows()})))
	case pending && asking(w.Kind):
		if d.wantSince[w.ID].IsZero() {
			d.wantSince[w.ID] = time.Now()
		} else if time.Since(d.wantSince[w.ID]) > dialogWait {
			d.handled[w.ID] = true
			return nil, d.tell(fmt.Sprintf(`snugConform.noDialog(%s)`, jsArg(map[string]string{"id": w.ID, "reason": fmt.Sprintf("no visible [data-snug-confirm] control appeared in the page within %s", dialogWait)})))
		}
	case pending && w.Kind == "host-event":
		d.handled[w.ID] = true
		n, err := d.toggleTheme()
		if err != nil {
			return nil, err
		}
		return nil, d.tell(fmt.Sprintf(`snugConform.provoked(%s)`, jsArg(map[string]any{"id": w.ID, "none": n == 0, "what": "theme toggled twice"})))
	}
	return nil, nil
}

// state reads the kit's state.
func (d *driver) state() (kitState, error) {
	var st kitState
	raw, err := eval[string](d.kit, stateJS)
	if err != nil {
		return st, fmt.Errorf("conform: read the kit's state (did its frame go away?): %w", err)
	}
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		return st, fmt.Errorf("conform: the kit's state %q: %w", raw, err)
	}
	return st, nil
}

func (d *driver) tell(js string) error {
	if _, err := eval[bool](d.kit, js); err != nil {
		return fmt.Errorf("conform: tell the kit: %w", err)
	}
	return nil
}

func jsArg(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// answer clicks the dialog's control for decision as a user does: once the
// dialog is armed, with a real click, again if the dialog ignored it (it
// re-arms on focus changes), until it closes or asks something else.
func (d *driver) answer(decision string) error {
	sel := fmt.Sprintf(`[data-snug-confirm=%q]`, decision)
	for attempt := 1; attempt <= 5; attempt++ {
		before, err := d.dialog()
		if err != nil {
			return err
		}
		if !before.Open {
			return nil
		}
		// A dialog arms only while its page is shown. An allowed open-url
		// opened a tab that took the front, and its target may be listed
		// only after the dialog closed (noteOpened missed it): the user
		// comes back to the host's page, as the driver does now.
		if err := d.front(); err != nil {
			return err
		}
		for deadline := time.Now().Add(armWait); !before.Armed; {
			if time.Now().After(deadline) {
				return fmt.Errorf("conform: the host's dialog never armed (data-armed stayed false for %s)", armWait)
			}
			time.Sleep(50 * time.Millisecond)
			if before, err = d.dialog(); err != nil {
				return err
			}
		}
		targets, _ := chromedp.Targets(d.tab)
		c, cancel := context.WithTimeout(d.tab, 10*time.Second)
		err = chromedp.Do(c, chromedp.Click(chromedp.CSS(sel)))
		cancel()
		if err != nil {
			return fmt.Errorf("conform: click %s: %w", sel, err)
		}
		for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			after, err := d.dialog()
			if err != nil {
				return err
			}
			if !after.Open || after.ID != before.ID {
				d.noteOpened(targets)
				return nil
			}
		}
	}
	return fmt.Errorf("conform: the host's dialog ignored 5 clicks on %s", sel)
}

// front brings the host's page to the front when it is hidden.
func (d *driver) front() error {
	state, err := eval[string](d.tab, `document.visibilityState`)
	if err != nil {
		return fmt.Errorf("conform: read the page's visibility: %w", err)
	}
	if state == "visible" {
		return nil
	}
	c, cancel := context.WithTimeout(d.tab, 10*time.Second)
	defer cancel()
	if _, err := chromedp.Call(c, page.BringToFront, cdp.Empty{}); err != nil {
		return fmt.Errorf("conform: bring the host's page to the front: %w", err)
	}
	return nil
}

func (d *driver) dialog() (dialogState, error) {
	var dl dialogState
	raw, err := eval[string](d.tab, dialogJS)
	if err != nil {
		return dl, fmt.Errorf("conform: read the page's dialog: %w", err)
	}
	err = json.Unmarshal([]byte(raw), &dl)
	return dl, err
}

// noteOpened remembers page targets that appeared since before (an allowed
// open-url opens one), to close them at the end.
func (d *driver) noteOpened(before []*target.Info) {
	known := map[target.ID]bool{}
	for _, in := range before {
		known[in.TargetID] = true
	}
	after, _ := chromedp.Targets(d.tab)
	opened := false
	for _, in := range after {
		if in.Type == "page" && !known[in.TargetID] {
			d.opened = append(d.opened, in.TargetID)
			opened = true
		}
	}
	if opened {
		// The opened page took the front: the host's page is hidden, and a
		// dialog it shows next would not arm (nor a frame paint) until the
		// user came back to it, as the driver does now. A failure here is
		// not the run's: answer brings the page back again before a dialog.
		_ = d.front()
	}
}

// toggleTheme clicks the host's theme toggle ([data-snug-theme-toggle])
// twice, leaving the theme as it was; it reports how many it clicked.
func (d *driver) toggleTheme() (int, error) {
	n, err := eval[int](d.tab, `document.querySelectorAll("[data-snug-theme-toggle]").length`)
	if err != nil || n == 0 {
		return 0, nil
	}
	for range 2 {
		c, cancel := context.WithTimeout(d.tab, 10*time.Second)
		err := chromedp.Do(c, chromedp.Click(chromedp.CSS(`[data-snug-theme-toggle]`)))
		cancel()
		if err != nil {
			return 0, fmt.Errorf("conform: click the theme toggle: %w", err)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return 1, nil
}
