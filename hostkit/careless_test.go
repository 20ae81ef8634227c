package hostkit_test

// Issue 28, how it is checked: the careless habits a strict build lets
// through (testdata/corpus/careless, pack's TestCarelessCorpusIsDiagnosedOnItsLine
// holds the others to a diagnostic on their line) must work as written,
// driven in Chromium under the real host and runner.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/browsertest"
)

func carelessApp(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "corpus", "careless", name+".html"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCarelessHabitsWork: alert() shows its message in the page; a link
// with target=_blank asks the host to open it; a top-level await
// snug.ask(…) before snug.ready waits for the handshake and gets its
// answer; setInterval polling an API with snug.net.fetch asks once
// ("until I close the page") and then keeps polling with no more dialogs.
func TestCarelessHabitsWork(t *testing.T) {
	var hits atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"price":%d}`, 100+hits.Add(1))
	}))
	defer api.Close()
	ap := netip.MustParseAddrPort(api.Listener.Addr().String())
	polling := strings.Replace(string(carelessApp(t, "polling")), "PORT", fmt.Sprint(ap.Port()), 1)
	h, err := hostkit.New(hostkit.WithAgent(offline.New(offline.Options{})),
		hostkit.WithNet(netgate.Config{}, netgate.WithDevLoopback(ap)),
		hostkit.WithApps(
			hostkit.RawApp("alert", carelessApp(t, "alert")),
			hostkit.RawApp("blanklink", carelessApp(t, "blanklink")),
			hostkit.RawApp("askfirst", carelessApp(t, "askfirst")),
			hostkit.RawApp("polling", []byte(polling)),
		))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)

	t.Run("alert", func(t *testing.T) {
		f := browsertest.OpenRunner(t, h.URL(), "alert").Frame(0)
		browsertest.Do(t, f, "type a name", chromedp.SendKeys(chromedp.CSS("#n"), "Ada"))
		clickIn(t, f, "#save")
		browsertest.WaitFor(t, f, "the alert's notice", `[...document.querySelectorAll('snug-notice')].some(n => n.textContent.startsWith('Saved Ada'))`)
	})
	t.Run("blanklink", func(t *testing.T) {
		r := browsertest.OpenRunner(t, h.URL(), "blanklink")
		clickIn(t, r.Frame(0), "a")
		if d := r.Confirm(); d.Kind != "open-url" || d.URL != "https://example.com/help" {
			t.Fatalf("the link's dialog shows %+v", d)
		}
		r.Answer("deny")
	})
	t.Run("askfirst", func(t *testing.T) {
		f := browsertest.OpenRunner(t, h.URL(), "askfirst").Frame(0)
		browsertest.WaitFor(t, f, "the answer", `document.getElementById("out").textContent !== ""`)
		if got := browsertest.Eval[string](t, f, `document.getElementById("out").textContent`); got == "undefined" {
			t.Fatalf("the answer reads %q", got)
		}
	})
	// What the build says of geolocation, the camera and notifications
	// (testdata/corpus/careless/permissions.html) holds in the runner:
	// each is refused at once, with no prompt.
	t.Run("permissions refused", func(t *testing.T) {
		f := browsertest.OpenRunner(t, h.URL(), "alert").Frame(0)
		got := browsertest.Eval[[]string](t, f, `Promise.all([
			new Promise((ok) => navigator.geolocation.getCurrentPosition(() => ok("located"), (e) => ok("geolocation " + e.code))),
			navigator.mediaDevices ? navigator.mediaDevices.getUserMedia({ video: true }).then(() => "camera", (e) => e.name) : "no mediaDevices",
			typeof Notification == "undefined" ? "no Notification" : Notification.requestPermission().then((p) => "notification " + p),
		])`)
		t.Logf("in the sandbox: %q", got)
		if got[0] != "geolocation 1" || got[1] == "camera" || got[2] == "notification granted" || got[2] == "notification default" {
			t.Fatalf("in the sandbox: %q", got)
		}
	})
	t.Run("polling", func(t *testing.T) {
		r := browsertest.OpenRunner(t, h.URL(), "polling")
		if d := r.Confirm(); d.Kind != "net" || !strings.HasSuffix(d.URL, "/price") {
			t.Fatalf("the first poll's dialog shows %+v", d)
		}
		r.Answer("session")
		f := r.Frame(0)
		browsertest.WaitFor(t, f, "three polls answered", `Number(document.getElementById("price").textContent) >= 103`)
		if open := browsertest.Eval[bool](t, r.Tab, `document.getElementById('confirm').open`); open {
			t.Fatal("a later poll raised another dialog")
		}
	})
}
