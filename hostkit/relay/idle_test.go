package relay_test

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawPage is a page speaking WebSocket by hand, so that a test decides
// how its messages fall into TCP segments.
type rawPage struct {
	c  net.Conn
	br *bufio.Reader
}

func dialRawPage(t *testing.T, addr, origin string) *rawPage {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second)) // a hung test fails instead of hanging
	fmt.Fprintf(c, "GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr, origin)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return &rawPage{c: c, br: br}
}

// frames encodes messages as masked text frames (mask key zero) back to back.
func frames(msgs ...string) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(out, 0x81)
		switch n := len(m); {
		case n < 126:
			out = append(out, 0x80|byte(n))
		default:
			out = append(out, 0x80|126, byte(n>>8), byte(n))
		}
		out = append(out, 0, 0, 0, 0)
		out = append(out, m...)
	}
	return out
}

// next reads the host's next text message (the host does not mask).
func (p *rawPage) next(t *testing.T) string {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(p.br, h[:]); err != nil {
		t.Fatalf("reading a message: %v", err)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		io.ReadFull(p.br, l[:])
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		io.ReadFull(p.br, l[:])
		n = binary.BigEndian.Uint64(l[:])
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(p.br, b); err != nil {
		t.Fatalf("reading a message: %v", err)
	}
	return string(b)
}

// The read loop waits for the socket while the page is quiet (idle.go):
// messages that arrive together, more than the relay's read buffer holds,
// are each answered, none left waiting in the socket for a next segment
// that never comes.
func TestMessagesArrivingTogetherAreAllAnswered(t *testing.T) {
	addr, origin := serve(t)
	p := dialRawPage(t, addr, origin)
	p.c.Write(frames(`{"t":"mount","slot":"s","app":"x"}`, `{"t":"load","slot":"s"}`))
	var inst string
	for inst == "" {
		m := p.next(t)
		if !strings.Contains(m, "snug:host-ready") {
			continue
		}
		var hr struct {
			Frame struct {
				InstanceID string `json:"instanceId"`
			} `json:"frame"`
		}
		if err := json.Unmarshal([]byte(m), &hr); err != nil {
			t.Fatal(err)
		}
		inst = hr.Frame.InstanceID
	}
	kvGet := func(rid string) string {
		return fmt.Sprintf(`{"t":"frame","slot":"s","frame":{"v":1,"type":"snug:db-request","requestId":%q,"instanceId":%q,"op":"kvGet","key":"k"}}`, rid, inst)
	}
	const n = 40 // some 7 KB in one write: many times the read buffer
	var msgs []string
	for i := range n {
		msgs = append(msgs, kvGet(fmt.Sprintf("k%d", i)))
	}
	all := frames(msgs...)
	if len(all) < 4096 {
		t.Fatalf("the batch is only %d bytes", len(all))
	}
	if _, err := p.c.Write(all); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < n {
		m := p.next(t)
		if !strings.Contains(m, "snug:db-response") {
			continue
		}
		var r struct {
			Frame struct {
				RequestID string `json:"requestId"`
			} `json:"frame"`
		}
		if err := json.Unmarshal([]byte(m), &r); err != nil {
			t.Fatal(err)
		}
		seen[r.Frame.RequestID] = true
	}
	// And the page, quiet again, is still heard.
	p.c.Write(frames(kvGet("again")))
	for {
		if m := p.next(t); strings.Contains(m, `"again"`) && strings.Contains(m, "snug:db-response") {
			break
		}
	}
}

// A page's first messages may arrive in the handshake's own segment, read
// by net/http with the request: they are still the first the relay reads
// (pageReader), and answered.
func TestMessagesSentWithTheHandshakeAreRead(t *testing.T) {
	addr, origin := serve(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(30 * time.Second))
	hs := fmt.Sprintf("GET /ws HTTP/1.1\r\nHost: %s\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n", addr, origin)
	if _, err := c.Write(append([]byte(hs), frames(`{"t":"mount","slot":"s","app":"x"}`, `{"t":"load","slot":"s"}`)...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	p := &rawPage{c: c, br: br}
	for !strings.Contains(p.next(t), "snug:host-ready") {
	}
}
