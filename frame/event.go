package frame

import (
	"encoding/json"

	"github.com/snuggen/snuggen/internal/jsonscan"
	"github.com/snuggen/snuggen/internal/violation"
)

// EventData is the data of a known event as the event table (rules.json
// events) describes it: *ResizeData, *HintData, … (generated, one struct
// per event, every field required).
type EventData interface {
	decode(d *jsonscan.Decoder, c *violation.Collector)
	validate(c *violation.Collector)
}

// ParseEventData reads the data of a known event with the generated
// decoders: keys case-sensitively and once each, every field of the table
// required, of its type and within its limits; other keys are ignored (the
// additive channel). Absent data reads as {}. It returns (nil, nil) for an
// event the table does not know, and a *RejectError of the carrying frame's
// type whose violations point under /data otherwise.
func ParseEventData(event string, data json.RawMessage) (EventData, error) {
	v, carrier := newEventData(event)
	if v == nil {
		return nil, nil
	}
	s := string(data)
	if len(data) == 0 {
		s = "{}"
	}
	var d jsonscan.Decoder
	d.Reset(s)
	var c violation.Collector
	if beginObject(&d, &c, "data") {
		v.decode(&d, &c)
		end(&c, "data")
	}
	rule := ""
	switch {
	case !d.End():
		rule = RuleFrameJSON
	case d.Dup:
		rule = RuleFrameDuplicateKey
	}
	if rule != "" {
		code, msg := frameRule(rule)
		return nil, &RejectError{Code: code, Type: carrier, Violations: []Violation{{Path: "/data", Rule: rule, Message: msg}}}
	}
	if c.Len() == 0 {
		c.Push("data")
		v.validate(&c)
		c.Pop()
	}
	if c.Len() > 0 {
		return nil, &RejectError{Code: CodeMalformed, Type: carrier, Violations: c.List()}
	}
	return v, nil
}
