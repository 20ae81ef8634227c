package hostkit_test

import (
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// linkServer is a real TLS server on loopback that counts the connections
// made to it.
func linkServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the browser refuses the test certificate
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// Issue 26 item 8: every link the browser would follow goes to open-url,
// not only HTML <a href>. A click on an SVG <a xlink:href> (the chart
// idiom), an SVG <a href>, an image map's <area> and a link inside an open
// or a closed shadow root each raises the host's open-url dialog with the
// link's URL, and the frame stays the app. Each link points at its own TLS server on
// loopback, which sees no connection at all: not even the preconnect
// Chromium makes for an HTML <a> or <area> on the press of the pointer (the
// address is held out of its href; TestLinkPressAndHoverConnectNowhere).
// (Before, the SVG link replaced the app with an error page, and each HTML
// link's server saw a connection per click.)
func TestEveryLinkOpensThroughTheHost(t *testing.T) {
	doc := string(readTestdata(t, "idiom-svg-links.html"))
	cases := []struct{ sel, name string }{
		{"#xlink-bar", "xlink"},    // inside <a xlink:href>
		{"#svghref-label", "href"}, // inside an SVG <a href>
		{"#mapimg", "area"},        // the <area> covering the image
		{"#card", "shadow"},        // the link of a shadow root
		{"#closed", "closed"},      // the link of a closed shadow root
		{"#dsd", "dsd"},            // a link script wrote into a closed declarative root
		{"#plain", "plain"},        // an HTML <a href>
	}
	servers := map[string]*httptest.Server{}
	conns := map[string]*atomic.Int64{}
	for _, c := range cases {
		servers[c.name], conns[c.name] = linkServer(t)
		doc = strings.ReplaceAll(doc, "URL_"+strings.ToUpper(c.name), servers[c.name].URL)
	}
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("svg-links", []byte(doc))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "svg-links")
	frame := runner.Frame(0)
	browsertest.WaitFor(t, frame, "the handshake and the component", `snug.ready.then(() => !!document.getElementById("card").shadowRoot && window.dsdWritten === true)`)

	for _, c := range cases {
		want := servers[c.name].URL + "/" + c.name
		clickIn(t, frame, c.sel)
		d := runner.Confirm()
		if d.Kind != "open-url" || d.URL != want {
			t.Fatalf("click on %s: the dialog shows %+v, want open-url of %s", c.sel, d, want)
		}
		runner.Answer("deny")
		live(t, runner, frame)
		n := conns[c.name].Load()
		if n != 0 {
			t.Errorf("click on %s: its server saw %d connections before the user answered", c.sel, n)
		}
		t.Logf("%s: routed to open-url, declined; %d connections to its server", c.name, n)
	}
}
