//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package relay

import "syscall"

// peekReadable reports whether a read of fd would not block: it looks at one
// byte without taking it (MSG_PEEK on a non-blocking socket).
var peekReadable = func(fd uintptr) bool {
	var b [1]byte
	_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK)
	return err != syscall.EAGAIN
}
