package examples

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/store"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/clitest"
)

// startMCP runs `snuggen mcp --http` on loopback in this process for the
// apps keys found in args (example folders, files), letting pages of origin call it, and returns each
// app's endpoint (an MCP server of its own). It stops when the test ends,
// as after Ctrl-C.
func startMCP(t *testing.T, data, origin string, keys []string, args ...string) map[string]string {
	t.Helper()
	return clitest.StartMCPApps(t, keys, slices.Concat(args, []string{"--http", "127.0.0.1:0", "--data", data, "--allow-origin", origin})...)
}

// mcpTab is the test host's page in a tab, with one client per server (app
// key -> its endpoint), as a host connects each server it is configured with.
type mcpTab struct {
	t         *testing.T
	tab       context.Context
	base      string
	endpoints map[string]string
}

func openMCPHost(t *testing.T, names ...string) *mcpTab {
	t.Helper()
	return openMCPHostOf(t, names, names...)
}

// openMCPHostOf is openMCPHost for the apps keys found in args.
func openMCPHostOf(t *testing.T, keys []string, args ...string) *mcpTab {
	t.Helper()
	base := browsertest.ServePages(t, map[string]string{"/": browsertest.MCPHostPage(t)})
	endpoints := startMCP(t, t.TempDir(), base, keys, args...)
	h := &mcpTab{t: t, tab: browsertest.NewTab(t), base: base, endpoints: endpoints}
	h.load()
	return h
}

// load (re)loads the host page and connects a client to each server.
func (h *mcpTab) load() {
	h.t.Helper()
	browsertest.Do(h.t, h.tab, "open the test host", chromedp.Navigate(h.base+"/"))
	for key, endpoint := range h.endpoints {
		tools := browsertest.Eval[[]string](h.t, h.tab, fmt.Sprintf(`connectHost(%q, %q)`, endpoint, key))
		if len(tools) == 0 {
			h.t.Fatalf("the server of %s lists no tools", key)
		}
	}
}

// show renders the example through its server's bridge and returns the
// app's frame.
func (h *mcpTab) show(name string) *app {
	h.t.Helper()
	return h.showIn(name, "app")
}

// showIn renders app name in the iframe #id.
func (h *mcpTab) showIn(name, id string) *app {
	h.t.Helper()
	mime := browsertest.Eval[string](h.t, h.tab, fmt.Sprintf(`showApp(%q, "allow-scripts allow-forms", %q, %q)`, "open_"+name, name, id))
	if mime != "text/html;profile=mcp-app" {
		h.t.Fatalf("resource MIME type %q", mime)
	}
	a := &app{t: h.t, f: browsertest.FrameOf(h.t, h.tab, "#"+id)}
	a.waitFor("snug.ready", `typeof snug == "object" && snug.capabilities !== undefined`)
	return a
}

func (h *mcpTab) opened() []string {
	return browsertest.Eval[[]string](h.t, h.tab, `hostLog.opened`)
}

