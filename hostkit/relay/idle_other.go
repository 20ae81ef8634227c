//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package relay

// peekReadable is nil where there is no MSG_PEEK: the read loop parks in
// the library's Read.
var peekReadable func(fd uintptr) bool

// writeNow is nil where there is no non-blocking write of our own: a
// writer goroutine writes every message.
var writeNow func(fd uintptr, b []byte) (int, error)
