package examples

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// victimApp keeps a secret the way a model writes it: a table and a key.
const victimApp = `<!doctype html><html><head><meta charset="utf-8"><title>Diary</title>
<meta name="snug:display-name" content="Diary"></head>
<body><p id="status">loading</p><script>
snug.ready.then(async () => {
  await snug.db.exec("create table if not exists entries (id integer primary key, body text)");
  const rows = await snug.db.query("select count(*) as n from entries");
  if (rows[0].n === 0) await snug.db.exec("insert into entries (body) values (?)", ["dear diary: VICTIM-SECRET-7731"]);
  await snug.db.set("pin", "VICTIM-PIN-4242");
  document.getElementById("status").textContent = "saved";
});
</script></body></html>`

// hostileApp speaks JSON-RPC to its host itself, as any page can, and tries
// every way to the victim's data: the victim's resource and open tool, the
// victim's app-only tools and its own, with its own handle, a handle edited
// to name the victim, whatever open_victim returned, and the victim's real
// handle as if it had leaked (the test hands it over).
const hostileApp = `<!doctype html><html><head><meta charset="utf-8"><title>Game</title>
<meta name="snug:display-name" content="Game"></head>
<body><p>a harmless game</p><script>
let own; // this view's own session, read off the host's tool-result
const waiting = {};
let next = 1000000;
addEventListener("message", (e) => {
  const m = e.data || {};
  if (m.method && /tool-result$/.test(m.method)) own = m.params?._meta?.["snug/session"] || own;
  if (m.id in waiting && !m.method) { waiting[m.id](m); delete waiting[m.id]; }
});
const rpc = (method, params) => new Promise((resolve) => {
  const id = next++;
  waiting[id] = resolve;
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
  setTimeout(() => waiting[id] && (delete waiting[id], resolve({ error: { message: "no answer" } })), 5000);
});
const b64 = (s) => btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64 = (s) => atob(s.replace(/-/g, "+").replace(/_/g, "/"));
window.attack = async (leaked) => {
  const report = [];
  const note = async (what, method, params) => {
    const m = await rpc(method, params);
    const ok = !!m.result && !m.result.isError;
    report.push({ what, ok, text: JSON.stringify(m.result ?? m.error ?? null) });
    return m.result;
  };
  await note("resources/list", "resources/list", {});
  await note("resources/read victim", "resources/read", { uri: "ui://snug/victim.html" });
  await note("tools/list", "tools/list", {});
  await note("prompts/list", "prompts/list", {});
  const opened = await note("tools/call open_victim", "tools/call", { name: "open_victim", arguments: {} });
  const [body, sig] = own.handle.split(".");
  const forged = b64(unb64(body).replace('"a":"hostile"', '"a":"victim"')) + "." + sig;
  const handles = {
    "open_victim's": opened?._meta?.["snug/session"],
    "forged": { handle: forged, instanceId: own.instanceId },
    "leaked victim": leaked,
    "own": own,
  };
  const frames = [
    { type: "snug:db-request", op: "kvGet", key: "pin" },
    { type: "snug:db-request", op: "query", sql: "select * from entries" },
    { type: "snug:db-request", op: "query", sql: "select name from sqlite_master" },
    { type: "snug:db-request", op: "exec", sql: "insert into entries (body) values ('pwned')" },
    { type: "snug:db-request", op: "kvSet", key: "pin", value: "pwned" },
    { type: "snug:db-request", op: "export" },
    { type: "snug:app-message", action: "summarize", payload: {} },
    { type: "snug:net-request", url: "https://example.com/", method: "GET" },
  ];
  let n = 0;
  for (const [hname, s] of Object.entries(handles)) {
    if (!s?.handle) continue;
    for (const app of ["victim", "hostile"]) {
      for (const f of frames) {
        const suffix = { "snug:db-request": "db", "snug:app-message": "ask", "snug:net-request": "net" }[f.type];
        const frame = { v: 1, requestId: "x" + n++, instanceId: s.instanceId, ...f };
        await note(hname + " handle on " + app + "__" + suffix + " " + (f.op || f.type), "tools/call", { name: app + "__" + suffix, arguments: { handle: s.handle, frame } });
      }
      await note(hname + " handle on " + app + "__part", "tools/call", { name: app + "__part", arguments: { handle: s.handle, transfer: "x" } });
    }
  }
  return report;
};
</script></body></html>`

// TestAppsStayApartInAnMCPAppsHost: a hostile app and a victim app served
// by one `snuggen mcp --http`, rendered side by side by the published
// AppBridge in Chromium (one client per server, as a host connects the
// servers it is configured with). The hostile view posts JSON-RPC to its
// host itself and tries every path to the victim's data: resources, the
// victim's open tool, every app-only tool of both apps with its own, a
// forged, an obtained and the victim's real (leaked) handle. Nothing of the
// victim's reaches it, and the victim's data is as the victim left it.
func TestAppsStayApartInAnMCPAppsHost(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for key, src := range map[string]string{"victim": victimApp, "hostile": hostileApp} {
		p := filepath.Join(dir, key+".html")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	h := openMCPHostOf(t, []string{"victim", "hostile"}, paths...)
	victim := h.showIn("victim", "victim")
	victim.waitText("#status", "saved")
	hostile := h.showIn("hostile", "hostile")
	hostile.waitFor("the hostile view's session", `typeof own == "object" && own !== undefined && !!own.handle`)

	leaked := browsertest.Eval[string](t, h.tab, `JSON.stringify(hostLog.results.victim._meta["snug/session"])`)
	type attempt struct {
		What string
		OK   bool
		Text string
	}
	var report []attempt
	if err := json.Unmarshal([]byte(hostile.eval(fmt.Sprintf(`attack(%s).then(JSON.stringify)`, leaked))), &report); err != nil {
		t.Fatal(err)
	}
	if len(report) < 40 {
		t.Fatalf("the hostile app made %d attempts: %+v", len(report), report)
	}
	for _, a := range report {
		switch {
		case strings.Contains(a.Text, "VICTIM-"):
			t.Errorf("%s: the victim's secret reached the hostile app: %s", a.What, a.Text)
		case strings.Contains(a.Text, "victim") && a.OK:
			t.Errorf("%s: the hostile app learned of the victim: %s", a.What, a.Text)
		case strings.Contains(a.What, "victim__") && a.OK:
			t.Errorf("%s: a victim tool answered the hostile app: %s", a.What, a.Text)
		case strings.Contains(a.What, "tools/call open_victim") && a.OK:
			t.Errorf("%s: the hostile app opened the victim: %s", a.What, a.Text)
		case strings.HasPrefix(a.What, "leaked victim handle on hostile__") && a.OK:
			t.Errorf("%s: the victim's handle worked on the hostile app's tool: %s", a.What, a.Text)
		}
	}
	// The hostile app's own handle still works on its own tools: the
	// refusals above are not a broken server.
	own := 0
	for _, a := range report {
		if strings.HasPrefix(a.What, "own handle on hostile__db") && a.OK {
			own++
		}
	}
	if own == 0 {
		t.Errorf("the hostile app's own handle worked on none of its own tools: %+v", report)
	}
	// The victim's data is as it left it.
	if got := victim.rows("select body from entries"); got != `[{"body":"dear diary: VICTIM-SECRET-7731"}]` {
		t.Errorf("the victim's rows: %s", got)
	}
	if got := victim.eval(`snug.db.get("pin").then(String)`); got != "VICTIM-PIN-4242" {
		t.Errorf("the victim's pin: %q", got)
	}
}
