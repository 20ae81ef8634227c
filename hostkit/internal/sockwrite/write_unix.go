//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package sockwrite

import "syscall"

// writeNow writes what of b the socket takes at once (a write on a
// non-blocking socket): n bytes, and EAGAIN is no error.
var writeNow = func(fd uintptr, b []byte) (int, error) {
	written := 0
	for len(b) > 0 {
		n, err := syscall.Write(int(fd), b)
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return written, nil
		}
		if err != nil {
			return written, err
		}
		if n <= 0 {
			break
		}
		written += n
		b = b[n:]
	}
	return written, nil
}
