package runtimejs

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// The browser tests share one Chromium (internal/browsertest), ended here.
func TestMain(m *testing.M) { os.Exit(browsertest.Main(m)) }

// hostPage is a scripted host in a real page: it owns a sandboxed iframe
// running the app, answers its frames by event.source, and records what it
// receives in window.got. A second sandboxed frame tries to pass as the host.
const hostPage = `<!doctype html><meta charset="utf-8"><title>host</title>
<iframe id="app" sandbox="allow-scripts" src="/app" style="width:400px;height:200px"></iframe>
<iframe id="evil" sandbox="allow-scripts" src="/evil"></iframe>
<script>
window.got = [];
const app = document.getElementById("app");
const send = (f) => app.contentWindow.postMessage(f, "*");
const ready = (id) => send({ v: 1, type: "snug:host-ready", instanceId: id, protocolVersions: [1],
  capabilities: { streaming: true, db: true, auth: false },
  theme: { mode: "dark", tokens: { "--snug-bg": "rgb(1, 2, 3)" } }, locale: "fr-FR" });
addEventListener("message", (e) => {
  if (e.source !== app.contentWindow) return;
  const f = e.data;
  got.push(f);
  if (f.type === "snug:app-announce") setTimeout(() => ready("i-1"), 150); // the impostor speaks first
  if (f.type === "snug:app-message") {
    let text = "";
    for (const w of ["a", "b", "c"]) send({ v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: true, text: (text += w) });
    send({ v: 1, type: "snug:app-response", requestId: f.requestId, ok: true, streaming: false, data: { echo: f.payload } });
  }
  if (f.type === "snug:db-request")
    send({ v: 1, type: "snug:db-response", requestId: f.requestId, ok: false, error: { code: "DB_SQL_ERROR", message: "no such table", retryable: false } });
});
</script>`

// evilPage is a sibling sandboxed frame that posts host frames to the app.
const evilPage = `<!doctype html><script>
const fake = { v: 1, type: "snug:host-ready", instanceId: "evil", protocolVersions: [1],
  capabilities: { streaming: true, db: true, auth: false, net: true }, theme: { mode: "light" } };
const t = setInterval(() => { try { parent.frames[0].postMessage(fake, "*"); } catch (e) {} }, 20);
setTimeout(() => clearInterval(t), 2000);
</script>`

// appPage is an app as an LLM writes it: meta tags and one script.
const appPage = `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="com.example.browser">
<meta name="snug:display-name" content="Browser test">
<meta name="snug:icon-emoji" content="🧪">
<script>RUNTIME</script></head><body><div id="box" style="height:120px"></div>
<script type="module">
const info = await snug.ready;
const texts = [];
const data = await snug.ask("echo", { n: 1 }, { onText: (t) => texts.push(t) });
let dbErr;
try { await snug.db.exec("select * from nope"); } catch (e) { dbErr = { code: e.code, name: e.name, retryable: e.retryable }; }
let netErr;
try { await snug.net.fetch("https://example.com/"); } catch (e) { netErr = e.message; }
const root = document.documentElement;
snug.emit("result", { instanceId: info.instanceId, locale: info.locale, texts, data, dbErr, netErr,
  theme: root.getAttribute("data-theme"), bg: getComputedStyle(root).getPropertyValue("--snug-bg").trim() });
setTimeout(() => { document.getElementById("box").style.height = "640px"; }, 100);
</script></body></html>`

