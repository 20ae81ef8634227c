//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package sockwrite

// writeNow is nil where there is no write of this package's own: New
// returns nil.
var writeNow func(fd uintptr, b []byte) (int, error)
