// Package events builds the host-events a host sends (theme-change,
// visibility, connection-event, hint) and reads the app-events it receives
// (resize). Every builder constructs each field itself from typed arguments
// and copies nothing from elsewhere (R7): host-event frames carry no
// instanceId and ride the ordinary size class, so a hint is a doorbell — a
// topic and a reference the app answers with its own governed reads — never
// content.
//
// Its limit: it builds and checks frames; sending them is the broker's
// (Session.Event, Broker.Broadcast).
package events

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/snuggen/snuggen/hostkit/frame"
)

// ThemeChange builds a theme-change event for mode "light" or "dark".
func ThemeChange(mode string) (*frame.HostEvent, error) {
	if mode != "light" && mode != "dark" {
		return nil, fmt.Errorf("events: theme mode %q: want light or dark", mode)
	}
	return build(frame.EventThemeChange, struct {
		Theme struct {
			Mode string `json:"mode"`
		} `json:"theme"`
	}{Theme: struct {
		Mode string `json:"mode"`
	}{mode}})
}

// Visibility builds a visibility event.
func Visibility(visible bool) (*frame.HostEvent, error) {
	return build(frame.EventVisibility, struct {
		Visible bool `json:"visible"`
	}{visible})
}

// Connection states.
const (
	Connected = "connected"
	Revoked   = "revoked"
)

// Connection builds a connection-event: the operator's connection name and
// its state (Connected or Revoked). It never carries a secret: only the name.
func Connection(name, state string) (*frame.HostEvent, error) {
	if state != Connected && state != Revoked {
		return nil, fmt.Errorf("events: connection state %q: want connected or revoked", state)
	}
	if name == "" {
		return nil, fmt.Errorf("events: connection name is empty")
	}
	return build(frame.EventConnection, struct {
		Connection string `json:"connection"`
		State      string `json:"state"`
	}{name, state})
}

// Hint builds a hint: a topic (1–frame.MaxHintTopic code points) and a
// reference (1–frame.MaxHintRef) the app resolves with its own reads.
func Hint(topic, ref string) (*frame.HostEvent, error) {
	if err := length("hint topic", topic, frame.MaxHintTopic); err != nil {
		return nil, err
	}
	if err := length("hint ref", ref, frame.MaxHintRef); err != nil {
		return nil, err
	}
	return build(frame.EventHint, struct {
		Topic string `json:"topic"`
		Ref   string `json:"ref"`
	}{topic, ref})
}

func length(what, s string, max int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("events: %s is not valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n < 1 || n > max {
		return fmt.Errorf("events: %s has %d code points: want 1 to %d", what, n, max)
	}
	return nil
}

func build(event string, data any) (*frame.HostEvent, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("events: %s: %w", event, err)
	}
	return &frame.HostEvent{Event: event, Data: raw}, nil
}

// ResizeHeight reads a resize app-event's height: an integer from 0 to
// frame.MaxResizeHeight.
func ResizeHeight(e *frame.AppEvent) (int, error) {
	if e.Event != frame.EventResize {
		return 0, fmt.Errorf("events: %s is not a resize event", e.Event)
	}
	var d struct {
		Height *json.Number `json:"height"`
	}
	if len(e.Data) == 0 {
		return 0, fmt.Errorf("events: resize without data.height")
	}
	if err := json.Unmarshal(e.Data, &d); err != nil || d.Height == nil {
		return 0, fmt.Errorf("events: resize: data.height missing or not a number")
	}
	h, err := d.Height.Int64()
	if err != nil || h < 0 || h > frame.MaxResizeHeight {
		return 0, fmt.Errorf("events: resize: data.height %s: want an integer from 0 to %d", d.Height.String(), frame.MaxResizeHeight)
	}
	return int(h), nil
}
