package relay

import (
	"bufio"
	"bytes"
	"net"
	"sync"
)

// pageReader is what the WebSocket library reads the page's bytes from (the
// connection, through the library's bufio.Reader), and where the read loop
// waits while the page sends nothing. Parked inside the library's Read, the
// loop's goroutine sits some fifteen frames deep, and a collection cannot
// shrink a stack whose parked frames use a quarter of it or more: each idle
// page kept an 8 KiB stack for its life. Waiting in wait instead, directly
// under serve, the stack shrinks (halved by each collection) to the 2 KiB
// minimum; the next message grows it again while it is handled. The wait
// reads what has come of the next message with the connection's own Read
// and keeps it for the library, which reads it first (so a message costs no
// more reads than the library's own).
type pageReader struct {
	// mu orders the reads of conn: the library's own reads outside the
	// read loop (the closing handshake of Close) wait for a wait's read,
	// then get its byte first.
	mu    sync.Mutex
	conn  net.Conn
	early []byte  // read from conn, not yet handed to the library
	buf   *[]byte // early's buffer when a wait read it, from waitBufs
	err   error   // conn's error, once a wait met it

	// bmu keeps wait's look at br from racing with the library's reads of
	// br outside the read loop (see closing).
	bmu sync.Mutex
	br  *bufio.Reader // the library's reader over this one; set by newConn
}

// waitBufs holds the buffers a wait reads into: a kvGet's message fits
// in one.
var waitBufs = sync.Pool{New: func() any { b := make([]byte, readBufSize); return &b }}

// newPageReader returns the reader of conn whose first bytes are what
// net/http's reader had buffered past the handshake.
func newPageReader(conn net.Conn, hr *bufio.Reader) *pageReader {
	r := &pageReader{conn: conn}
	if n := hr.Buffered(); n > 0 {
		early, _ := hr.Peek(n)
		r.early = bytes.Clone(early)
	}
	return r
}

// Read hands out the kept bytes first, then reads conn.
func (r *pageReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.early) > 0 {
		n := copy(p, r.early)
		r.early = r.early[n:]
		if len(r.early) == 0 {
			r.early = nil
			if r.buf != nil {
				waitBufs.Put(r.buf)
				r.buf = nil
			}
		}
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	return r.conn.Read(p)
}

// wait returns once the library's next Read can make progress without
// waiting: bytes are buffered, here or in br, or the connection has ended
// (which Read then reports).
func (r *pageReader) wait() {
	r.bmu.Lock()
	buffered := r.br != nil && r.br.Buffered() > 0
	r.bmu.Unlock()
	if buffered {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.early) > 0 || r.err != nil {
		return
	}
	bp := waitBufs.Get().(*[]byte)
	n, err := r.conn.Read(*bp)
	if n > 0 {
		r.early, r.buf = (*bp)[:n], bp
	} else {
		waitBufs.Put(bp)
	}
	if err != nil {
		r.err = err
	}
}

// closing runs f (a Close with its closing handshake, which reads br)
// while wait cannot look at br.
func (r *pageReader) closing(f func()) {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	f()
}
