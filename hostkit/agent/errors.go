package agent

import (
	"encoding/json"
	"sync"
	"unicode/utf8"

	"github.com/snuggen/snuggen/hostkit/frame"
	"github.com/snuggen/snuggen/schemas"
)

// newError is frame.NewError with the message cut to the error object's
// maxLength, so a long reason (a schema compiler's report) still makes a
// valid frame.
func newError(code, message string) *frame.Error {
	if n := maxMessage(); n > 0 {
		message = truncate(message, n)
	}
	return frame.NewError(code, message)
}

// maxMessage is the error schema's message maxLength (the file rules.json
// names under "errorSchema"), 0 when it cannot be read.
var maxMessage = sync.OnceValue(func() int {
	var rules struct {
		ErrorSchema string `json:"errorSchema"`
	}
	var schema struct {
		Properties struct {
			Message struct {
				MaxLength int `json:"maxLength"`
			} `json:"message"`
		} `json:"properties"`
	}
	raw, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil || json.Unmarshal(raw, &rules) != nil {
		return 0
	}
	raw, err = schemas.FS.ReadFile(rules.ErrorSchema)
	if err != nil || json.Unmarshal(raw, &schema) != nil {
		return 0
	}
	return schema.Properties.Message.MaxLength
})

// truncate returns s cut to at most n code points, ending in "…" when cut.
func truncate(s string, n int) string {
	count := 0
	for i := range s {
		if count == n-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		count++
	}
	return s
}
