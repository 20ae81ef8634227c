// Package browsertest is the one browser harness of the test suite: it
// starts real headless Chromium once per test binary (starting one costs
// about a second; testenv.Chromium skips without one, or fails when CI is
// set), opens a fresh tab per test, evaluates JavaScript and waits for
// conditions in a tab or a frame, serves the test's pages and hosts on
// loopback, and drives the runner page: it reaches into an app's sandboxed
// frame (an out-of-process iframe, so a DevTools target of its own) and
// reads the runner's inspector and confirm dialog.
//
// A test binary that uses it ends the browser in TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }
//
// Its limit: it drives pages the test serves on loopback; the browser runs
// with testenv.ChromiumFlags, so it reaches nothing else. Every tab of a
// binary shares one profile, so tests must not depend on a cold cache or
// empty storage of the browser.
package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	cdpbrowser "github.com/chromedp/cdproto/browser"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/testenv"
)

// Timeout bounds one browser step (an evaluation, a click, a navigation).
const Timeout = 30 * time.Second

// WaitTimeout bounds a wait for a condition (WaitFor, Runner.WaitFor) and
// for an app's frame to become reachable.
const WaitTimeout = 20 * time.Second

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

// Main runs the tests and then ends the shared browser and removes its
// profile directory.
func Main(m *testing.M) int {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if browser.dir != "" {
		os.RemoveAll(browser.dir)
	}
	return code
}

func allocatorOptions(exe, dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1280, 900),
	}
	for _, f := range testenv.ChromiumFlags {
		name, val, hasVal := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if hasVal {
			opts = append(opts, chromedp.Flag(name, val))
		} else {
			opts = append(opts, chromedp.Flag(name, true))
		}
	}
	return opts
}

// NewTab opens a fresh tab in the shared browser, starting the browser on
// first use (testenv.Chromium skips or fails the test when there is none).
// The tab closes when the test ends.
func NewTab(t testing.TB) context.Context {
	t.Helper()
	exe := testenv.Chromium(t)
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "snug-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		browser.dir = dir
		actx, acancel := chromedp.NewExecAllocator(context.Background(), allocatorOptions(exe, dir)...)
		bctx, bcancel := chromedp.NewContext(actx)
		if err := chromedp.Do(bctx); err != nil {
			bcancel()
			acancel()
			browser.err = fmt.Errorf("start %s: %w", exe, err)
			return
		}
		browser.ctx = bctx
		browser.cancel = func() { bcancel(); acancel() }
	})
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	ctx, cancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return ctx
}

// Do runs actions in ctx (a tab or a frame) within Timeout, failing the
// test with what on error.
func Do(t testing.TB, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Eval evaluates a JavaScript expression in ctx, awaiting a promise, and
// decodes its JSON value into T.
func Eval[T any](t testing.TB, ctx context.Context, js string) T {
	t.Helper()
	return EvalWithin[T](t, ctx, js, Timeout)
}

// EvalWithin is Eval with its own deadline d, for a script that runs long.
func EvalWithin[T any](t testing.TB, ctx context.Context, js string, d time.Duration) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", Short(js), err)
	}
	return v
}

// Short shortens a script for a failure message.
func Short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// WaitFor polls a JavaScript condition in ctx (awaiting a promise) until it
// is true, failing the test after WaitTimeout with what.
func WaitFor(t testing.TB, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(cctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): last error %v", what, Short(js), err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Until polls cond, a condition the test reads on its own side (a count, a
// canary's record, the browser's targets), until it holds, failing the test
// after WaitTimeout with what. The deadline only bounds a hang.
func Until(t testing.TB, what string, cond func() bool) {
	t.Helper()
	if !Poll(cond) {
		t.Fatalf("waiting for %s: it did not happen within %s", what, WaitTimeout)
	}
}

// Poll is Until for a caller that says itself what went wrong: it reports
// whether cond held within WaitTimeout (read every 20 ms, and once more at
// the deadline), and the caller then checks, or fails with, what it saw.
func Poll(cond func() bool) bool {
	for deadline := time.Now().Add(WaitTimeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return cond()
		}
	}
	return true
}

