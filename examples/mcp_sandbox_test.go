package examples

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/turncanary"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// rtcApp is an app, written as a hostile author would, that tries WebRTC
// to a TURN server at TURN_PORT from its own window and from nested frames
// it makes: a srcdoc child and an about:blank child (written with
// document.write, and driven from the app's own script through its
// contentWindow), and a srcdoc frame made by innerHTML. The children run
// the app's own script text again, so a hash-only CSP (the build's meta)
// lets them run; a child knows itself by its window name, which is the
// TURN username it sends.
const rtcApp = `<!doctype html><html><head><meta charset="utf-8"><title>RTC</title>
<meta name="snug:app-id" content="test.rtc"><meta name="snug:display-name" content="RTC"></head>
<body><p>rtc</p>
<script>
(() => {
  const PC = "RTCPeer" + "Connection";
  const turn = (w, name) => {
    const pc = new w[PC]({ iceServers: [{ urls: "turn:127.0.0.1:TURN_PORT?transport=udp", username: name, credential: "x" }] });
    pc.createDataChannel("x");
    pc.createOffer().then((o) => pc.setLocalDescription(o));
    (window.pcs = window.pcs || []).push(pc);
  };
  if (window.name) {
    turn(window, window.name);
    return;
  }
  const R = (window.R = {});
  const me = document.currentScript.textContent;
  const child = "<!doctype html><script>" + me + "<\/script>";
  const attempt = (name, f) => {
    try {
      f();
      R[name] = "ran";
    } catch (e) {
      R[name] = "threw: " + e.message;
    }
  };
  attempt("main", () => turn(window, "leak-main"));
  attempt("srcdoc", () => {
    const f = document.createElement("iframe");
    f.name = "leak-srcdoc";
    f.srcdoc = child;
    document.body.append(f);
  });
  attempt("srcdoc-innerHTML", () => {
    const d = document.createElement("div");
    document.body.append(d);
    d.innerHTML = '<iframe name="leak-srcdoc-innerHTML" srcdoc="' + child.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '"></iframe>';
  });
  attempt("about-blank-write", () => {
    const f = document.createElement("iframe");
    f.name = "leak-about-blank-write";
    document.body.append(f);
    f.contentDocument.write(child);
    f.contentDocument.close();
  });
  attempt("about-blank-driven", () => {
    const f = document.createElement("iframe");
    document.body.append(f);
    turn(f.contentWindow, "leak-about-blank-driven");
  });
})();
</script>
</body></html>`

// The attempts rtcApp makes; each one that runs sends "leak-" + its name.
var rtcAttempts = []string{"main", "srcdoc", "srcdoc-innerHTML", "about-blank-write", "about-blank-driven"}

// The sandboxes MCP Apps hosts give the app's frame: an opaque origin (the
// harness's default, and hosts whose inner frame has allow-scripts alone),
// where a parent cannot reach an about:blank child; and allow-same-origin,
// which hosts with a sandbox proxy on an origin of its own give the inner
// frame, where it can. (The harness has no proxy: the second frame shares
// the test page's origin, which nothing here uses.)
var rtcSandboxes = []struct {
	name, sandbox string
	leaky         []string // the attempts that leak without the defences
}{
	{"opaque origin", "allow-scripts allow-forms", []string{"main", "srcdoc", "srcdoc-innerHTML"}},
	{"same origin", "allow-scripts allow-same-origin allow-forms", rtcAttempts},
}

