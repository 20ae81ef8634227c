package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/internal/jsonscan"
)

// Check holds a host-event the host is about to send to the event table
// (frame.EventSpecs, R7): its event is one of the host→app events there, and
// its data is an object with exactly that event's fields, each of its type
// and within its limits. A hint therefore carries a topic and a reference
// and nothing else; a hand-built one with any other member (content) is
// refused, as is an event the table does not know (a v1 app ignores it, and
// nothing says which of its fields would be references). Every builder's
// event passes. Keys are read case-sensitively, and a key twice is refused.
func Check(ev *frame.HostEvent) error {
	if ev == nil {
		return errors.New("events: no host-event")
	}
	spec, ok := hostSpec(ev.Event)
	if !ok {
		return fmt.Errorf("events: host-event %q is not in the event table: a host sends only %s, each built by this package (R7)", ev.Event, strings.Join(frame.HostEvents, ", "))
	}
	names := make([]string, len(spec.Data))
	for i, f := range spec.Data {
		names[i] = f.Name
	}
	want := "{" + strings.Join(names, ", ") + "}"
	if len(ev.Data) == 0 {
		if len(spec.Data) == 0 {
			return nil
		}
		return fmt.Errorf("events: %s without data: want %s", ev.Event, want)
	}
	var d jsonscan.Decoder
	d.Reset(string(ev.Data))
	if !d.BeginObject() {
		return fmt.Errorf("events: %s data is not a JSON object: want %s", ev.Event, want)
	}
	seen := make(map[string]bool, len(spec.Data))
	for first := true; d.ObjMore(first); first = false {
		k, ok := d.Key()
		if !ok {
			break
		}
		i := slices.IndexFunc(spec.Data, func(f frame.EventField) bool { return f.Name == k })
		if i < 0 {
			return fmt.Errorf("events: %s data.%s is not a field of the event: it carries %s and nothing more (R7: a reference, never content)", ev.Event, k, want)
		}
		if seen[k] {
			return fmt.Errorf("events: %s data.%s appears twice", ev.Event, k)
		}
		seen[k] = true
		if err := checkValue(ev.Event, spec.Data[i], &d); err != nil {
			return err
		}
	}
	if !d.End() {
		return fmt.Errorf("events: %s data is not valid JSON: %v", ev.Event, d.Err)
	}
	for _, f := range spec.Data {
		if !seen[f.Name] {
			return fmt.Errorf("events: %s data lacks %s: want %s", ev.Event, f.Name, want)
		}
	}
	return nil
}

// hostSpec returns the table's entry for a host→app event.
func hostSpec(event string) (frame.EventSpec, bool) {
	if !slices.Contains(frame.HostEvents, event) {
		return frame.EventSpec{}, false
	}
	for _, e := range frame.EventSpecs {
		if e.Name == event {
			return e, true
		}
	}
	return frame.EventSpec{}, false
}

// checkValue reads the value of field f and holds it to f's spec.
func checkValue(event string, f frame.EventField, d *jsonscan.Decoder) error {
	switch f.Type {
	case "string":
		s, ok := d.String()
		if !ok {
			return fmt.Errorf("events: %s data.%s is not a string", event, f.Name)
		}
		return check(event, f.Name, s)
	case "boolean":
		if _, ok := d.Bool(); !ok {
			return fmt.Errorf("events: %s data.%s is not a boolean", event, f.Name)
		}
	case "integer":
		v, isInt, isNum := d.Int()
		if !isNum || !isInt || (f.Minimum != nil && v < *f.Minimum) || (f.Maximum != nil && v > *f.Maximum) {
			return fmt.Errorf("events: %s data.%s: want an integer within %s", event, f.Name, bounds(f))
		}
	case "object":
		raw, ok := d.Skip()
		if !ok || !strings.HasPrefix(raw, "{") {
			return fmt.Errorf("events: %s data.%s is not an object", event, f.Name)
		}
		if event == frame.EventThemeChange && f.Name == "theme" {
			return checkTheme(raw)
		}
		return fmt.Errorf("events: %s data.%s: an object this package has no check for", event, f.Name)
	default:
		return fmt.Errorf("events: %s data.%s has type %q in the event table, which this package cannot check", event, f.Name, f.Type)
	}
	return nil
}

// checkTheme holds a theme-change's theme to host-ready's theme, as the
// runtime does before it applies one (the generated parser reads it in a
// host-ready built around it), and its tokens to ThemeToken.
func checkTheme(raw string) error {
	base, err := frame.Marshal(&frame.HostReady{InstanceID: "i", ProtocolVersions: frame.ProtocolVersions, Theme: frame.Theme{Mode: frame.ModeLight}})
	if err != nil {
		return fmt.Errorf("events: theme-change: %w", err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(base, &members); err != nil {
		return fmt.Errorf("events: theme-change: %w", err)
	}
	members["theme"] = json.RawMessage(raw)
	hr, err := json.Marshal(members)
	if err != nil {
		return fmt.Errorf("events: theme-change data.theme: %w", err)
	}
	f, err := frame.Parse(hr)
	if err != nil {
		var rej *frame.RejectError
		if errors.As(err, &rej) {
			var parts []string
			for _, v := range rej.Violations {
				parts = append(parts, "data"+v.String())
			}
			return fmt.Errorf("events: theme-change: %s", strings.Join(parts, "; "))
		}
		return fmt.Errorf("events: theme-change data.theme: %w", err)
	}
	return checkTokens(f.(*frame.HostReady).Theme.Tokens)
}