var stillWaits atomic.Int64

// WaitStill waits until the element sel (a CSS selector) in ctx (an app's
// frame) is laid out and has stayed where it is over several readings, in
// a frame whose size fits its page, so that a click aimed at it lands
// there: an app that has just inserted it reports its new height, and
// until the runner has resized the frame the page scrolls inside it, so a
// click aimed then lands where the element was once the frame grows (seen:
// 10 px above a link). A page taller than the runner lets a frame be must
// stay still longer. It waits for the layout, not for a time: a loaded
// machine only takes more readings.
func WaitStill(t testing.TB, ctx context.Context, sel string) {
	t.Helper()
	// Each wait counts its own readings.
	key := strconv.Quote(strconv.FormatInt(stillWaits.Add(1), 10))
	WaitFor(t, ctx, sel+" laid out and still", `(() => {
		const e = document.querySelector(`+strconv.Quote(sel)+`);
		const r = e && e.getBoundingClientRect();
		const h = document.documentElement.scrollHeight;
		const k = r && r.width > 0 && r.height > 0 ? [r.x, r.y, r.width, r.height, innerWidth, innerHeight, h, scrollY].join() : "";
		const w = window.__snugStill || (window.__snugStill = {});
		const s = w[`+key+`] || (w[`+key+`] = {k: "", n: 0});
		s.n = k !== "" && k === s.k ? s.n + 1 : 0;
		s.k = k;
		return s.n >= (h <= innerHeight ? 2 : 20);
	})()`)
}

// PageTargets lists the browser's page targets (its tabs and windows).
func PageTargets(t testing.TB, ctx context.Context) []*target.Info {
	t.Helper()
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatalf("list targets: %v", err)
	}
	var pages []*target.Info
	for _, in := range infos {
		if in.Type == "page" {
			pages = append(pages, in)
		}
	}
	return pages
}

// Runner is the runner page open in a tab.
type Runner struct {
	t   testing.TB
	Tab context.Context
}

// OpenRunner opens the runner page at base (such as hostkit's Host.URL())
// with apps mounted, and waits until every instance has had its handshake.
func OpenRunner(t testing.TB, base string, apps ...string) *Runner {
	t.Helper()
	return OpenRunnerUntil(t, base, fmt.Sprintf("%d instances ready", len(apps)),
		fmt.Sprintf(`document.querySelectorAll('article.instance[data-instance-id]').length === %d`, len(apps)), apps...)
}

