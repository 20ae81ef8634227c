//go:build unix

package store

import "golang.org/x/sys/unix"

// canProtect: the driver reserves each engine's memory with mmap here, so
// the hard stop can make it inaccessible.
const canProtect = true

// protect makes mem inaccessible: the engine using it faults at its next
// access.
func protect(mem []byte) error { return unix.Mprotect(mem, unix.PROT_NONE) }
