package relay_test

import (
	"encoding/json"
	"testing"

	"github.com/snuggen/snuggen/frame"
)

// The page's theme reaches the apps with the documented tokens only, and
// only plain values: a name outside the set, or a value that could leave
// the custom property or make a request (url(), a ;, a }), is dropped.
// The page's locale is carried by the host-ready of the instances it
// mounts after it; a tag that is no BCP 47 tag is ignored.
func TestThemeTokensAndLocaleFromThePage(t *testing.T) {
	p := dialPage(t)
	p.send(`{"t":"locale","locale":"de-CH"}`)
	p.send(`{"t":"theme","mode":"dark","tokens":{"--snug-accent":"#5b9bff","--snug-font":"15px/1.4 system-ui, \"Segoe UI\", sans-serif",
		"--snug-background":"url(https://tracker.example/x)","--snug-text":"red; background: url(x)","--snug-border":"#fff}","--other":"#000","color":"red",
		"--snug-surface":""}}`)
	p.mountLoad("s1")
	fs := p.framesUntilReady("s1")
	hr := fs[len(fs)-1].f.(*frame.HostReady)
	want := map[string]string{"--snug-accent": "#5b9bff", "--snug-font": `15px/1.4 system-ui, "Segoe UI", sans-serif`}
	got, _ := json.Marshal(hr.Theme.Tokens)
	wantJSON, _ := json.Marshal(want)
	if hr.Theme.Mode != frame.ModeDark || string(got) != string(wantJSON) {
		t.Errorf("host-ready theme = %s %s, want dark %s", hr.Theme.Mode, got, wantJSON)
	}
	if hr.Locale == nil || *hr.Locale != "de-CH" {
		t.Errorf("host-ready locale = %v, want de-CH", hr.Locale)
	}

	// A later theme reaches the live instance as theme-change with its tokens.
	p.send(`{"t":"theme","mode":"light","tokens":{"--snug-accent":"#2f6feb"}}`)
	for _, g := range p.settle() {
		if ev, ok := g.f.(*frame.HostEvent); ok && g.slot == "s1" && ev.Event == frame.EventThemeChange {
			if string(ev.Data) != `{"theme":{"mode":"light","tokens":{"--snug-accent":"#2f6feb"}}}` {
				t.Errorf("theme-change data %s", ev.Data)
			}
			goto locale
		}
	}
	t.Error("no theme-change reached the live instance")
locale:
	for _, bad := range []string{"", "x", "de_CH", "en-", "a-b-c-d-e-f-g-h-i-j-k-l-m-n-o-p-q-r", "<script>"} {
		b, _ := json.Marshal(bad)
		p.send(`{"t":"locale","locale":` + string(b) + `}`)
	}
	p.mountLoad("s2")
	fs = p.framesUntilReady("s2")
	if hr := fs[len(fs)-1].f.(*frame.HostReady); hr.Locale == nil || *hr.Locale != "de-CH" {
		t.Errorf("after invalid tags the locale is %v, want de-CH kept", hr.Locale)
	}
}
