package relay

import (
	"bufio"
	"net"
	"sync"
	"syscall"
)

// idleWait parks a connection's read loop shallowly while the page sends
// nothing. Parked inside the WebSocket library's Read, the loop's goroutine
// sits some fifteen frames deep, and a collection cannot shrink a stack
// whose parked frames use a quarter of it or more: each idle page kept an
// 8 KiB stack for its life. Waiting for the socket to become readable
// directly under serve instead, the stack shrinks (halved by each
// collection) to the 2 KiB minimum; the next message grows it again while
// it is handled.
type idleWait struct {
	// mu keeps the check of br from racing with the library's own reads of
	// it outside serve's Read: the closing handshake (conn.write's Close).
	mu   sync.Mutex
	br   *bufio.Reader
	rc   syscall.RawConn
	peek func(fd uintptr) bool
	// ready is w.readable as a func made once (a method value made per
	// wait would be an allocation per message); woken is its state.
	ready func(fd uintptr) bool
	woken bool
}

// newIdleWait returns the wait for a connection whose bytes the library
// reads through br from nc; nil (no wait) when nc has no file descriptor to
// wait on (a TLS connection, a pipe) or the platform has no peek.
func newIdleWait(nc net.Conn, br *bufio.Reader) *idleWait {
	sc, ok := nc.(syscall.Conn)
	if !ok || br == nil || peekReadable == nil {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	w := &idleWait{br: br, rc: rc, peek: peekReadable}
	w.ready = w.readable
	return w
}

// readable is RawConn.Read's test for wait. Its first call looks (peek):
// bytes already there, or that arrived before the read began, are seen
// there, since the poller forgets readiness at the start of every read.
// Any later call follows the poller's wake-up for this socket, which only
// bytes, their end or an error give: the library's Read goes to read them
// without a second look (a syscall per message). Should a wake-up ever
// find nothing, that Read just waits in the library as it would without
// this wait: nothing is lost, only the stack's shrinking.
func (w *idleWait) readable(fd uintptr) bool {
	if w.woken {
		return true
	}
	w.woken = true
	return w.peek(fd)
}

// wait returns once the library's next Read can make progress without
// waiting: bytes are buffered, or the socket has some (or its end, or an
// error, which Read then reports). It returns at once when the socket is
// closed.
func (w *idleWait) wait() {
	if w == nil {
		return
	}
	w.mu.Lock()
	buffered := w.br.Buffered()
	w.mu.Unlock()
	if buffered > 0 {
		return
	}
	w.woken = false
	_ = w.rc.Read(w.ready) // false: EAGAIN, wait for the poller; true: go read
}

// closing runs f (a Close with its closing handshake, which reads br) while
// wait cannot look at br.
func (w *idleWait) closing(f func()) {
	if w == nil {
		f()
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	f()
}
