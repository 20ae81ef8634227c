package relay

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
)

// TestKeepTextWritesTheLibrarysBytes: a message the cork frames itself
// (keepText, keepFrame) goes on the wire in the very bytes the WebSocket library
// writes for it, at every length class of the header (7-bit, 16-bit,
// 64-bit), and arrives whole at a client; once a close frame may have gone
// out, keepText declines and leaves the message to the library.
func TestKeepTextWritesTheLibrarysBytes(t *testing.T) {
	sizes := []int{0, 1, 125, 126, 127, 200, 0xffff, 0x10000, corkMax + 1}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		cw := &corkWriter{ResponseWriter: w}
		ws, err := websocket.Accept(cw, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer ws.CloseNow()
		cc := cw.cc
		for _, n := range sizes {
			msg := bytes.Repeat([]byte{'a' + byte(n%26)}, n)
			cc.cork()
			if err := ws.Write(context.Background(), websocket.MessageText, msg); err != nil {
				t.Error(err)
				return
			}
			lib := bytes.Clone(*cc.buf)
			cc.discard()
			cc.cork()
			if !cc.keepText(msg) {
				t.Errorf("keepText declined a %d-byte message on a fresh cork", n)
				return
			}
			if !bytes.Equal(*cc.buf, lib) {
				t.Errorf("%d bytes: keepText kept % x…, the library writes % x…", n, (*cc.buf)[:min(12, len(*cc.buf))], lib[:min(12, len(lib))])
			}
			if err := cc.uncork(); err != nil {
				t.Error(err)
				return
			}
		}
		// A frame message spliced straight into the cork is the same
		// message framed the same way.
		for _, n := range sizes {
			raw := bytes.Repeat([]byte{'f'}, n)
			cc.cork()
			cc.keepText(appendFrameMessage(nil, "s0", raw))
			text := bytes.Clone(*cc.buf)
			cc.discard()
			cc.cork()
			if !cc.keepFrame("s0", raw) || !bytes.Equal(*cc.buf, text) {
				t.Errorf("keepFrame of a %d-byte frame differs from keepText of its message", n)
			}
			cc.discard()
		}
		// What the library writes for a close frame (its first byte) stops
		// keepText for the rest of the connection.
		cc.cork()
		if _, err := cc.Write([]byte{0x88, 0x02, 0x03, 0xe8}); err != nil {
			t.Error(err)
		}
		if cc.keepText([]byte("after close")) {
			t.Error("keepText kept a message after a close frame")
		}
		cc.discard()
	}))
	defer srv.Close()
	ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	ws.SetReadLimit(-1)
	for _, n := range sizes {
		typ, data, err := ws.Read(context.Background())
		if err != nil {
			t.Fatalf("reading the %d-byte message: %v", n, err)
		}
		if typ != websocket.MessageText || len(data) != n || n > 0 && data[0] != 'a'+byte(n%26) {
			t.Fatalf("got a %v message of %d bytes, want text of %d", typ, len(data), n)
		}
	}
	<-done
}

// BenchmarkKeepFrame: an answer's frame message into the cork, encoded into
// the writer's buffer and copied (keepText) against spliced in place
// (keepFrame), the two in one process.
func BenchmarkKeepFrame(b *testing.B) {
	raw := []byte(`{"v":1,"type":"snug:db-response","requestId":"k12345","instanceId":"0123456789abcdef0123456789abcdef","ok":true,"result":{"value":{"theme":"dark","size":14}}}`)
	it := qitem{msg: raw, framed: true, slot: "s0"}
	cc := &corkConn{}
	b.Run("keepText", func(b *testing.B) {
		var enc entryEncoder
		for b.Loop() {
			cc.cork()
			cc.keepText(enc.message(&it))
			enc.release()
			cc.discardKeep()
		}
	})
	b.Run("keepFrame", func(b *testing.B) {
		for b.Loop() {
			cc.cork()
			cc.keepFrame(it.slot, it.msg)
			cc.discardKeep()
		}
	})
}

// discardKeep is discard giving the buffer back to the pool, as a write of
// it would.
func (c *corkConn) discardKeep() {
	bp := c.buf
	c.discard()
	*bp = (*bp)[:0]
	corkBufs.Put(bp)
}
