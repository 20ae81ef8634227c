package hostkit_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/performance"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// soakJS runs n mixed requests from one app frame, a few at a time, and
// counts the terminal frames the host sends for each requestId, watching the
// raw frames (not just what the runtime resolves).
const soakJS = `(async (n, netURL, settleMs) => {
	const terminals = {};
	const waiting = {};
	const sent = {};
	let cancels = 0;
	window.addEventListener("message", (e) => {
		const f = e.data;
		if (e.source !== parent || !f || typeof f.requestId !== "string") return;
		const terminal = f.type !== "snug:app-response" || f.ok === false || f.streaming === false;
		if (!terminal) return;
		terminals[f.requestId] = (terminals[f.requestId] || 0) + 1;
		waiting[f.requestId]?.();
	});
	// Off-screen frames get their timers throttled: wait on the message itself.
	const terminalOf = (rid) => new Promise((r) => (waiting[rid] = r));
	const inst = (await snug.ready).instanceId;
	let malformed = 0;
	const one = async (i) => {
		const ignore = () => {};
		switch (i % 8) {
		case 0: sent["snug:app-message"] = (sent["snug:app-message"] || 0) + 1;
			return snug.ask("soak", {i}).catch(ignore);
		case 1: {
			// An ask cancelled at once, as raw frames: the host answers it
			// exactly once, CANCELLED or final, whichever wins.
			sent["snug:app-message"] = (sent["snug:app-message"] || 0) + 1;
			const requestId = "c" + i;
			const done = terminalOf(requestId);
			parent.postMessage({v: 1, type: "snug:app-message", requestId, instanceId: inst, appId: "test.probe", action: "soak-cancel"}, "*");
			parent.postMessage({v: 1, type: "snug:app-cancel", requestId, instanceId: inst}, "*");
			cancels++;
			return done;
		}
		case 2: sent["snug:db-request"] = (sent["snug:db-request"] || 0) + 1;
			return snug.db.exec("insert into soak (i) values (?)", [i]).catch(ignore);
		case 3: sent["snug:db-request"] = (sent["snug:db-request"] || 0) + 1;
			return snug.db.exec("select count(*) from soak").catch(ignore);
		case 4: sent["snug:db-request"] = (sent["snug:db-request"] || 0) + 1;
			return snug.db.set("k" + (i % 5), {i}).catch(ignore);
		case 5: sent["snug:db-request"] = (sent["snug:db-request"] || 0) + 1;
			return snug.db.get("k" + (i % 5)).catch(ignore);
		case 6: sent["snug:net-request"] = (sent["snug:net-request"] || 0) + 1;
			return snug.net.fetch(netURL + "?i=" + i).catch(ignore);
		case 7: {
			// A malformed request with a requestId: the host answers MALFORMED.
			sent["snug:db-request"] = (sent["snug:db-request"] || 0) + 1;
			const requestId = "m" + (++malformed);
			const done = terminalOf(requestId);
			parent.postMessage({v: 1, type: "snug:db-request", requestId, instanceId: inst, op: "bogus"}, "*");
			return done;
		}
		}
	};
	await snug.db.exec("create table if not exists soak (i integer)");
	sent["snug:db-request"] = 1;
	let next = 0;
	const worker = async () => { while (next < n) await one(next++); };
	const t0 = performance.now();
	await Promise.all(Array.from({length: 16}, worker));
	const ms = performance.now() - t0;
	// Late frames (a second terminal) would show here: an absence window
	// (settle: a handler's late answer comes from a worker, on no path a
	// later request of ours shares).
	await new Promise((r) => setTimeout(r, settleMs));
	const counts = Object.values(terminals);
	return {ms, sent, cancels, ids: Object.keys(terminals).length,
		exactlyOne: counts.filter((c) => c === 1).length, more: counts.filter((c) => c > 1).length,
		total: counts.reduce((a, b) => a + b, 0)};
})`

type soakResult struct {
	Ms         float64        `json:"ms"`
	Sent       map[string]int `json:"sent"`
	Cancels    int            `json:"cancels"`
	IDs        int            `json:"ids"`
	ExactlyOne int            `json:"exactlyOne"`
	More       int            `json:"more"`
	Total      int            `json:"total"`
}