// TestBrowser runs the built runtime in a sandboxed iframe of headless
// Chromium against a scripted host page: handshake from meta tags, an
// impostor frame ignored by event.source, streaming ask, a db error, a
// capability the host did not advertise, the theme applied, and resize
// events from the real ResizeObserver.
func TestBrowser(t *testing.T) {
	if strings.Contains(strings.ToLower(string(Script)), "</script") {
		t.Fatal("dist/snug.js contains </script, which would end an inline script")
	}
	base := browsertest.ServePages(t, map[string]string{
		"/":     hostPage,
		"/app":  strings.Replace(appPage, "RUNTIME", string(Script), 1),
		"/evil": evilPage,
	})
	ctx := browsertest.NewTab(t)
	start := time.Now()
	browsertest.Do(t, ctx, "open the host page", chromedp.Navigate(base+"/"))
	t.Logf("navigated in %v", time.Since(start))

	type frame struct {
		Type        string          `json:"type"`
		AppID       string          `json:"appId"`
		DisplayName string          `json:"displayName"`
		IconEmoji   string          `json:"iconEmoji"`
		InstanceID  string          `json:"instanceId"`
		Event       string          `json:"event"`
		Data        json.RawMessage `json:"data"`
	}
	var got []frame
	deadline := time.Now().Add(20 * time.Second)
	for {
		raw := browsertest.Eval[string](t, ctx, `JSON.stringify(window.got)`)
		got = nil
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatal(err)
		}
		big := false
		for _, f := range got {
			big = big || (f.Event == "resize" && strings.Contains(string(f.Data), `"height":6`))
		}
		if big || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}

	t.Logf("frames after %v: %d", time.Since(start), len(got))
	var announce, result *frame
	var heights []string
	for i := range got {
		switch f := &got[i]; {
		case f.Type == "snug:app-announce":
			announce = f
		case f.Event == "result":
			result = f
		case f.Event == "resize":
			heights = append(heights, string(f.Data))
		}
	}
	if announce == nil || announce.AppID != "com.example.browser" || announce.DisplayName != "Browser test" || announce.IconEmoji != "🧪" {
		t.Fatalf("announce = %+v; frames %+v", announce, got)
	}
	if result == nil {
		t.Fatalf("no result event; frames %+v", got)
	}
	var r struct {
		InstanceID string            `json:"instanceId"`
		Locale     string            `json:"locale"`
		Texts      []string          `json:"texts"`
		Data       map[string]any    `json:"data"`
		DBErr      map[string]any    `json:"dbErr"`
		NetErr     string            `json:"netErr"`
		Theme      string            `json:"theme"`
		BG         string            `json:"bg"`
		Extra      map[string]string `json:"-"`
	}
	if err := json.Unmarshal(result.Data, &r); err != nil {
		t.Fatal(err)
	}
	if r.InstanceID != "i-1" || result.InstanceID != "i-1" {
		t.Errorf("instanceId = %q (event %q), want i-1: the impostor frame was not ignored", r.InstanceID, result.InstanceID)
	}
	if r.Locale != "fr-FR" {
		t.Errorf("locale = %q", r.Locale)
	}
	if strings.Join(r.Texts, ",") != "a,ab,abc" {
		t.Errorf("onText saw %q, want the cumulative a, ab, abc", r.Texts)
	}
	if b, _ := json.Marshal(r.Data); string(b) != `{"echo":{"n":1}}` {
		t.Errorf("ask data = %s", b)
	}
	if r.DBErr["code"] != "DB_SQL_ERROR" || r.DBErr["name"] != "SnugError" || r.DBErr["retryable"] != false {
		t.Errorf("db error = %v", r.DBErr)
	}
	if !strings.Contains(r.NetErr, `does not offer "net"`) {
		t.Errorf("net without the capability: %q", r.NetErr)
	}
	if r.Theme != "dark" || r.BG != "rgb(1, 2, 3)" {
		t.Errorf("theme = %q, --snug-bg = %q", r.Theme, r.BG)
	}
	if len(heights) < 2 {
		t.Fatalf("resize events %v, want the first height and the grown one", heights)
	}
	for i := 1; i < len(heights); i++ {
		if heights[i] == heights[i-1] {
			t.Errorf("resize repeated an unchanged height: %v", heights)
		}
	}
	for _, f := range got {
		if f.Type == "snug:net-request" {
			t.Errorf("a net-request crossed without the capability")
		}
	}
}
