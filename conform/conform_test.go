package conform

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/debugger"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"golang.org/x/text/unicode/norm"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

var kitOnce struct {
	sync.Once
	doc []byte
	err error
}

// kitDoc is the kit built once for the test binary.
func kitDoc(t *testing.T) []byte {
	t.Helper()
	kitOnce.Do(func() { kitOnce.doc, kitOnce.err = Kit(context.Background(), nil) })
	if kitOnce.err != nil {
		t.Fatal(kitOnce.err)
	}
	return kitOnce.doc
}

// kitHost starts a host wired as snuggen serve's (the offline agent, SQLite,
// the net gate, open-url) with the kit installed.
func kitHost(t *testing.T, opts ...hostkit.Option) *hostkit.Host {
	t.Helper()
	doc := kitDoc(t)
	h, err := hostkit.New(append([]hostkit.Option{
		hostkit.WithApps(hostkit.BuiltApp(AppKey, doc, hostkit.MetaFromHTML(doc, AppKey))),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithNet(netgate.Config{}),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	return h
}

// runKit opens the kit in h's runner and drives it to its report.
func runKit(t *testing.T, h *hostkit.Host, only ...string) *Report {
	t.Helper()
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the runner", chromedp.Navigate(h.AppURL(AppKey)))
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	r, err := Drive(ctx, DriveOptions{Only: only, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, r); err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", b.String())
	return r
}

// portFunc is a broker.Port made of a function.
type portFunc func(f frame.Frame, raw []byte)

func (p portFunc) Send(f frame.Frame, raw []byte) { p(f, raw) }

// send marshals f and sends it through p, as the broker would.
func send(t *testing.T, p broker.Port, f frame.Frame) {
	raw, err := frame.Marshal(f)
	if err != nil {
		t.Errorf("plant: marshal %T: %v", f, err)
		return
	}
	p.Send(f, raw)
}

// A plant is a deliberate bug in a copy of snuggen's host: a wrapper around
// the real broker's port (broker.Options.Tap) that alters what the broker
// sends, and the kit's cases that must catch it.
type plant struct {
	name    string
	catches []string // the cases that must fail
	only    []string // the cases to run
	tap     func(t *testing.T) func(app string, p broker.Port) broker.Port
}

var plants = []plant{
	{
		name: "a second terminal frame after cancel", catches: []string{"r3.cancel"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				return portFunc(func(f frame.Frame, raw []byte) {
					p.Send(f, raw)
					if e := frame.ErrorOf(f); e != nil && e.Code == frame.CodeCancelled {
						// The late answer of the cancelled handler slips through.
						if db, ok := f.(*frame.DBResponse); ok {
							send(t, p, &frame.DBResponse{RequestID: db.RequestID, OK: true, Result: &frame.DBResult{Columns: []string{"n"}, Rows: [][]any{{1}}}})
						}
					}
				})
			}
		},
	},
	{
		name: "an unechoed requestId: R1 answers carry the id normalized (NFC)", catches: []string{"r1.unsupported-version"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				return portFunc(func(f frame.Frame, raw []byte) {
					if e := frame.ErrorOf(f); e != nil && (e.Code == frame.CodeUnsupportedVersion || e.Code == frame.CodeMalformed) {
						frame.SetRequestID(f, norm.NFC.String(frame.RequestIDOf(f)))
						send(t, p, f)
						return
					}
					p.Send(f, raw)
				})
			}
		},
	},
	{
		name: "a dropped oversize frame: no answer to a frame past its size class", catches: []string{"r6.default-class"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				return portFunc(func(f frame.Frame, raw []byte) {
					if e := frame.ErrorOf(f); e != nil && strings.Contains(e.Message, frame.RuleFrameSize) {
						return
					}
					p.Send(f, raw)
				})
			}
		},
	},
	{
		name: "a new instanceId for every announce", catches: []string{"handshake.idempotent"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				var mu sync.Mutex
				n := 0
				return portFunc(func(f frame.Frame, raw []byte) {
					if hr, ok := f.(*frame.HostReady); ok {
						mu.Lock()
						n++
						// Every host-ready after the first names a new
						// instance. Counting from the first, not from the
						// handshake's two: the load-time host-ready and the
						// ack of the runtime's announce come in either order.
						if n > 1 {
							c := *hr
							c.InstanceID = hr.InstanceID + "-again-" + strconv.Itoa(n)
							f = &c
						}
						mu.Unlock()
						send(t, p, f)
						return
					}
					p.Send(f, raw)
				})
			}
		},
	},
	{
		name: "content in a host-event: a hint carrying the text it points to", catches: []string{"r7.host-events"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				return portFunc(func(f frame.Frame, raw []byte) {
					p.Send(f, raw)
					if _, ok := f.(*frame.HostReady); ok {
						data, _ := json.Marshal(map[string]string{"topic": "notes", "ref": "n1", "text": "Dear diary: the content itself"})
						send(t, p, &frame.HostEvent{Event: frame.EventHint, Data: data})
					}
				})
			}
		},
	},
	{
		name: "CANCELLED sent as retryable", catches: []string{"r5.error-objects"}, only: []string{"r3.cancel", "r5.error-objects"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				return portFunc(func(f frame.Frame, raw []byte) {
					if e := frame.ErrorOf(f); e != nil && e.Code == frame.CodeCancelled {
						e.Retryable = true
						send(t, p, f)
						return
					}
					p.Send(f, raw)
				})
			}
		},
	},
	{
		// The stream is held back and flushed after the terminal frame. (A
		// late frame sent while the request's earlier streaming frame still
		// waits in the relay's queue would take that frame's place, before
		// the terminal: the relay coalesces streaming text. Holding every
		// streaming frame back keeps the plant's late frame late.)
		name: "streaming text after the terminal frame", catches: []string{"r3.streaming"},
		tap: func(t *testing.T) func(string, broker.Port) broker.Port {
			return func(_ string, p broker.Port) broker.Port {
				var mu sync.Mutex
				held := map[string]*frame.AppResponse{}
				return portFunc(func(f frame.Frame, raw []byte) {
					r, ok := f.(*frame.AppResponse)
					if !ok || !r.OK || r.Streaming == nil {
						p.Send(f, raw)
						return
					}
					mu.Lock()
					defer mu.Unlock()
					if *r.Streaming {
						held[r.RequestID] = r
						return
					}
					p.Send(f, raw)
					if late := held[r.RequestID]; late != nil {
						delete(held, r.RequestID)
						send(t, p, late)
					}
				})
			}
		},
	},
}