// OpenRunnerUntil opens the runner page at base with apps mounted and waits
// until the condition js holds on it (what names it in a failure): for apps
// that make no handshake, or whose frame is expected to die.
func OpenRunnerUntil(t testing.TB, base, what, js string, apps ...string) *Runner {
	t.Helper()
	tab := NewTab(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	for _, a := range apps {
		q.Add("app", a)
	}
	u.RawQuery = q.Encode()
	Do(t, tab, "open the runner", chromedp.Navigate(u.String()))
	r := &Runner{t: t, Tab: tab}
	r.WaitFor(what, js)
	return r
}

// Attach returns the Runner of tab, a tab the test has already pointed at
// the runner page itself.
func Attach(t testing.TB, tab context.Context) *Runner {
	return &Runner{t: t, Tab: tab}
}

// WaitFor polls a condition on the runner page.
func (r *Runner) WaitFor(what, js string) {
	r.t.Helper()
	WaitFor(r.t, r.Tab, what, js)
}

// Click clicks the element sel (a CSS selector) on the runner page.
func (r *Runner) Click(sel string) {
	r.t.Helper()
	Do(r.t, r.Tab, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// Slots lists the runner's instance slots in page order.
func (r *Runner) Slots() []string {
	r.t.Helper()
	return Eval[[]string](r.t, r.Tab, `[...document.querySelectorAll('article.instance')].map(a => a.dataset.slot)`)
}

// Frame returns a context that runs in the sandboxed frame of the n-th
// instance (0-based). The frame is out of process: a target of its own
// whose id is the frame's id.
func (r *Runner) Frame(n int) context.Context {
	r.t.Helper()
	slots := r.Slots()
	if n >= len(slots) {
		r.t.Fatalf("instance %d: the runner has %d", n, len(slots))
	}
	return r.SlotFrame(slots[n])
}

// SlotFrame returns a context that runs in the sandboxed frame of slot.
func (r *Runner) SlotFrame(slot string) context.Context {
	t := r.t
	t.Helper()
	return FrameOf(t, r.Tab, fmt.Sprintf(`article[data-slot=%q] iframe`, slot))
}

// FrameOf returns a context that runs in the document of the iframe sel (a
// CSS selector) on the page in tab: a sandboxed frame is out of process, a
// target of its own whose id is the frame's id.
func FrameOf(t testing.TB, tab context.Context, sel string) context.Context {
	t.Helper()
	slot := sel
	ctx, cancel := context.WithTimeout(tab, WaitTimeout)
	defer cancel()
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(sel)))
	if err != nil || len(nodes) == 0 {
		t.Fatalf("find the frame of %s: %v", slot, err)
	}
	id := target.ID(nodes[0].FrameID)
	for {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			t.Fatalf("list targets: %v", err)
		}
		for _, in := range infos {
			if in.TargetID == id {
				fctx, fcancel := chromedp.NewContext(tab, chromedp.WithTargetID(id))
				t.Cleanup(fcancel)
				if err := chromedp.Do(fctx); err != nil {
					t.Fatalf("attach to the frame of %s: %v", slot, err)
				}
				return fctx
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the frame of %s (%s) never became a target; is it out of process?", slot, id)
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// Counts are the inspector's counters.
type Counts struct {
	In        int            `json:"in"`
	Accept    int            `json:"accept"`
	Ignore    int            `json:"ignore"`
	Reject    int            `json:"reject"`
	Out       int            `json:"out"`
	Delivered int            `json:"delivered"`
	Terminal  int            `json:"terminal"`
	Streaming int            `json:"streaming"`
	Audit     int            `json:"audit"`
	InByType  map[string]int `json:"inByType"`
	OutByType map[string]int `json:"outByType"`
}

// CountsWhen reads the inspector's counters once ok holds for them (an
// event the test knows comes last), failing the test after WaitTimeout with
// what and the last counts. There is no reading "after a while": the
// inspector draws its counts every 200 ms (DRAW_MS in site/src/inspector.js)
// from entries the host sends when it gets to them, so a fixed wait says
// nothing about what has arrived. The page counts a frame it delivers
// (terminal, streaming) and the host's inspect entry of it (out, by type)
// from two relay messages, frame then entry, and a draw may fall between
// them; the entry of a frame the app sent (in, by type) comes after any
// answer the host sent while handling it, and the entries of one page come
// in the order its frames went. So a test waits for each count it asserts,
// or for a later one that fences it: the terminal's entry, for instance,
// has arrived once the app-responses out outnumber the streaming ones
// delivered. A baseline is read the same way, once the entry of the last
// frame before it has arrived.
func (r *Runner) CountsWhen(what string, ok func(Counts) bool) Counts {
	r.t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for {
		raw := Eval[string](r.t, r.Tab, `document.getElementById('counts').dataset.counts || '{}'`)
		var c Counts
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			r.t.Fatalf("inspector counts %q: %v", raw, err)
		}
		if ok(c) {
			return c
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("inspector: %s never held; last counts %+v", what, c)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Row is one row of the inspector's frame table.
type Row struct {
	Dir       string `json:"dir"`
	Type      string `json:"type"`
	RequestID string `json:"requestId"`
	Code      string `json:"code"`
}

// Rows reads the inspector's frame table.
func (r *Runner) Rows() []Row {
	r.t.Helper()
	return Eval[[]Row](r.t, r.Tab, `[...document.querySelectorAll('#frames tbody tr')].map(tr => ({
		dir: tr.dataset.dir || '', type: tr.dataset.type || '',
		requestId: tr.querySelector('.rid')?.textContent || '',
		code: tr.querySelector('.code')?.textContent || ''}))`)
}

// Dialog is what the runner's confirm dialog shows.
type Dialog struct {
	Open   bool   `json:"open"`
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	App    string `json:"app"`
	Method string `json:"method"`
	URL    string `json:"url"`
	// Readable is the URL's Unicode form shown beside it, "" when the
	// dialog shows none (it reads as URL).
	Readable string `json:"readable"`
	// File, Size and Type are what a save-file question shows.
	File string `json:"file"`
	Size string `json:"size"`
	Type string `json:"type"`
	// Choices are the decisions the dialog offers: the visible buttons'
	// data-snug-confirm values, and "always" when its remember box shows.
	Choices []string `json:"choices"`
}

// Confirm waits for the runner's confirm dialog and reads it.
func (r *Runner) Confirm() Dialog {
	r.t.Helper()
	r.WaitFor("the confirm dialog", `document.getElementById('confirm').open`)
	return Eval[Dialog](r.t, r.Tab, `(() => { const d = document.getElementById('confirm'); const shown = e => e.getClientRects().length > 0;
		const choices = [...d.querySelectorAll('[data-snug-confirm]')].filter(shown).map(b => b.dataset.snugConfirm);
		const box = d.querySelector('[data-snug-confirm-remember]');
		if (box && shown(box) && !choices.includes('always')) choices.push('always');
		return {open: d.open, id: d.dataset.id || '', kind: d.dataset.kind || '',
		app: document.getElementById('confirm-app').textContent, method: document.getElementById('confirm-method').textContent,
		url: document.getElementById('confirm-url').textContent,
		readable: shown(document.getElementById('confirm-readable')) ? document.getElementById('confirm-readable').textContent : '',
		file: document.getElementById('confirm-file').textContent, size: document.getElementById('confirm-size').textContent,
		type: document.getElementById('confirm-type').textContent, choices}; })()`)
}

// armedJS holds once the confirm dialog is open and armed: its controls
// ignore input until it has been visible for a moment (site/src/confirm.js).
const armedJS = `document.getElementById('confirm').open && document.getElementById('confirm').dataset.armed === 'true'`

// Answer answers the confirm dialog as a user does, with real clicks: it
// brings the runner's tab to the front when it is hidden, waits until the
// dialog is armed, and clicks the button for decision ("once", "deny", or
// "always": first the "always allow" box, then, armed again, the allow
// button it turned into "Always allow"), until the dialog closes or shows
// another question. A click the dialog ignored (it was disarmed again in
// between, say by a focus change) is made again, as a user would.
func (r *Runner) Answer(decision string) {
	r.t.Helper()
	if Eval[string](r.t, r.Tab, `document.visibilityState`) != "visible" {
		ctx, cancel := context.WithTimeout(r.Tab, Timeout)
		_, err := chromedp.Call(ctx, page.BringToFront, cdp.Empty{})
		cancel()
		if err != nil {
			r.t.Fatalf("bring the runner to the front: %v", err)
		}
		r.WaitFor("the runner visible", `document.visibilityState === 'visible'`)
	}
	id := Eval[string](r.t, r.Tab, `document.getElementById('confirm').dataset.id || ''`)
	answered := fmt.Sprintf(`!document.getElementById('confirm').open || document.getElementById('confirm').dataset.id !== %q`, id)
	for attempt := 1; ; attempt++ {
		r.WaitFor("the confirm dialog armed", armedJS)
		sel := fmt.Sprintf(`#confirm [data-snug-confirm=%q]`, decision)
		if decision == "always" && !Eval[bool](r.t, r.Tab, `!!document.querySelector('#confirm [data-snug-confirm-remember]:checked')`) {
			sel = `#confirm [data-snug-confirm-remember]`
		}
		r.Click(sel)
		if sel == `#confirm [data-snug-confirm-remember]` {
			continue // armed again, the allow button says "always"
		}
		if r.poll(answered, 2*time.Second) {
			return
		}
		if attempt == 5 {
			r.t.Fatalf("the confirm dialog ignored %d clicks on %s", attempt, sel)
		}
	}
}

// poll reports whether the condition js holds on the runner page within d.
func (r *Runner) poll(js string, d time.Duration) bool {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if Eval[bool](r.t, r.Tab, js) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// ChooseFiles clicks sel in ctx (a tab or an app's frame) as the user would
// to open a file chooser, and answers the chooser with files, as if the user
// picked them: the page gets its input and change events. It fails the test
// when the click opens no chooser.
func ChooseFiles(t testing.TB, ctx context.Context, sel string, files []string) {
	t.Helper()
	opened := make(chan *page.EventFileChooserOpened, 1)
	lctx, stop := context.WithCancel(ctx)
	defer stop()
	if err := chromedp.Listen(lctx, func(ev any) {
		if e, ok := ev.(*page.EventFileChooserOpened); ok {
			select {
			case opened <- e:
			default:
			}
		}
	}); err != nil {
		t.Fatalf("listen for the file chooser: %v", err)
	}
	cctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	if _, err := chromedp.Call(cctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: true}); err != nil {
		t.Fatalf("intercept the file chooser: %v", err)
	}
	defer chromedp.Call(cctx, page.SetInterceptFileChooserDialog, page.SetInterceptFileChooserDialogParams{Enabled: false})
	Do(t, ctx, "click "+sel, chromedp.Click(chromedp.CSS(sel)))
	select {
	case e := <-opened:
		if e.BackendNodeID == 0 {
			t.Fatalf("the file chooser opened by %s belongs to no <input type=file>", sel)
		}
		if _, err := chromedp.Call(cctx, dom.SetFileInputFiles, dom.SetFileInputFilesParams{Files: files, BackendNodeID: e.BackendNodeID}); err != nil {
			t.Fatalf("choose %v: %v", files, err)
		}
	case <-cctx.Done():
		t.Fatalf("clicking %s opened no file chooser", sel)
	}
}

// AllowDownloads lets the shared browser save downloads, without asking,
// into a fresh directory it returns, until the test ends (then downloads
// are refused again). A test reads the files saved there with Downloaded.
func AllowDownloads(t testing.TB, tab context.Context) string {
	t.Helper()
	dir := t.TempDir()
	set := func(ctx context.Context, p cdpbrowser.SetDownloadBehaviorParams) error {
		ctx, cancel := context.WithTimeout(ctx, Timeout)
		defer cancel()
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetDownloadBehavior, p)
		return err
	}
	if err := set(tab, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir}); err != nil {
		t.Fatalf("allow downloads: %v", err)
	}
	t.Cleanup(func() {
		if err := set(tab, cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorDeny}); err != nil && tab.Err() == nil {
			t.Errorf("refuse downloads again: %v", err)
		}
	})
	return dir
}

// Downloaded waits for the browser to finish saving name in dir (a
// directory from AllowDownloads) and returns its bytes.
func Downloaded(t testing.TB, dir, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	// Chromium may reserve the name with an empty file before its
	// .crdownload (named for the file or "Unconfirmed …") exists, and
	// renames the .crdownload over it when done: the content counts once
	// no .crdownload is in the folder and two reads a poll apart agree.
	var last []byte
	seen := false
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		partial, _ := filepath.Glob(filepath.Join(dir, "*.crdownload"))
		switch {
		case err != nil || len(partial) > 0:
			seen = false
		case seen && string(b) == string(last):
			return b
		default:
			last, seen = b, true
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			var have []string
			for _, e := range entries {
				have = append(have, e.Name())
			}
			t.Fatalf("no download %q within %s; the folder has %q", name, WaitTimeout, have)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// NoDownloads reports the files saved in dir (a directory from
// AllowDownloads), for a test that expects none.
func NoDownloads(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, e := range entries {
		have = append(have, e.Name())
	}
	return have
}