// TestExamplesInAnMCPAppsHost runs the examples in a real MCP Apps host:
// the published AppBridge and MCP client in Chromium, the app in a
// sandboxed iframe, the server `snuggen mcp --http` on loopback.
func TestExamplesInAnMCPAppsHost(t *testing.T) {
	if _, err := os.Stat("todo"); err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(examples))
	for name := range examples {
		names = append(names, name)
	}
	slices.Sort(names)
	h := openMCPHost(t, names...)

	t.Run("every example runs with its capabilities", func(t *testing.T) {
		for _, name := range names {
			a := h.show(name)
			a.t = t
			for _, c := range examples[name] {
				if c == "ask" {
					continue // no flag: every host answers asks
				}
				if got := a.eval(fmt.Sprintf(`String(snug.capabilities[%q])`, c)); got != "true" {
					t.Errorf("%s: capability %s is %s", name, c, got)
				}
			}
			if got := a.eval(`String(snug.capabilities.streaming)`); got != "false" {
				t.Errorf("%s: streaming %s; the bridge forwards no progress", name, got)
			}
		}
	})

	t.Run("todo: an item persists across a reload", func(t *testing.T) {
		a := h.show("todo")
		a.t = t
		a.ready("#add-button")
		a.fill("#title", "buy milk\r") // Enter submits: once, in a frame that allows forms too
		a.waitFor("the row", `[...document.querySelectorAll('#list li span')].some(s => s.textContent === 'buy milk')`)
		a.waitText("#count", "1 open")
		h.load() // the host page reloads: a new client, a new open, a new handle
		b := h.show("todo")
		b.t = t
		b.waitFor("the row after the reload", `[...document.querySelectorAll('#list li span')].some(s => s.textContent === 'buy milk')`)
		if got := b.rows("select title from todo"); got != `[{"title":"buy milk"}]` {
			t.Fatalf("rows after the reload: %s", got)
		}
	})

	t.Run("flashcards: an ask with a schema gets the offline agent's answer", func(t *testing.T) {
		a := h.show("flashcards")
		a.t = t
		a.ready("#go")
		a.fill("#topic", "the periodic table")
		a.fill("#count", "3")
		a.click("#go")
		a.waitFor("the deck", `!document.getElementById('deck').hidden`)
		if got := a.eval(`String(document.getElementById('error').hidden)`); got != "true" {
			t.Fatalf("error shown: %s", a.text("#error"))
		}
		if front := a.text("#card"); front == "" {
			t.Fatal("an empty card")
		}
		if pos := a.text("#pos"); !strings.HasPrefix(pos, "1 / ") {
			t.Fatalf("position %q", pos)
		}
	})

	t.Run("links: snug.openUrl reaches the bridge's open-link handler", func(t *testing.T) {
		a := h.show("links")
		a.t = t
		a.ready("#add-button")
		link := "https://docs.example.com/guide/intro?lang=en&v=2#install"
		a.fill("#name", "Guide")
		a.fill("#url", link)
		a.click("#add-button")
		a.waitFor("the new link", `document.querySelectorAll('#board li').length === 3`)
		before := len(h.opened())
		a.click("#board li:nth-child(3) .open")
		a.waitText("#note", "Guide: opened")
		if got := h.opened(); len(got) != before+1 || got[len(got)-1] != link {
			t.Fatalf("the host was asked to open %q, want %s", got, link)
		}
		// A URL the host's check refuses never reaches the host.
		got := a.eval(`snug.openUrl("https://user:pw@docs.example.com/").then(s => s, e => e.code)`)
		if got != "MALFORMED" || len(h.opened()) != before+1 {
			t.Fatalf("openUrl with userinfo: %q, host asked %q", got, h.opened())
		}
	})

	t.Run("notes: theme changes from the host apply", func(t *testing.T) {
		a := h.show("notes")
		a.t = t
		a.waitFor("the first note", `document.querySelectorAll('#list li').length >= 1`)
		a.waitFor("the light theme", `document.documentElement.dataset.theme === 'light'`)
		a.waitText("#theme", "theme: light")
		browsertest.Eval[any](t, h.tab, `setTheme("dark")`)
		a.waitFor("the dark theme", `document.documentElement.dataset.theme === 'dark'`)
		a.waitText("#theme", "theme: dark")
		if v := a.eval(`getComputedStyle(document.documentElement).getPropertyValue('--color-background-primary')`); v != "#000000" {
			t.Errorf("the host's style variable: %q", v)
		}
		a.fill("#text", "Groceries\nmilk")
		a.waitText("#saved", "saved")

		// Export: snug.saveFile is the host's ui/download-file, with the
		// file's name, type and bytes.
		a.click("#export")
		a.waitText("#saved", "exported")
		type resource struct{ URI, MimeType, Blob string }
		got := browsertest.Eval[[][]struct{ Resource resource }](t, h.tab, `hostLog.downloads`)
		if len(got) != 1 || len(got[0]) != 1 {
			t.Fatalf("downloads asked of the host: %+v", got)
		}
		r := got[0][0].Resource
		body, _ := base64.StdEncoding.DecodeString(r.Blob)
		if r.URI != "file:///notes.md" || r.MimeType != "text/markdown" || string(body) != "Groceries\nmilk\n" {
			t.Fatalf("the host was asked to download %s %s %q", r.URI, r.MimeType, body)
		}
	})

}