func (p plant) cases() []string {
	if p.only != nil {
		return p.only
	}
	return p.catches
}

// The kit catches each planted bug: the cases named fail against the
// planted host and pass against the same host without the plant.
func TestKitCatchesPlantedBugs(t *testing.T) {
	var all []string
	for _, p := range plants {
		all = append(all, p.cases()...)
	}
	t.Run("control: the host as it is", func(t *testing.T) {
		r := runKit(t, kitHost(t), all...)
		if len(r.Only) == 0 {
			t.Fatal("the kit ran every case: the driver attached too late to choose")
		}
		for _, id := range all {
			if c := r.Case(id); c == nil || c.Status != Pass {
				t.Errorf("%s: %+v, want pass on the real host", id, c)
			}
		}
	})
	for _, p := range plants {
		t.Run(p.name, func(t *testing.T) {
			h := kitHost(t, hostkit.WithBrokerOptions(func(bo *broker.Options) { bo.Tap = p.tap(t) }))
			r := runKit(t, h, p.cases()...)
			for _, id := range p.catches {
				c := r.Case(id)
				if c == nil {
					t.Fatalf("%s did not run (ran %v)", id, r.Only)
				}
				if c.Status != Fail {
					t.Errorf("%s: %s (%s), want fail: the kit missed the planted bug", id, c.Status, c.Reason)
				} else {
					t.Logf("caught by %s: %s", id, c.Reason)
				}
			}
		})
	}
}

