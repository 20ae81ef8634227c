package relay

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// corkConn lets the writer send a whole drain of the outbound queue in one
// syscall: coder/websocket flushes every message on its own, and a round
// trip with the inspector on is three messages. While corked, writes are
// kept (in order) and go out together on uncork; every write holds mu, so a
// control frame written meanwhile by the library cannot land between the
// bytes of a kept frame.
type corkConn struct {
	net.Conn
	mu     sync.Mutex
	corked bool
	buf    []byte
}

// corkMax is how much is kept before writing through anyway.
const corkMax = 256 << 10

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked && len(c.buf)+len(p) <= corkMax {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	if err := c.flushLocked(); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
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

func (c *corkConn) flushLocked() error {
	if len(c.buf) == 0 {
		return nil
	}
	c.Conn.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, err := c.Conn.Write(c.buf)
	c.Conn.SetWriteDeadline(time.Time{})
	if cap(c.buf) > corkMax*2 {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// corkWriter hands the WebSocket library a hijacked connection wrapped in a
// corkConn.
type corkWriter struct {
	http.ResponseWriter
	cc *corkConn
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
	w.cc = &corkConn{Conn: conn}
	return w.cc, bufio.NewReadWriter(brw.Reader, bufio.NewWriterSize(w.cc, 4096)), nil
}
