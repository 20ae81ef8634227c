package hostkit_test

// The browser harness: one headless Chromium per test binary (starting one
// costs about a second), a fresh tab per test, helpers that reach into an
// app's sandboxed frame (an out-of-process iframe: its own DevTools target)
// and read the runner's inspector.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/testenv"
)

var browser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if browser.cancel != nil {
		browser.cancel()
	}
	if browser.dir != "" {
		os.RemoveAll(browser.dir)
	}
	os.Exit(code)
}

// chromiumOptions turns testenv.ChromiumFlags into allocator options.
func chromiumOptions(exe, dir string) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe),
		chromedp.UserDataDir(dir),
		chromedp.WindowSize(1360, 860),
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

// newTab opens a fresh tab in the shared browser; it closes when the test ends.
func newTab(t *testing.T) context.Context {
	t.Helper()
	exe := testenv.Chromium(t)
	browser.once.Do(func() {
		dir, err := os.MkdirTemp("", "snug-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		browser.dir = dir
		actx, acancel := chromedp.NewExecAllocator(context.Background(), chromiumOptions(exe, dir)...)
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

// run runs actions with a deadline, failing the test on error.
func run(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) and decodes
// its JSON value into T.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	return evalWithin[T](t, ctx, js, 30*time.Second)
}

// evalWithin is eval with its own deadline.
func evalWithin[T any](t *testing.T, ctx context.Context, js string, d time.Duration) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("evaluate %s: %v", short(js), err)
	}
	return v
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

// waitFor polls a JavaScript condition in ctx until it is true.
func waitFor(t *testing.T, ctx context.Context, what, js string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, err := chromedp.Run(cctx, chromedp.Evaluate[bool](js, chromedp.EvalAwaitPromise))
		cancel()
		if err == nil && ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s (%s): last error %v", what, short(js), err)
		}
		time.Sleep(30 * time.Millisecond)
	}
}

// openRunner opens the runner page of h with apps mounted, and waits until
// each instance has had its handshake.
func openRunner(t *testing.T, h *hostkit.Host, apps ...string) context.Context {
	t.Helper()
	tab := newTab(t)
	u := h.URL()
	for i, a := range apps {
		if i == 0 {
			u += "?"
		} else {
			u += "&"
		}
		u += "app=" + a
	}
	run(t, tab, "open the runner", chromedp.Navigate(u))
	waitFor(t, tab, fmt.Sprintf("%d instances ready", len(apps)),
		fmt.Sprintf(`document.querySelectorAll('article.instance[data-instance-id]').length === %d`, len(apps)))
	return tab
}

// slots lists the runner's instance slots in page order.
func slots(t *testing.T, tab context.Context) []string {
	t.Helper()
	return eval[[]string](t, tab, `[...document.querySelectorAll('article.instance')].map(a => a.dataset.slot)`)
}

// appFrame returns a context that runs in the sandboxed frame of slot: the
// frame is out of process, so it is a target of its own whose id is the
// frame's id.
func appFrame(t *testing.T, tab context.Context, slot string) context.Context {
	t.Helper()
	sel := fmt.Sprintf(`article[data-slot=%q] iframe`, slot)
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
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
		case <-time.After(30 * time.Millisecond):
		}
	}
}

// counts reads the inspector's counters.
type inspectorCounts struct {
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

func counts(t *testing.T, tab context.Context) inspectorCounts {
	t.Helper()
	// The inspector draws every 200 ms; wait for the next drawing.
	raw := eval[string](t, tab, `new Promise(r => setTimeout(() => r(document.getElementById('counts').dataset.counts || '{}'), 450))`)
	var c inspectorCounts
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("inspector counts %q: %v", raw, err)
	}
	return c
}

// canary is a loopback TCP server that counts every connection it accepts
// and answers HTTP on it. Every *-canary.test name resolves to it in the
// test browser (testenv.ChromiumFlags), so any request, prefetch or
// preconnect that leaves the sandbox shows up here.
type canary struct {
	ln       net.Listener
	conns    atomic.Int64 // TCP connections accepted
	requests atomic.Int64 // connections that sent at least one byte
	mu       sync.Mutex
	paths    []string
	done     chan struct{}
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go c.answer(conn)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-c.done })
	return c
}

func (c *canary) answer(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 4096)
	n, _ := conn.Read(buf)
	if n == 0 {
		return // a bare connect (a preconnect): nothing was sent
	}
	c.requests.Add(1)
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	c.mu.Lock()
	c.paths = append(c.paths, line)
	c.mu.Unlock()
	_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: 6\r\nConnection: close\r\n\r\ncanary"))
}

func (c *canary) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// hits returns the connections accepted and the request lines received.
func (c *canary) hits() (int64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns.Load(), append([]string(nil), c.paths...)
}
