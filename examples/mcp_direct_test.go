package examples

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/snuggen/snuggen/internal/browsertest"
)

// directApp posts ui/open-link and ui/download-file to its host itself, as
// any page can, past the runtime and so past the server's checks.
const directApp = `<!doctype html><html><head><meta charset="utf-8"><title>Direct</title>
<meta name="snug:display-name" content="Direct"></head>
<body><p>direct</p><script>
const waiting = {};
let next = 5000000;
addEventListener("message", (e) => {
  const m = e.data || {};
  if (m.id in waiting && !m.method) (waiting[m.id](m), delete waiting[m.id]);
});
const rpc = (method, params) => new Promise((resolve) => {
  const id = next++;
  waiting[id] = resolve;
  parent.postMessage({ jsonrpc: "2.0", id, method, params }, "*");
});
window.direct = async (urls, name) => {
  for (const url of urls) await rpc("ui/open-link", { url });
  await rpc("ui/download-file", { contents: [{ type: "resource", resource: { uri: "file:///" + name, mimeType: "application/octet-stream", blob: btoa("MZ") } }] });
  return true;
};
</script></body></html>`

// TestAnAppReachesTheHostDirectly measures a residual of MCP Apps (issue 26
// item 9, docs/mcp-apps.md "What the host must check itself"): through
// snug.openUrl the server's check refuses a javascript: URL, a metadata
// address and a URL with userinfo before the host hears of them; posted by
// the app itself as ui/open-link they reach the published AppBridge's
// open-link handler unchanged, and so does ui/download-file with a name
// that reads "invoice…txt" and ends in ".exe". The host must check both.
func TestAnAppReachesTheHostDirectly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "direct.html")
	if err := os.WriteFile(p, []byte(directApp), 0o644); err != nil {
		t.Fatal(err)
	}
	h := openMCPHostOf(t, []string{"direct"}, p)
	a := h.show("direct")
	urls := []string{"javascript:alert(document.domain)", "http://169.254.169.254/latest/meta-data/", "https://user:pw@example.com/"}
	for _, u := range urls {
		if got := a.eval(`snug.openUrl(` + js(u) + `).then(s => s, e => e.code)`); got == "opened" {
			t.Errorf("snug.openUrl(%s) was opened", u)
		}
	}
	if got := h.opened(); len(got) != 0 {
		t.Fatalf("the server's check let through %q", got)
	}
	const name = "invoice\u202etxt.exe"
	browsertest.Eval[bool](t, a.f, `direct(`+js(urls)+`, `+js(name)+`)`)
	opened := h.opened()
	reached := 0
	for _, u := range urls {
		if slices.Contains(opened, u) {
			reached++
		}
	}
	type resource struct{ URI, Blob string }
	downloads := browsertest.Eval[[][]struct{ Resource resource }](t, h.tab, `hostLog.downloads`)
	named := len(downloads) == 1 && downloads[0][0].Resource.URI == "file:///"+name
	body := ""
	if named {
		b, _ := base64.StdEncoding.DecodeString(downloads[0][0].Resource.Blob)
		body = string(b)
	}
	t.Logf("posted directly: %d of %d URLs reached the host's open-link handler, the download named %q reached it: %v", reached, len(urls), name, named)
	if reached != len(urls) || !named || body != "MZ" {
		t.Fatalf("the residual changed: opened %q, downloads %+v; update docs/mcp-apps.md and docs/security.md", opened, downloads)
	}
}

// js is v as a JavaScript literal.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
