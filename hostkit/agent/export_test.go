package agent

import (
	"context"
	"time"
)

// SetBackoff replaces b's thread-conflict backoff wait, so a test sees each
// delay the bridge asks for and decides when (or whether) it ends.
func SetBackoff(b *Bridge, f func(ctx context.Context, d time.Duration) error) { b.backoff = f }

// Wait is the backoff wait a Bridge uses: d, or until ctx ends.
var Wait = wait
