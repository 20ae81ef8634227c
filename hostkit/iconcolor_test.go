package hostkit_test

import (
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// iconApp is an app page whose snug:icon-color is color.
func iconApp(id, color string) []byte {
	return []byte(`<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="` + id + `"><meta name="snug:display-name" content="` + id + `">
<meta name="snug:icon-color" content="` + color + `"></head><body><p>` + id + `</p></body></html>`)
}

// Issue 31 item 3: an app cannot style the runner. Icon colours that are
// no colour (a var() whose fallback is an outside url() or a gradient) are
// dropped by the host and by the page, which sets background-color only:
// in Chromium no icon of the runner (the app list, the running app's head)
// has a background image (the url() the runner would have tried to load, a
// gradient), and a real colour still shows.
func TestIconColorIsAColour(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(
		hostkit.RawApp("outside", iconApp("outside", "var(--x,url(https://e.example))")),
		hostkit.RawApp("gradient", iconApp("gradient", "var(--a,conic-gradient(red,tan))")),
		hostkit.RawApp("green", iconApp("green", "#2e7d32")),
	))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	runner := browsertest.OpenRunner(t, h.URL(), "outside")
	runner.WaitFor("the app list", `document.querySelectorAll('.app-button .icon').length === 3`)
	type icon struct{ App, Image, Color, Style string }
	icons := browsertest.Eval[[]icon](t, runner.Tab, `[...document.querySelectorAll('.icon')].map(e => ({
		app: e.closest('[data-app]')?.dataset.app || e.closest('article')?.dataset.app || 'head',
		image: getComputedStyle(e).backgroundImage, color: getComputedStyle(e).backgroundColor, style: e.getAttribute('style') || ''}))`)
	if len(icons) < 4 {
		t.Fatalf("found %d icons, want the three of the list and the running app's", len(icons))
	}
	green := false
	for _, i := range icons {
		if i.Image != "none" || strings.Contains(i.Style, "url(") || strings.Contains(i.Style, "gradient") || strings.Contains(i.Style, "var(") {
			t.Errorf("icon of %s: background-image %q, style %q: an app styled the runner", i.App, i.Image, i.Style)
		}
		if i.App == "green" && i.Color == "rgb(46, 125, 50)" {
			green = true
		}
	}
	if !green {
		t.Errorf("the green app's icon colour did not show: %+v", icons)
	}
}
