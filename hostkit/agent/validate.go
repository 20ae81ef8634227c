package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v5"

	"github.com/snuggen/snuggen/schemas"
)

// envelopeSchema is the chat envelope's schema, the file rules.json names
// under "envelopeSchema".
var envelopeSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	rules, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil {
		return nil, err
	}
	var r struct {
		EnvelopeSchema string `json:"envelopeSchema"`
	}
	if err := json.Unmarshal(rules, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", schemas.RulesFile, err)
	}
	if r.EnvelopeSchema == "" {
		return nil, fmt.Errorf("%s: no envelopeSchema", schemas.RulesFile)
	}
	src, err := schemas.FS.ReadFile(r.EnvelopeSchema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("refusing to load %q", u)
	}
	url := "snug:///" + r.EnvelopeSchema
	if err := c.AddResource(url, bytes.NewReader(src)); err != nil {
		return nil, err
	}
	return c.Compile(url)
})

// validateEnvelope checks raw against the chat envelope's schema from
// schemas/ (required members, string lengths, payload an object, …).
func validateEnvelope(raw []byte) error {
	sch, err := envelopeSchema()
	if err != nil {
		return fmt.Errorf("agent: chat envelope schema: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	return sch.Validate(v)
}
