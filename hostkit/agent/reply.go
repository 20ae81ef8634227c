package agent

import "encoding/json"

// ReplyError is why a reply yielded no data; the Bridge answers it with
// PARSE_FAILED carrying RawExcerpt.
type ReplyError struct {
	Reason     string // "no JSON object in the reply", "data does not match responseSchema: ..."
	RawExcerpt string // the reply's first frame.MaxRawExcerpt code points
}

func (e *ReplyError) Error() string { return "agent reply: " + e.Reason }

// ParseReply extracts the reply's JSON object with graduated tolerance: the
// whole text, then each fenced code block, then each balanced {...} span,
// taking the first candidate that parses as an object and satisfies schema
// (a JSON Schema, nil for none). A reply that is null, an array or a scalar is
// rejected. Failures are *ReplyError; a schema that does not compile is a
// *SchemaError.
func ParseReply(text string, schema json.RawMessage) (json.RawMessage, error) {
	panic("unfinished")
}

// SchemaError means a responseSchema is not a usable JSON Schema (it does not
// compile, or refers to anything outside itself).
type SchemaError struct{ Err error }

func (e *SchemaError) Error() string { return "responseSchema: " + e.Err.Error() }
func (e *SchemaError) Unwrap() error { return e.Err }