// TestWebRTCStaysGoneInAnMCPAppsHost: issue 11.2 in a foreign host. An
// MCP Apps host sends none of snuggen's headers, so the app document
// itself carries the prelude and the Trusted Types policy
// (server.PrepareStandalone). The app above, served by `snuggen mcp` and
// rendered by the published AppBridge in the test host, sends the canary
// nothing from its window or any nested frame, in either sandbox; the same
// app as built before the defences (the MCP runtime, the build's hash-only
// meta CSP) in the same host page, with the same sandbox, on a canary of
// its own, sends the username of every attempt the sandbox lets run.
func TestWebRTCStaysGoneInAnMCPAppsHost(t *testing.T) {
	type variant struct {
		defended, control *turncanary.Canary
		key               string
	}
	withPort := func(c *turncanary.Canary) string {
		return strings.ReplaceAll(rtcApp, "TURN_PORT", fmt.Sprint(c.Port()))
	}
	dir := t.TempDir()
	var paths, keys []string
	vs := make([]variant, len(rtcSandboxes))
	for i := range rtcSandboxes {
		vs[i] = variant{defended: turncanary.New(t), control: turncanary.New(t), key: fmt.Sprintf("rtc%d", i)}
		p := filepath.Join(dir, vs[i].key+".html")
		if err := os.WriteFile(p, []byte(withPort(vs[i].defended)), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
		keys = append(keys, vs[i].key)
	}
	base := browsertest.ServePages(t, map[string]string{"/": browsertest.MCPHostPage(t)})
	endpoints := startMCP(t, t.TempDir(), base, keys, paths...)
	h := &mcpTab{t: t, tab: browsertest.NewTab(t), base: base, endpoints: endpoints}
	h.load()

	for i, sb := range rtcSandboxes {
		v := vs[i]
		sameOrigin := strings.Contains(sb.sandbox, "allow-same-origin")
		// inFrame evaluates expr, written in terms of w (the window of the
		// frame id), in that frame's own target when it is out of process,
		// from the test page when it shares its origin. Property reads
		// only: the app's CSP allows no eval. (Frame targets live as long
		// as the test: detaching one early closes the tab.)
		frames := map[string]context.Context{}
		inFrame := func(id, expr string) string {
			t.Helper()
			if sameOrigin {
				return browsertest.Eval[string](t, h.tab, `(() => { const w = document.getElementById(`+jsString(id)+`).contentWindow; return String(`+expr+`); })()`)
			}
			if frames[id] == nil {
				frames[id] = browsertest.FrameOf(t, h.tab, "#"+id)
			}
			return browsertest.Eval[string](t, frames[id], `(() => { const w = window; return String(`+expr+`); })()`)
		}
		waitAttempts := func(id string) map[string]string {
			t.Helper()
			var r map[string]string
			if !browsertest.Poll(func() bool {
				r = nil
				_ = json.Unmarshal([]byte(inFrame(id, `JSON.stringify(w.R || {})`)), &r)
				return len(r) == len(rtcAttempts)
			}) {
				t.Fatalf("%s: the app in #%s made %d of %d attempts: %v", sb.name, id, len(r), len(rtcAttempts), r)
			}
			return r
		}

		// The control: the app as built without the defences, in the same
		// page and sandbox, leaks.
		res, err := pack.Build(context.Background(), pack.Options{Path: "rtc.html", HTML: []byte(withPort(v.control)), Runtime: runtimejs.ScriptMCP})
		if err != nil {
			t.Fatal(err)
		}
		control := "control" + fmt.Sprint(i)
		browsertest.Eval[any](t, h.tab, `(() => {
			const f = document.createElement("iframe");
			f.id = `+jsString(control)+`;
			f.setAttribute("sandbox", `+jsString(sb.sandbox)+`);
			f.srcdoc = `+jsString(string(res.HTML))+`;
			document.body.append(f);
		})()`)
		results := waitAttempts(control)
		var missing []string
		if !browsertest.Poll(func() bool {
			users, _ := v.control.Leaks()
			missing = slices.DeleteFunc(slices.Clone(sb.leaky), func(a string) bool { return slices.Contains(users, "leak-"+a) })
			return len(missing) == 0
		}) {
			t.Fatalf("%s: without the defences %q sent no TURN username (attempts %v); the check below proves nothing for them", sb.name, missing, results)
		}
		users, n := v.control.Leaks()
		t.Logf("%s, undefended: %d datagrams, usernames %q; attempts %v", sb.name, n, users, results)

		// The same app served by snuggen mcp: nothing leaves.
		mime := browsertest.Eval[string](t, h.tab, fmt.Sprintf(`showApp(%q, %q, %q)`, "open_"+v.key, sb.sandbox, v.key))
		if mime != "text/html;profile=mcp-app" {
			t.Fatalf("resource MIME type %q", mime)
		}
		results = waitAttempts("app")
		for _, name := range rtcAttempts {
			want := "threw: snug: " // the prelude's refusal of a nested frame
			switch name {
			case "main":
				want = "threw: " // the constructor is gone
			case "srcdoc-innerHTML":
				// The default policy's refusal: the browser sent the markup
				// through it, so the meta's Trusted Types are enforced.
				want = "threw: snug: a srcdoc frame"
			}
			if !strings.HasPrefix(results[name], want) {
				t.Errorf("%s: %s: %q, want %q…", sb.name, name, results[name], want)
			}
		}
		if got := inFrame("app", `[typeof w.RTCPeerConnection, typeof w.HTMLIFrameElement, typeof w.trustedTypes, w.document.querySelectorAll("iframe, object, embed").length]`); got != "undefined,undefined,undefined,0" {
			t.Errorf("%s: RTCPeerConnection, HTMLIFrameElement, trustedTypes, nested frames: %s", sb.name, got)
		}
		// A trusted client (the test page itself, which has WebRTC) sends a
		// username after the app's attempts: once it is in from every
		// socket the canary saw, the canary was listening and everything it
		// got was the trusted client's.
		browsertest.Eval[any](t, h.tab, fmt.Sprintf(`(() => {
			const pc = new RTCPeerConnection({ iceServers: [{ urls: "turn:127.0.0.1:%d?transport=udp", username: "sentinel", credential: "x" }] });
			pc.createDataChannel("x");
			pc.createOffer().then((o) => pc.setLocalDescription(o));
			(window.sentinels = window.sentinels || []).push(pc);
		})()`, v.defended.Port()))
		if !browsertest.Poll(func() bool { return v.defended.OnlyFrom("sentinel") }) {
			users, n := v.defended.Leaks()
			t.Fatalf("%s: the canary got %d datagrams from %d sources, usernames %q: not only the trusted client's", sb.name, n, v.defended.Sources(), users)
		}
		_, n = v.defended.Leaks()
		t.Logf("%s, defended: attempts %v; the canary got only the trusted client's %d datagrams", sb.name, results, n)
	}
}

// jsString is s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