// A driver that reaches the kit's frame late still chooses the cases: in a
// browser under automation (navigator.webdriver, as the driver's Chromium
// and this test's are) the kit waits for its driver instead of starting
// after a second, so a loaded machine's slow attach (here the driver comes
// a second and a half after the kit began to wait) is not a run of every
// case. Before, the kit started every case after one second and the
// control of TestKitCatchesPlantedBugs failed now and then under load
// ("the kit ran every case").
func TestKitWaitsForALateDriver(t *testing.T) {
	runner := browsertest.OpenRunner(t, kitHost(t).URL(), AppKey)
	tab := runner.Tab
	kit := runner.Frame(0)
	browsertest.WaitFor(t, kit, "the kit waiting for a driver", `document.getElementById("status").textContent === "starting…"`)
	if !browsertest.Eval[bool](t, kit, `navigator.webdriver === true`) {
		t.Fatal("navigator.webdriver is not true in the kit's frame of a browser under automation")
	}
	// The driver is slow to come: the kit's own clock, past its old second.
	browsertest.Eval[bool](t, kit, `new Promise(ok => setTimeout(() => ok(true), 1500))`)
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	r, err := Drive(ctx, DriveOptions{Only: []string{"handshake.theme"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Only) != 1 || len(r.Cases) != 1 || r.Cases[0].ID != "handshake.theme" || r.Cases[0].Status != Pass {
		t.Errorf("the late driver chose %v; the kit ran %d cases", r.Only, len(r.Cases))
	}
}

// The driver answers a dialog of a host page that another tab hid: it
// brings the page to the front, where the dialog arms. An allowed open-url
// opens such a tab, and its target may be listed only after the dialog
// closed, so the driver cannot count on having seen it open (before, the
// next dialog, a save-file's, stayed unarmed and the run failed under load).
func TestDriverAnswersTheDialogOfAHiddenPage(t *testing.T) {
	runner := browsertest.OpenRunner(t, kitHost(t).URL(), AppKey)
	tab := runner.Tab
	// A tab of the runner's window takes the front.
	other, err := chromedp.CallBrowser(tab, target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	otherID := other.TargetID
	t.Cleanup(func() {
		_, _ = chromedp.CallBrowser(tab, target.CloseTarget, target.CloseTargetParams{TargetID: otherID})
	})
	runner.WaitFor("the runner hidden", `document.visibilityState === 'hidden'`)
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	r, err := Drive(ctx, DriveOptions{Only: []string{"save-file.dialog-deny"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Case("save-file.dialog-deny"); c == nil || c.Status != Pass {
		t.Errorf("save-file.dialog-deny: %+v, want pass", c)
	}
}

// The driver answers the dialog the kit asked for even when it read the
// kit's state just before the kit asked: the kit sets what it wants before
// the request that opens the dialog, so the driver reads the state again
// when it finds a dialog it was not told of. Here the driver's step is held
// between its two readings (the kit's state, then the page's dialog) until
// the dialog is open, as a loaded machine's slow readings let it be.
// Before, the driver denied the dialog as one the kit never asked for, and
// the case failed ("the host answered declined without a dialog the driver
// could see": TestConformPassesAgainstANewHost under load).
func TestDriverRereadsTheKitWhenADialogOpens(t *testing.T) {
	h := kitHost(t)
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the runner", chromedp.Navigate(h.AppURL(AppKey)))
	held := false
	// r6.artifact (a 5 MiB export and import) runs for many of the
	// driver's 100 ms steps, so a step reads the kit running and asking
	// for nothing on a fast machine too (a quick first case ended between
	// two steps there, and nothing was held).
	o := DriveOptions{Only: []string{"r6.artifact", "open-url.dialog-deny"}, Logf: t.Logf}
	o.afterState = func(st kitState) {
		if held || st.Wants != nil || st.Status != "running" {
			return
		}
		held = true
		browsertest.WaitFor(t, tab, "the host's dialog open", `document.getElementById('confirm').open`)
	}
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	r, err := Drive(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !held {
		t.Fatal("the driver never read the kit's state between its cases")
	}
	if c := r.Case("open-url.dialog-deny"); c == nil || c.Status != Pass {
		t.Errorf("open-url.dialog-deny: %+v, want pass", c)
	}
	if len(r.Unexpected) != 0 {
		t.Errorf("the driver denied the kit's own dialog as unexpected: %+v", r.Unexpected)
	}
}

// A capability the host does not advertise is skipped, not failed, and the
// skip names it: a host without the net gate, open-url or save-file (their
// broker handlers left out, so host-ready advertises false).
func TestKitSkipsWhatTheHostDoesNotAdvertise(t *testing.T) {
	want := map[string]string{ // case -> the capability it needs
		"net.loopback":          "net",
		"r2.strict-net":         "net",
		"open-url.refused":      "openUrl",
		"open-url.dialog-open":  "openUrl",
		"save-file.refused":     "saveFile",
		"save-file.dialog-save": "saveFile",
		"r2.strict-save-file":   "saveFile",
	}
	var only []string
	for id := range want {
		only = append(only, id)
	}
	h := kitHost(t, hostkit.WithBrokerOptions(func(bo *broker.Options) {
		bo.Net, bo.OpenURL, bo.SaveFile = nil, nil, nil
	}))
	r := runKit(t, h, only...)
	if !r.Passed() {
		t.Error("a report with skips only does not pass")
	}
	for id, need := range want {
		c := r.Case(id)
		switch {
		case c == nil:
			t.Errorf("%s did not run (ran %v)", id, r.Only)
		case c.Status != Skip || !strings.Contains(c.Reason, "capabilities."+need):
			t.Errorf("%s: %s (%s), want a skip naming capabilities.%s", id, c.Status, c.Reason, need)
		}
	}
}

// slowCheck is how long the slow page of TestKitGivesASlowCheckItsWholeWait
// takes over the frame one byte past the db class: past the fence's wait
// and the second after it (the kit's FENCE_MS and the 1 s in rejected,
// cases.js), inside the answer's own wait (ANSWER_MS, 15 s).
const slowCheck = 7 * time.Second

// A slow check is not a dropped frame. The frame one byte past the db class
// (the largest) is answered by the runner page itself, which measures it
// before relaying; here that page is slow over it (paused in the debugger,
// a loaded machine's stall without its CPU), so the fence the kit posts
// behind the frame is answered late too, after the frame's answer: in
// order. The kit gives the frame's answer its whole wait when the fence's
// ran out, and r6.db-class passes. Before, it judged the frame dropped a
// second after the fence's wait ("no answer: the frame was dropped", seen
// under load with this 8 MiB frame).
func TestKitGivesASlowCheckItsWholeWait(t *testing.T) {
	h := kitHost(t)
	tab := browsertest.NewTab(t)
	browsertest.Do(t, tab, "open the runner", chromedp.Navigate(h.AppURL(AppKey)))
	var paused atomic.Int32
	resumed := make(chan struct{})
	pausedAt := make(chan struct{}, 1)
	if err := chromedp.Listen(tab, func(ev any) {
		if _, ok := ev.(*debugger.EventPaused); ok && paused.Add(1) == 1 {
			pausedAt <- struct{}{}
		}
	}); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(resumed)
		select {
		case <-pausedAt:
		case <-tab.Done():
			return
		}
		// The slow page, not a timed assertion: it stays paused for
		// slowCheck, and everything it handles next waits.
		time.Sleep(slowCheck)
		if _, err := chromedp.Call(tab, debugger.Resume, debugger.ResumeParams{}); err != nil {
			t.Errorf("resume the page: %v", err)
		}
	}()
	if _, err := chromedp.Call(tab, debugger.Enable, debugger.EnableParams{}); err != nil {
		t.Fatalf("enable the debugger: %v", err)
	}
	// The page's first listener for the app's messages (a capturing one)
	// stops at the frame past the db class, before the page's own handler.
	browsertest.Eval[bool](t, tab, fmt.Sprintf(`(addEventListener("message", (ev) => {
		const d = ev.data;
		if (d && d.type === %q && typeof d.requestId === "string" && d.requestId.startsWith("conform-r6-past-")) { debugger; }
	}, true), true)`, frame.TypeDBRequest))
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	defer cancel()
	start := time.Now()
	r, err := Drive(ctx, DriveOptions{Only: []string{"r6.db-class"}, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if paused.Load() != 1 {
		t.Fatalf("the page paused %d times at the frame past the db class, want 1: the test proves nothing", paused.Load())
	}
	<-resumed
	if c := r.Case("r6.db-class"); c == nil || c.Status != Pass {
		t.Errorf("r6.db-class with a page %s slow over the frame past the class: %+v, want pass", slowCheck, c)
	}
	t.Logf("the run took %s", time.Since(start).Round(time.Millisecond))
}

// When the host's host-ready is invalid the runtime drops it and never
// becomes ready; the kit says why in every case's reason, the reference
// checker's violation of the host-ready it got, not only that none came
// (issue 26 item 13: before, each case read "no host-ready within 15 s").
func TestKitSaysWhyHostReadyWasRefused(t *testing.T) {
	bad := "x" // a locale of one letter: below its minLength of 2
	h := kitHost(t, hostkit.WithBrokerOptions(func(bo *broker.Options) {
		bo.Tap = func(_ string, p broker.Port) broker.Port {
			return portFunc(func(f frame.Frame, raw []byte) {
				if hr, ok := f.(*frame.HostReady); ok {
					c := *hr
					c.Locale = &bad
					send(t, p, &c)
					return
				}
				p.Send(f, raw)
			})
		}
	}))
	r := runKit(t, h, "db.kv")
	c := r.Case("db.kv")
	if c == nil {
		t.Fatalf("db.kv did not run (ran %v)", r.Only)
	}
	if c.Status != Fail {
		t.Fatalf("db.kv: %s (%s), want fail", c.Status, c.Reason)
	}
	for _, want := range []string{"host-ready", "refused as invalid", "/locale", "minLength"} {
		if !strings.Contains(c.Reason, want) {
			t.Errorf("reason %q does not say %q", c.Reason, want)
		}
	}
}
