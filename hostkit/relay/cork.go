package relay

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/snuggen/snuggen/hostkit/internal/sockwrite"
)

// corkConn lets the writer send a whole drain of the outbound queue in one
// write: coder/websocket flushes every message on its own, and a round
// trip with the inspector on is three messages. While corked, whatever the
// library writes (its messages and any control frame it writes meanwhile)
// is kept in order and goes out together on uncork: the bytes pass through
// as the library wrote them, never read or made here. Every write to the
// socket is bounded by writeTimeout (the connection's write deadline).
type corkConn struct {
	net.Conn
	// pr is where the library's reads go (its reader is reset to read
	// this connection): the page's bytes, and what a wait kept of them.
	pr *pageReader

	// now writes without waiting for tryUncork; nil when the connection
	// has no such write (then every batch goes through a writer goroutine).
	now *sockwrite.Writer

	mu     sync.Mutex
	corked bool
	buf    *[]byte // the kept bytes while corked; from corkBufs, nil when idle
}

// corkMax is how much is kept before writing through anyway.
const corkMax = 256 << 10

// corkBufs holds the buffers of drains in progress: an idle connection keeps
// none.
var corkBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

func (c *corkConn) Read(p []byte) (int, error) { return c.pr.Read(p) }

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
// it writes what the socket takes at once (sockwrite). rest says bytes are
// left: they stay kept, still corked and in order before any later write,
// for a writer goroutine's uncork (which bounds them by writeTimeout).
func (c *corkConn) tryUncork() (rest bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.buf == nil {
		c.corked = false
		return false, nil
	}
	b := *c.buf
	n, err := c.now.Write(b)
	if err != nil {
		return false, err
	}
	if n < len(b) {
		*c.buf = b[:copy(b, b[n:])]
		return true, nil
	}
	c.corked = false
	c.putBuf()
	return false, nil
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
	_, err := c.writeLocked(*c.buf)
	c.putBuf()
	return err
}

// putBuf gives the cork's buffer back, its bytes written.
func (c *corkConn) putBuf() {
	b := c.buf
	c.buf = nil
	if cap(*b) <= corkMax*2 {
		*b = (*b)[:0]
		corkBufs.Put(b)
	}
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
// corkConn to write to and a pageReader to read from, with buffers of its
// own instead of net/http's (8 KiB that an idle connection would hold for
// its life).
type corkWriter struct {
	http.ResponseWriter
	cc *corkConn
	pr *pageReader
	br *bufio.Reader // the reader handed to the library, over pr
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
	// Whatever the page sent right after its handshake may be in net/http's
	// reader already: it goes first into ours, where the library looks.
	w.pr = newPageReader(conn, brw.Reader)
	w.cc = &corkConn{Conn: conn, pr: w.pr, now: sockwrite.New(conn)}
	w.br = bufio.NewReaderSize(w.pr, readBufSize)
	w.pr.br = w.br
	return w.cc, bufio.NewReadWriter(w.br, bufio.NewWriterSize(w.cc, writeBufSize)), nil
}
