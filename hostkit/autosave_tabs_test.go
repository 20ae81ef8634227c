package hostkit_test

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// tabsApp only loads the runtime; the test drives snug.db itself.
const tabsApp = `<!doctype html><html><head><meta charset="utf-8"><title>Tabs</title></head>
<body><p id="status">loading</p><script>
snug.ready.then(() => snug.db.exec("create table if not exists t(tab text, i int)"))
  .then(() => document.getElementById("status").textContent = "ready");
</script></body></html>`

// tabBurstJS starts, in the background, %d un-awaited saves of the list
// [1..i] under key %q, with an exec inserting a row every third save,
// a few ms apart; window.acked is the longest list acknowledged, rows the
// rows acknowledged, done set once every promise settled.
const tabBurstJS = `(() => {
	const key = %[2]q, n = %[1]d;
	window.acked = 0; window.rows = 0; window.errors = []; window.done = false;
	const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
	(async () => {
		const ps = [], list = [];
		for (let i = 1; i <= n; i++) {
			list.push(i);
			ps.push(snug.db.set(key, list).then(() => { acked = Math.max(acked, i); }, (e) => errors.push(e.code)));
			if (i %% 3 == 0) ps.push(snug.db.exec("insert into t values (?, ?)", [key, i]).then(() => rows++, (e) => errors.push(e.code)));
			if (i %% 4 == 0) await sleep(i %% 3);
		}
		await Promise.allSettled(ps);
		window.done = true;
	})();
	return true;
})()`

type tabState struct {
	Acked, Rows int
	Errors      []string
}

// storedJS reads what key holds and how many rows carry it.
const storedJS = `Promise.all([snug.db.get(%[1]q), snug.db.query("select count(*) as n from t where tab = ?", [%[1]q])])
	.then(([v, r]) => ({list: v, rows: r[0].n}))`

type stored struct {
	List []int
	Rows int
}

// TestTwoTabsAndAReloadMidBurst is issue 26.1 as an outside auditor tries
// it next: two runner tabs of one app (one database) each send a burst of
// un-awaited saves and inserts at once, and the second tab is reloaded in
// the middle of its burst. Tab one reads its last acknowledged list and
// every row it was told was inserted; after the reload, tab two reads a
// list and rows no older than what it had been told before the reload,
// and a list it sent (1..n in order: no earlier save landed over a later).
func TestTwoTabsAndAReloadMidBurst(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("tabs", []byte(tabsApp))), hostkit.WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	one := browsertest.OpenRunner(t, h.URL(), "tabs")
	two := browsertest.OpenRunner(t, h.URL(), "tabs")
	f1, f2 := one.Frame(0), two.Frame(0)
	browsertest.WaitFor(t, f1, "tab one ready", `document.getElementById("status").textContent === "ready"`)
	browsertest.WaitFor(t, f2, "tab two ready", `document.getElementById("status").textContent === "ready"`)

	browsertest.Eval[bool](t, f1, fmt.Sprintf(tabBurstJS, 600, "a"))
	browsertest.Eval[bool](t, f2, fmt.Sprintf(tabBurstJS, 600, "b"))
	browsertest.WaitFor(t, f2, "tab two's first 150 saves", `acked >= 150`)
	before := browsertest.Eval[tabState](t, f2, `({acked, rows, errors})`)
	browsertest.Do(t, two.Tab, "reload tab two mid-burst", chromedp.Reload())
	two.WaitFor("tab two's app again", `document.querySelectorAll('article.instance[data-instance-id]').length === 1`)
	f2 = two.Frame(0)
	browsertest.WaitFor(t, f2, "tab two ready again", `document.getElementById("status").textContent === "ready"`)
	got2 := browsertest.Eval[stored](t, f2, fmt.Sprintf(storedJS, "b"))
	t.Logf("tab two: %d saves and %d rows acknowledged before the reload; %d and %d stored after it", before.Acked, before.Rows, len(got2.List), got2.Rows)
	if len(got2.List) < before.Acked || got2.Rows < before.Rows {
		t.Errorf("after the reload tab two holds a list of %d and %d rows, older than the %d and %d acknowledged", len(got2.List), got2.Rows, before.Acked, before.Rows)
	}
	for i, v := range got2.List {
		if v != i+1 {
			t.Fatalf("tab two's list is not one it sent: %v…", got2.List[:min(len(got2.List), i+3)])
		}
	}

	browsertest.WaitFor(t, f1, "tab one's burst to settle", `done`)
	end := browsertest.Eval[tabState](t, f1, `({acked, rows, errors})`)
	if len(end.Errors) > 0 {
		t.Errorf("%d of tab one's requests failed, first %v", len(end.Errors), end.Errors[:min(3, len(end.Errors))])
	}
	got1 := browsertest.Eval[stored](t, f1, fmt.Sprintf(storedJS, "a"))
	if len(got1.List) != end.Acked || got1.Rows != end.Rows {
		t.Errorf("tab one holds a list of %d and %d rows, want the last acknowledged %d and %d", len(got1.List), got1.Rows, end.Acked, end.Rows)
	}
}
