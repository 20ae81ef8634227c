package relay

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// corkConn lets the writer send a whole drain of the outbound queue in one
// syscall: coder/websocket flushes every message on its own, and a round
// trip with the inspector on is three messages. While corked, writes are
// kept (in order) and go out together on uncork; every write holds mu, so a
// control frame written meanwhile by the library cannot land between the
// bytes of a kept frame. Every write to the socket is bounded by
// writeTimeout (the connection's write deadline).
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    *[]byte // the kept bytes while corked; from corkBufs, nil when idle
	// rc is Conn's descriptor for tryUncork's write that does not wait; nil
	// when there is none (then every batch goes through a writer goroutine).
	rc syscall.RawConn
	// now is tryUncork's call under rc, made once (a closure made per
	// write would be allocated, with the variables it sets, per answer);
	// nowBuf, nowN and nowErr are its argument and results, used under mu.
	now    func(fd uintptr) bool
	nowBuf []byte
	nowN   int
	nowErr error
	// closeSeen says a write that may be the library's close frame went
	// through (see keepText).
	closeSeen bool
}

// newCorkConn wraps nc.
func newCorkConn(nc net.Conn) *corkConn {
	c := &corkConn{Conn: nc}
	if sc, ok := nc.(syscall.Conn); ok && writeNow != nil {
		if rc, err := sc.SyscallConn(); err == nil {
			c.rc = rc
			c.now = c.writeNow
		}
	}
	return c
}

// corkMax is how much is kept before writing through anyway.
const corkMax = 256 << 10

// corkBufs holds the buffers of drains in progress: an idle connection keeps
// none.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) > 0 && p[0] == 0x88 {
		// A close frame's first byte (FIN, opcode 8): the library writes
		// every control frame whole, in one Write, since one fits in its
		// buffer (writeBufSize). A payload chunk of a library-written
		// message may start with that byte too: then keepText merely
		// leaves the rest of the connection's messages to the library.
		c.closeSeen = true
	}
	if c.corked && (c.buf == nil || len(*c.buf)+len(p) <= corkMax) {
		if c.buf == nil {
			c.buf = corkBufs.Get().(*[]byte)
		}
		*c.buf = append(*c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.writeLocked(p)
}

func (c *corkConn) writeLocked(p []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	n, err := c.Conn.Write(p)
	c.Conn.SetWriteDeadline(time.Time{})
	return n, err
}

// keepText keeps msg as one WebSocket text message, its frame (header and
// payload, unmasked as a server's) built here in the bytes the library
// would write for it, instead of going through the library's Write (its two
// locks, its buffer and the Writes it makes of it). false: nothing kept,
// the caller writes msg through the library instead; so when not corked,
// when the cork would pass corkMax (the library then writes through), and
// once a close frame may have gone out, after which the library refuses
// messages (RFC 6455 5.5.1) and so must keepText.
func (c *corkConn) keepText(msg []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.headerLocked(len(msg))
	if ok {
		*c.buf = append(b, msg...)
	}
	return ok
}

// keepFrame is keepText of appendFrameMessage(slot, raw), spliced straight
// into the cork instead of into a message buffer first.
func (c *corkConn) keepFrame(slot string, raw []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.headerLocked(frameMessageLen(slot, raw))
	if ok {
		*c.buf = appendFrameMessage(b, slot, raw)
	}
	return ok
}

// headerLocked returns the cork's bytes with the header of an n-byte text
// message appended, for the caller to append the message to; false as
// keepText's.
func (c *corkConn) headerLocked(n int) ([]byte, bool) {
	if !c.corked || c.closeSeen || c.buf != nil && len(*c.buf)+wsHeaderMax+n > corkMax {
		return nil, false
	}
	if c.buf == nil {
		c.buf = corkBufs.Get().(*[]byte)
	}
	b := *c.buf
	switch {
	case n <= 125:
		return append(b, 0x81, byte(n)), true
	case n <= 0xffff:
		return append(b, 0x81, 126, byte(n>>8), byte(n)), true
	default:
		return binary.BigEndian.AppendUint64(append(b, 0x81, 127), uint64(n)), true
	}
}

func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork writes what was kept, within writeTimeout.
func (c *corkConn) uncork() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	return c.flushLocked()
}

// tryUncork is uncork for a goroutine that must not wait on the socket:
// it writes what the socket takes at once. rest says bytes are left: they
// stay kept, still corked and in order before any later write, for a
// writer goroutine's uncork (which bounds them by writeTimeout).
func (c *corkConn) tryUncork() (rest bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		c.corked = false
		return false, nil
	}
	bp := c.buf
	b := *bp
	c.nowBuf = b
	err = c.rc.Write(c.now)
	n, werr := c.nowN, c.nowErr
	c.nowBuf, c.nowErr = nil, nil
	if err != nil {
		return false, err
	}
	if werr != nil {
		return false, werr
	}
	if n < len(b) {
		*bp = b[:copy(b, b[n:])]
		return true, nil
	}
	c.corked = false
	c.buf = nil
	if cap(b) <= corkMax*2 {
		*bp = b[:0]
		corkBufs.Put(bp)
	}
	return false, nil
}

// writeNow is tryUncork's write under rc: what of nowBuf the socket takes
// at once. It never waits for the poller.
func (c *corkConn) writeNow(fd uintptr) bool {
	c.nowN, c.nowErr = writeNow(fd, c.nowBuf)
	return true
}

// discard uncorks dropping what was kept (the connection is ending).
func (c *corkConn) discard() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	c.buf = nil
}

func (c *corkConn) flushLocked() error {
	if c.buf == nil {
		return nil
	}
	b := c.buf
	c.buf = nil
	_, err := c.writeLocked(*b)
	if cap(*b) <= corkMax*2 {
		*b = (*b)[:0]
		corkBufs.Put(b)
	}
	return err
}

// The buffers the WebSocket library reads and writes through. Reads: a
// kvGet is some 150 bytes, and a message larger than the buffer is read
// into its own memory directly. Writes: every message goes into the cork,
// so this only gathers a frame's header and payload.
const (
	readBufSize  = 512
	writeBufSize = 128
)

// corkWriter hands the WebSocket library a hijacked connection wrapped in a
// corkConn, with buffers of its own instead of net/http's (8 KiB that an
// idle connection would hold for its life).
type corkWriter struct {
	http.ResponseWriter
	cc *corkConn
	br *bufio.Reader // the reader handed to the library
}

func (w *corkWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	hj, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("relay: the server cannot hijack connections")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The 101 response may still sit in net/http's buffer: send it first.
	if err := brw.Writer.Flush(); err != nil {
		conn.Close()
		return nil, nil, err
	}
	w.cc = newCorkConn(conn)
	// Whatever the page sent right after its handshake may be in net/http's
	// reader already: it goes into ours, where the library looks for it.
	br := bufio.NewReaderSize(conn, readBufSize)
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn), max(readBufSize, n))
		if _, err := br.Peek(n); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	w.br = br
	return w.cc, bufio.NewReadWriter(br, bufio.NewWriterSize(w.cc, writeBufSize)), nil
}
