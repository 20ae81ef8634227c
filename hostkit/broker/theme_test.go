package broker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/events"
)

// A host built on the broker alone (no relay in front to filter the page's
// theme) cannot hand its apps a token outside the documented set or a value
// that leaves the custom property or makes a request: UpdateTheme refuses
// such a theme and changes nothing, and Broadcast refuses a hand-built
// theme-change carrying one. The documented tokens with plain values pass.
func TestUpdateThemeHoldsTokensToTheRelaysCheck(t *testing.T) {
	b := broker.New(broker.Options{})
	p := &logPort{}
	s, err := b.Open("a", p)
	if err != nil {
		t.Fatal(err)
	}
	s.Load()
	good := frame.Theme{Mode: frame.ModeDark, Tokens: map[string]string{"--snug-accent": "#5b9bff", "--snug-font": `15px/1.4 system-ui, "Segoe UI", sans-serif`}}
	if err := b.UpdateTheme(good); err != nil {
		t.Fatalf("UpdateTheme(documented tokens, plain values) = %v", err)
	}
	for _, bad := range []map[string]string{
		{"color": "red"},
		{"--other": "#000"},
		{"--snug-background": "url(https://tracker.example/x)"},
		{"--snug-background": "IMAGE-SET(\"https://tracker.example/x\" 1x)"},
		{"--snug-text": "red; background: url(x)"},
		{"--snug-border": "#fff}"},
		{"--snug-surface": ""},
		{"--snug-muted": "red\n"},
		{"--snug-radius": strings.Repeat("1", 201)},
	} {
		if err := b.UpdateTheme(frame.Theme{Mode: frame.ModeLight, Tokens: bad}); err == nil {
			t.Errorf("UpdateTheme(%q) = nil, want refused", bad)
		}
		ev := &frame.HostEvent{Event: frame.EventThemeChange, Data: []byte(`{"theme":{"mode":"light","tokens":` + mustJSON(bad) + `}}`)}
		if err := b.Broadcast(ev); err == nil {
			t.Errorf("Broadcast(theme-change %q) = nil, want refused", bad)
		}
		if _, err := events.Theme(frame.Theme{Mode: frame.ModeLight, Tokens: bad}); err == nil {
			t.Errorf("events.Theme(%q) = nil, want refused", bad)
		}
	}
	if got := b.CurrentTheme(); got.Mode != frame.ModeDark || len(got.Tokens) != 2 {
		t.Errorf("after refused themes the theme is %+v, want the good one kept", got)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var changes int
	for _, f := range p.frames {
		if f.Type == frame.TypeHostEvent {
			changes++
		}
	}
	if changes != 1 {
		t.Errorf("%d theme-change events reached the app, want 1 (the good theme only)", changes)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
