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

// envelopeSchemaFile is the chat envelope's schema inside schemas.FS.
const envelopeSchemaFile = "chat-envelope.schema.json"

var envelopeSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	src, err := schemas.FS.ReadFile(envelopeSchemaFile)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.LoadURL = func(u string) (io.ReadCloser, error) {
		return nil, fmt.Errorf("refusing to load %q", u)
	}
	url := "snug:///" + envelopeSchemaFile
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
