package agent

import (
	"context"
	"encoding/json"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// SetBackoff replaces b's thread-conflict backoff wait, so a test sees each
// delay the bridge asks for and decides when (or whether) it ends.
func SetBackoff(b *Bridge, f func(ctx context.Context, d time.Duration) error) { b.backoff = f }

// Wait is the backoff wait a Bridge uses: d, or until ctx ends.
var Wait = wait

// StripDecoded is StripCredentials through encoding/json's tokens alone,
// without the pass that returns a value with nothing to change as it is.
func StripDecoded(raw json.RawMessage) (json.RawMessage, error) {
	return stripDecoded(raw, frame.IsStripHeader)
}
