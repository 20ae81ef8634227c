// Package sockwrite writes to a socket what it takes at once, without
// waiting for it to take more: the one write in hostkit made below the net
// package's API. It exists for the relay, which answers a page on the
// goroutine that made the answer (a broker port must not block) instead of
// waking a writer goroutine, a thread wake-up that costs more on two cores
// than the rest of a kvGet's round trip; net.Conn has no write that does
// not wait, and a short write deadline arms a timer whose wake-up of the
// poller costs as much (docs/decisions.md, "Relay writes").
//
// The write goes through the connection's syscall.RawConn, so the net
// poller keeps owning the descriptor: the callback never asks it to wait.
package sockwrite

import (
	"net"
	"syscall"
)

// Writer writes to one connection without waiting. It is not safe for
// concurrent use (the relay calls it under its cork's mutex).
type Writer struct {
	rc syscall.RawConn
	// write is w.do made once (a method value made per call would be an
	// allocation per answer); buf, n and err are its argument and results.
	write func(fd uintptr) bool
	buf   []byte
	n     int
	err   error
}

// New returns the Writer of c, or nil when c has no descriptor it can
// write without waiting (a TLS connection, a pipe) or the platform has no
// such write: the caller then writes through c and its deadlines.
func New(c net.Conn) *Writer {
	sc, ok := c.(syscall.Conn)
	if !ok || writeNow == nil {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &Writer{rc: rc}
	w.write = w.do
	return w
}

// Write writes what of b the socket takes at once and returns how much
// that was; a socket that takes nothing more is no error (n < len(b)).
func (w *Writer) Write(b []byte) (n int, err error) {
	w.buf = b
	err = w.rc.Write(w.write)
	n, werr := w.n, w.err
	w.buf, w.n, w.err = nil, 0, nil
	if err != nil {
		return n, err
	}
	return n, werr
}

func (w *Writer) do(fd uintptr) bool {
	w.n, w.err = writeNow(fd, w.buf)
	return true // never wait for the poller
}
