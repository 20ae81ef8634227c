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
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// ThemeChange builds a theme-change event for mode frame.ModeLight or
// frame.ModeDark.
func ThemeChange(mode string) (*frame.HostEvent, error) {
	return Theme(frame.Theme{Mode: mode})
}

// Theme builds a theme-change event carrying the whole theme: its mode and
// its CSS custom-property tokens, each of the documented set
// (frame.ThemeTokens) with a plain value (ThemeToken); a theme with any
// other token is refused.
func Theme(t frame.Theme) (*frame.HostEvent, error) {
	if t.Mode != frame.ModeLight && t.Mode != frame.ModeDark {
		return nil, fmt.Errorf("events: theme mode %q: want light or dark", t.Mode)
	}
	if err := checkTokens(t.Tokens); err != nil {
		return nil, err
	}
	return build(frame.EventThemeChange, struct {
		Theme frame.Theme `json:"theme"`
	}{t})
}

// Visibility builds a visibility event.
func Visibility(visible bool) (*frame.HostEvent, error) {
	return build(frame.EventVisibility, struct {
		Visible bool `json:"visible"`
	}{visible})
}

// Connection builds a connection-event: the operator's connection name and
// its state ("connected" or "revoked", frame.EventSpecs). It never carries a
// secret: only the name.
func Connection(name, state string) (*frame.HostEvent, error) {
	if err := check(frame.EventConnection, "connection", name); err != nil {
		return nil, err
	}
	if err := check(frame.EventConnection, "state", state); err != nil {
		return nil, err
	}
	return build(frame.EventConnection, struct {
		Connection string `json:"connection"`
		State      string `json:"state"`
	}{name, state})
}

// Hint builds a hint: a topic and a reference the app resolves with its own
// reads, each within its limits in frame.EventSpecs (topic 1–64, ref 1–256
// code points in v1).
func Hint(topic, ref string) (*frame.HostEvent, error) {
	if err := check(frame.EventHint, "topic", topic); err != nil {
		return nil, err
	}
	if err := check(frame.EventHint, "ref", ref); err != nil {
		return nil, err
	}
	return build(frame.EventHint, struct {
		Topic string `json:"topic"`
		Ref   string `json:"ref"`
	}{topic, ref})
}

// field returns the spec of a known event's data field.
func field(event, name string) (frame.EventField, bool) {
	for _, e := range frame.EventSpecs {
		if e.Name != event {
			continue
		}
		for _, f := range e.Data {
			if f.Name == name {
				return f, true
			}
		}
	}
	return frame.EventField{}, false
}

// check holds a string field to its spec: UTF-8, length in code points, enum.
func check(event, name, s string) error {
	f, ok := field(event, name)
	if !ok {
		return fmt.Errorf("events: %s has no field %s", event, name)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("events: %s %s is not valid UTF-8", event, name)
	}
	n := utf8.RuneCountInString(s)
	if n < f.MinLength || (f.MaxLength > 0 && n > f.MaxLength) {
		return fmt.Errorf("events: %s %s has %d code points: want %d to %d", event, name, n, f.MinLength, f.MaxLength)
	}
	if len(f.Enum) > 0 && !slices.Contains(f.Enum, s) {
		return fmt.Errorf("events: %s %s %q: want one of %s", event, name, s, strings.Join(f.Enum, ", "))
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

// ResizeHeight reads a resize app-event's height with the generated
// decoding (frame.ParseEventData): data.height exactly (keys are
// case-sensitive, a key twice is refused, other keys are ignored), an
// integer as JSON.parse reads it, within the bounds of frame.EventSpecs
// (0–100 000 in v1).
func ResizeHeight(e *frame.AppEvent) (int, error) {
	if e.Event != frame.EventResize {
		return 0, fmt.Errorf("events: %s is not a resize event", e.Event)
	}
	d, err := frame.ParseEventData(e.Event, e.Data)
	if err != nil {
		return 0, fmt.Errorf("events: resize: %w", err)
	}
	return d.(*frame.ResizeData).Height, nil
}

func bounds(f frame.EventField) string {
	lo, hi := "-inf", "+inf"
	if f.Minimum != nil {
		lo = strconv.FormatInt(*f.Minimum, 10)
	}
	if f.Maximum != nil {
		hi = strconv.FormatInt(*f.Maximum, 10)
	}
	return "[" + lo + ", " + hi + "]"
}