// TestAPIViewerInAnMCPAppsHost: the net gate's confirm, the MCP way. The
// host takes no elicitation, so a new origin is NET_NOT_APPROVED and the app
// has the host open the server's grant page; once the user allows it there,
// the app's next request goes through the gate (with the connection's
// secret injected on the server) to the API. The server is the mcpapps
// package with a gate that may reach the loopback test API, which the CLI
// rightly never allows.
func TestAPIViewerInAnMCPAppsHost(t *testing.T) {
	const token = "example-token-0123456789"
	t.Setenv("SNUG_EXAMPLES_API_TOKEN", token)
	api, hits := apiServer(t, token)
	ap := netip.MustParseAddrPort(api.Listener.Addr().String())
	origin := fmt.Sprintf("https://api.example.com:%d", ap.Port())
	roots := x509.NewCertPool()
	roots.AddCert(api.Certificate())
	gate, err := netgate.New(netgate.Config{Connections: []netgate.Connection{{
		Name: "example-api", Origin: origin, Header: "Authorization", ValueFormat: "Bearer {secret}", SecretEnv: "SNUG_EXAMPLES_API_TOKEN",
	}}}, netgate.WithResolver(netgate.StaticResolver{"api.example.com": {ap.Addr()}}), netgate.WithAllowedAddrs(ap),
		netgate.WithTLSConfig(&tls.Config{RootCAs: roots}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gate.Close() })
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	base := browsertest.ServePages(t, map[string]string{"/": browsertest.MCPHostPage(t)})
	hs := httptest.NewUnstartedServer(nil)
	hs.Start()
	t.Cleanup(hs.Close)
	srv, err := mcpapps.New(context.Background(), mcpapps.Options{
		Apps:         []mcpapps.App{mcpapps.FileApp("api-viewer", filepath.Join("api-viewer", "app.html"))},
		Store:        st,
		Net:          gate,
		GrantBase:    hs.URL,
		AllowOrigins: []string{base},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	hs.Config.Handler = srv.Handler()
	h := &mcpTab{t: t, tab: browsertest.NewTab(t), base: base, endpoints: map[string]string{"api-viewer": hs.URL + srv.Endpoint("api-viewer")}}
	h.load()

	a := h.show("api-viewer")
	a.ready("#send")
	u := origin + "/v1/items?page=2"
	a.fill("#url", u)
	a.click("#send")
	a.waitFor("the refusal", `document.getElementById('status').textContent.startsWith('NET_NOT_APPROVED: ')`)
	var grant string
	browsertest.Until(t, "the grant page to open", func() bool {
		if got := h.opened(); len(got) > 0 {
			grant = got[len(got)-1]
		}
		return grant != ""
	})
	if !strings.HasPrefix(grant, hs.URL+"/snug/grant/") || hits.Load() != 0 {
		t.Fatalf("opened %q (the API saw %d requests), want the grant page first", grant, hits.Load())
	}
	// The user allows it on the page, in a tab of its own.
	page := browsertest.NewTab(t)
	browsertest.Do(t, page, "open the grant page", chromedp.Navigate(grant))
	if body := browsertest.Eval[string](t, page, `document.body.textContent`); !strings.Contains(body, origin) || !strings.Contains(body, "API viewer") {
		t.Fatalf("grant page: %s", body)
	}
	browsertest.Do(t, page, "allow", chromedp.Click(chromedp.CSS(`button[value=always]`)))
	browsertest.WaitFor(t, page, "the answer page", `document.body.textContent.includes('Allowed')`)

	a.click("#send")
	a.waitText("#status", "200")
	body := a.text("#body")
	if !strings.Contains(body, `"page": "2"`) || strings.Contains(body+a.text("#headers"), token) {
		t.Fatalf("body shown:\n%s", body)
	}
	if hits.Load() != 1 {
		t.Fatalf("the API saw %d requests, want 1", hits.Load())
	}
}

// Issue 28 item 11 in a real MCP Apps host whose bridge offers no
// serverTools: the app cannot reach the server's db or agent. snug.ready
// resolves all the same, a call to an absent capability rejects at once
// with CAPABILITY_ABSENT, and the corpus's notes app, written to the
// guide's fallback, says its notes last until the page closes and works
// from memory.
func TestCorpusWithoutServerToolsInAnMCPAppsHost(t *testing.T) {
	h := openMCPHostOf(t, []string{"notes"}, filepath.Join("..", "testdata", "corpus", "notes.html"))
	mime := browsertest.Eval[string](t, h.tab, `showApp("open_notes", "allow-scripts allow-forms", "notes", "app", { openLinks: {}, downloadFile: {} })`)
	if mime != "text/html;profile=mcp-app" {
		t.Fatalf("resource MIME type %q", mime)
	}
	a := &app{t: t, f: browsertest.FrameOf(t, h.tab, "#app")}
	a.waitFor("snug.ready", `typeof snug == "object" && snug.capabilities !== undefined`)
	if got := a.eval(`snug.ready.then(r => String(r.capabilities.db))`); got != "false" {
		t.Fatalf("capabilities.db = %s on a host without serverTools", got)
	}
	// The app's runtime has what the app names (db; an ask is the node
	// tests' runtime/mcp.test.mjs).
	if got := a.eval(`snug.db.exec("select 1").then(() => "resolved", e => e.code + " " + e.retryable)`); got != "CAPABILITY_ABSENT false" {
		t.Errorf("snug.db.exec: %s, want CAPABILITY_ABSENT, not retryable", got)
	}
	a.waitText("#note", "Notes last until this page closes.")
	a.fill("#body", "Buy oat milk")
	a.click("#add button")
	a.waitText("#count", "1 note")
	a.fill("#q", "milk")
	a.waitFor("the match", `document.querySelector("#results li")?.textContent === "Buy oat milk"`)
}

// Issue 28, how it is checked, under an MCP Apps host: the corpus of
// guide-written apps (testdata/corpus) served by `snuggen mcp`, each driven
// as its user would through the published AppBridge: the tracker's
// migrations and form, the notes' FTS5 search, the wizard, the exporter's
// CSV through ui/download-file, and the sketch's stroke redrawn on the
// host's theme change.
func TestCorpusInAnMCPAppsHost(t *testing.T) {
	// Five servers, as for the examples: each client holds a connection
	// open, and Chromium opens six at most to one host.
	names := []string{"drawing", "exporter", "notes", "tracker", "wizard"}
	var files []string
	for _, n := range names {
		files = append(files, filepath.Join("..", "testdata", "corpus", n+".html"))
	}
	h := openMCPHostOf(t, names, files...)

	t.Run("tracker", func(t *testing.T) {
		a := h.show("tracker")
		a.t = t
		a.ready("#add-button")
		a.fill("#what", "Coffee")
		a.fill("#amount", "3.20\r")
		a.waitText("#total", "3.20")
		if got := a.rows("select version from meta"); got != `[{"version":2}]` {
			t.Fatalf("the schema version: %s", got)
		}
	})
	t.Run("notes", func(t *testing.T) {
		a := h.show("notes")
		a.t = t
		a.waitText("#count", "0 notes")
		a.fill("#body", "Buy oat milk")
		a.click("#add button")
		a.waitText("#count", "1 note")
		a.fill("#q", "milk")
		a.waitFor("the highlighted match", `document.querySelector("#results mark")?.textContent === "milk"`)
	})
	t.Run("wizard", func(t *testing.T) {
		a := h.show("wizard")
		a.t = t
		a.waitFor("step 1", `document.activeElement?.id === "name"`)
		a.fill("#name", "Ada\r")
		a.waitFor("step 2", `!document.querySelector('[data-step="1"]').hidden`)
		a.click(`input[value="Kyoto"]`)
		a.click("#next")
		a.waitText("#summary", "Ada, 1 to Kyoto")
		a.click("#next")
		a.waitText("#done", "Booked: Kyoto for Ada")
	})
	t.Run("exporter", func(t *testing.T) {
		a := h.show("exporter")
		a.t = t
		a.waitFor("the app", `document.getElementById("json").href.startsWith("blob:")`)
		a.fill("#name", "Ada")
		a.fill("#phone", "555\r")
		a.waitFor("the contact", `document.querySelector("#list li")?.textContent === "Ada (555)"`)
		before := browsertest.Eval[int](t, h.tab, `hostLog.downloads.length`)
		a.click("#csv")
		a.waitText("#status", "Saved contacts.csv")
		type resource struct{ URI, Blob string }
		got := browsertest.Eval[[][]struct{ Resource resource }](t, h.tab, `hostLog.downloads`)
		r := got[before][0].Resource
		body, _ := base64.StdEncoding.DecodeString(r.Blob)
		if r.URI != "file:///contacts.csv" || string(body) != "name,phone\nAda,555" {
			t.Fatalf("the host was asked to download %s %q", r.URI, body)
		}
	})
	t.Run("drawing", func(t *testing.T) {
		a := h.show("drawing")
		a.t = t
		a.waitText("#count", "0 strokes")
		browsertest.WaitStill(t, a.f, "#pad")
		box := browsertest.Eval[[]float64](t, a.f, `(r => [r.left, r.top])(document.getElementById("pad").getBoundingClientRect())`)
		x, y := box[0]+40, box[1]+100
		browsertest.Do(t, a.f, "draw a stroke",
			chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, x, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, x+120, y, chromedp.ButtonLeft),
			chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, x+120, y, chromedp.ButtonLeft))
		a.waitText("#count", "1 stroke")
		pixel := `(() => { const [r, g, b] = document.getElementById("pad").getContext("2d").getImageData(100, 100, 1, 1).data; return "rgb(" + r + ", " + g + ", " + b + ")"; })()`
		before := a.eval(pixel)
		browsertest.Eval[any](t, h.tab, `setTheme("dark")`)
		a.waitFor("the redraw in the dark theme's ink", pixel+` !== `+fmt.Sprintf("%q", before))
		browsertest.Eval[any](t, h.tab, `setTheme("light")`)
	})
}

// Issue 28, careless habits under an MCP Apps host: alert() shows its
// message in the app, and a link with target=_blank is handed to the host
// to open (ui/open-link), as under snuggen serve (hostkit's
// TestCarelessHabitsWork).
func TestCarelessHabitsInAnMCPAppsHost(t *testing.T) {
	names := []string{"alert", "blanklink"}
	var files []string
	for _, n := range names {
		files = append(files, filepath.Join("..", "testdata", "corpus", "careless", n+".html"))
	}
	h := openMCPHostOf(t, names, files...)
	t.Run("alert", func(t *testing.T) {
		a := h.show("alert")
		a.t = t
		a.fill("#n", "Ada")
		a.click("#save")
		a.waitFor("the alert's notice", `[...document.querySelectorAll('snug-notice')].some(n => n.textContent.startsWith('Saved Ada'))`)
	})
	t.Run("blanklink", func(t *testing.T) {
		a := h.show("blanklink")
		a.t = t
		before := len(h.opened())
		a.click("a")
		browsertest.Until(t, "the host asked to open the link", func() bool { return len(h.opened()) > before })
		if got := h.opened(); got[len(got)-1] != "https://example.com/help" {
			t.Fatalf("the host was asked to open %q", got)
		}
	})
}
