package frame

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestParseEventData(t *testing.T) {
	for _, c := range []struct {
		event, data string
		want        EventData
	}{
		{EventResize, `{"height":480}`, &ResizeData{Height: 480}},
		{EventResize, `{"HEIGHT":1,"height":2,"extra":{"x":[1]}}`, &ResizeData{Height: 2}},
		{EventHint, `{"topic":"inbox","ref":"m/1"}`, &HintData{Topic: "inbox", Ref: "m/1"}},
		{EventVisibility, `{"visible":false}`, &VisibilityData{Visible: false}},
		{EventConnection, `{"connection":"github","state":"revoked"}`, &ConnectionData{Connection: "github", State: "revoked"}},
		{EventThemeChange, `{"theme":{"mode":"dark"}}`, &ThemeChangeData{Theme: json.RawMessage(`{"mode":"dark"}`)}},
		{"scroll", `{"y":1}`, nil},
	} {
		got, err := ParseEventData(c.event, json.RawMessage(c.data))
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s: %#v, %v; want %#v", c.event, c.data, got, err, c.want)
		}
	}
	for _, c := range []struct{ event, data, path, rule string }{
		{EventResize, ``, "/data/height", RuleSchemaRequired},
		{EventResize, `{"Height":1}`, "/data/height", RuleSchemaRequired},
		{EventResize, `{"height":-1}`, "/data/height", RuleSchemaMinimum},
		{EventResize, `{"height":1e400}`, "/data/height", RuleSchemaType},
		{EventResize, `{"height":1,"height":2}`, "/data", RuleFrameDuplicateKey},
		{EventResize, `[1]`, "/data", RuleSchemaType},
		{EventResize, `{"height":`, "/data", RuleFrameJSON},
		{EventHint, `{"topic":"","ref":"r"}`, "/data/topic", RuleSchemaMinLength},
		{EventConnection, `{"connection":"c","state":"gone"}`, "/data/state", RuleSchemaEnum},
		{EventThemeChange, `{"theme":"dark"}`, "/data/theme", RuleSchemaType},
	} {
		_, err := ParseEventData(c.event, json.RawMessage(c.data))
		var re *RejectError
		if !errors.As(err, &re) || len(re.Violations) == 0 || re.Violations[0].Path != c.path || re.Violations[0].Rule != c.rule || re.HasRequestID {
			t.Errorf("%s %s: %v, want %s at %s", c.event, c.data, err, c.rule, c.path)
		}
	}
}