// Ten app instances × 200 mixed requests through the real page: every
// request gets exactly one terminal frame, and the inspector's counts agree
// with what the apps sent and received.
func TestSoakTenInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak runs without -short")
	}
	const instances, perInstance = 10, 200
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "ok")
	}))
	defer upstream.Close()
	ap := netip.MustParseAddrPort(upstream.Listener.Addr().String())
	h := startHost(t,
		hostkit.WithAgent(offline.New(offline.Options{ChunkSize: 64})),
		hostkit.WithDataDir(t.TempDir()),
		hostkit.WithNet(netgate.Config{DevHTTPHosts: []string{"127.0.0.1"}, Rate: netgate.Rate{PerMinute: 100000, InFlight: 64}},
			netgate.WithAllowedAddrs(ap)),
	)
	if err := h.Net.Grant("probe", upstream.URL); err != nil {
		t.Fatal(err)
	}
	apps := make([]string, instances)
	for i := range apps {
		apps[i] = "probe"
	}
	runner := browsertest.OpenRunner(t, h.URL(), apps...)
	start := runner.CountsWhen("every instance's announce in", func(c browsertest.Counts) bool {
		return c.InByType["snug:app-announce"] >= instances
	})
	ss := runner.Slots()
	frames := make([]context.Context, len(ss))
	for i, s := range ss {
		frames[i] = runner.SlotFrame(s)
	}
	// The DevTools DOM agent mirrors every node the inspector adds; a user's
	// browser has none, so turn it off for the measurement.
	if _, err := chromedp.Call(runner.Tab, dom.Disable, cdp.Empty{}); err != nil {
		t.Fatal(err)
	}
	taskBefore := runnerTaskSeconds(t, runner.Tab)
	t0 := time.Now()
	for _, f := range frames {
		browsertest.Eval[bool](t, f, fmt.Sprintf(`(window.soak = %s(%d, %q, %d), true)`, soakJS, perInstance, upstream.URL+"/soak", settle.Milliseconds()))
	}
	var total, cancels int
	sent := map[string]int{}
	for i, f := range frames {
		r := browsertest.EvalWithin[soakResult](t, f, `window.soak`, 3*time.Minute)
		if r.More != 0 || r.ExactlyOne != r.IDs || r.IDs != perInstance+1 {
			t.Errorf("instance %d: %d requestIds answered, %d exactly once, %d more than once; want %d exactly once",
				i, r.IDs, r.ExactlyOne, r.More, perInstance+1)
		}
		total += r.Total
		cancels += r.Cancels
		for k, v := range r.Sent {
			sent[k] += v
		}
	}
	// The frames listened for late terminals (settle) side by side after
	// their requests: that window is no part of the soak's time.
	elapsed := time.Since(t0) - settle
	runnerBusy := runnerTaskSeconds(t, runner.Tab) - taskBefore
	// Each count waits for what the apps saw; an extra one would show in
	// the equalities below.
	c := runner.CountsWhen("every frame the apps sent and received counted", func(c browsertest.Counts) bool {
		if c.Terminal-start.Terminal < total || c.InByType["snug:app-cancel"]-start.InByType["snug:app-cancel"] < cancels {
			return false
		}
		for typ, n := range sent {
			if c.InByType[typ]-start.InByType[typ] < n {
				return false
			}
		}
		return true
	})
	if got := c.Terminal - start.Terminal; got != total {
		t.Errorf("inspector counted %d terminal frames delivered, the apps received %d", got, total)
	}
	for typ, n := range sent {
		if got := c.InByType[typ] - start.InByType[typ]; got != n {
			t.Errorf("inspector counted %d %s frames in, the apps sent %d", got, typ, n)
		}
	}
	if got := c.InByType["snug:app-cancel"] - start.InByType["snug:app-cancel"]; got != cancels {
		t.Errorf("inspector counted %d app-cancel frames, the apps sent %d", got, cancels)
	}
	pairs := map[string]string{"snug:db-request": "snug:db-response", "snug:net-request": "snug:net-response"}
	for in, out := range pairs {
		if c.OutByType[out]-start.OutByType[out] != sent[in] {
			t.Errorf("%d %s out for %d %s in", c.OutByType[out]-start.OutByType[out], out, sent[in], in)
		}
	}
	t.Logf("soak: %d instances × %d requests, %d terminal frames, %d cancels, %s (%.0f requests/s); the runner page's main thread was busy %.1fs",
		instances, perInstance, total, cancels, elapsed.Round(time.Millisecond), float64(instances*perInstance)/elapsed.Seconds(), runnerBusy)
}

// runnerTaskSeconds reads how long the runner page's main thread has worked.
func runnerTaskSeconds(t *testing.T, tab context.Context) float64 {
	t.Helper()
	if _, err := chromedp.Call(tab, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	m, err := chromedp.Call(tab, performance.GetMetrics, cdp.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range m.Metrics {
		if x.Name == "TaskDuration" {
			return x.Value
		}
	}
	return 0
}
