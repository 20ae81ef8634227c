//go:build !unix

package store

import "errors"

// canProtect: off unix the driver's engine memory is not a reservation the
// store can protect; a statement stuck inside one call runs to its end (the
// soft interrupt still stops it between VM steps). docs/security.md records
// this residual.
const canProtect = false

func protect([]byte) error {
	return errors.New("store: the hard stop is not available on this platform")
}
