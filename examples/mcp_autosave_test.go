package examples

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// listApp saves its whole list on every edit without awaiting (how models
// write autosave), and loads it once it starts.
const listApp = `<!doctype html><html><head><meta charset="utf-8"><title>List</title>
<meta name="snug:display-name" content="List"></head>
<body><p id="status">loading</p><script>
window.list = [];
// An edit saves the whole list; a photo attached now and then makes a save
// large (the next, small one can then reach the server first).
window.edit = (s, photo = "") => (list.push(s), snug.db.set("list", { items: list, photo }));
snug.ready.then(async () => {
  list = (await snug.db.get("list"))?.items ?? [];
  document.getElementById("status").textContent = "ready " + list.length;
});
</script></body></html>`

// mcpBurstsJS makes bursts of un-awaited saves a few ms apart, then, once
// every promise settled, reads the list back: it must be the last
// acknowledged write.
const mcpBurstsJS = `(async () => {
	const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
	const wrong = [], errors = [], t0 = performance.now();
	let n = 0;
	for (let b = 0; b < 10; b++) {
		const ps = [];
		for (let i = 0; i < 30; i++) {
			const photo = i % 2 ? "" : "x".repeat(100000);
			ps.push(edit("e" + ++n, photo).catch((e) => errors.push(e.code + " " + e.message)));
			if (i % 10 == 9) await sleep(b % 3);
		}
		await Promise.allSettled(ps);
		const got = (await snug.db.get("list")).items;
		if (got.length != n) wrong.push("burst " + b + ": read " + got.length + " edits, the last acknowledged has " + n);
	}
	return {wrong, errors: errors.slice(0, 3), n, ms: performance.now() - t0};
})()`

// TestAutosaveBurstsInAnMCPAppsHost is issue 26.1 under MCP Apps: the
// published AppBridge forwards each tools/call as its own HTTP request, so
// the server receives a burst's saves in any order. Every acknowledged save
// must still take effect in the order the app made it: after each burst,
// and when the app is opened again, the list is the last one saved. Half
// the saves carry a large photo, so that the small save after one can
// reach the server first. The overtaking is a race of the server's
// goroutines (seen once in the first runs of the old runtime, then not in
// six): runtime-js/test/mcp.test.mjs pins the mechanism, one db call out
// at a time, deterministically.
func TestAutosaveBurstsInAnMCPAppsHost(t *testing.T) {
	p := filepath.Join(t.TempDir(), "list.html")
	if err := os.WriteFile(p, []byte(listApp), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openMCPHostOf(t, []string{"list"}, p)
	a := h.show("list")
	a.waitText("#status", "ready 0")
	rep := browsertest.EvalWithin[struct {
		Wrong, Errors []string
		N             int
		MS            float64
	}](t, a.f, mcpBurstsJS, 2*time.Minute)
	t.Logf("%d saves and 10 reads in %.0f ms", rep.N, rep.MS)
	if len(rep.Errors) > 0 {
		t.Errorf("saves failed: %s", strings.Join(rep.Errors, "; "))
	}
	if len(rep.Wrong) > 0 {
		t.Fatalf("an earlier save overtook an acknowledged one: %s", strings.Join(rep.Wrong, "; "))
	}
	b := h.show("list")
	b.waitText("#status", "ready 300")
}
