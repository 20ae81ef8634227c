// Package turncanary is a loopback UDP server for browser tests that speaks
// just enough STUN/TURN to make a WebRTC client put its TURN username on
// the wire: it answers an Allocate request without credentials with 401 (a
// realm and a nonce), so the client sends the Allocate again with
// USERNAME. It counts every datagram and records, per source address, every
// USERNAME it sees; a test that expects nothing asserts zero, and one that
// expects a leak waits for the username it chose.
package turncanary

import (
	"encoding/binary"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
)

// Canary is a TURN canary on a loopback UDP port.
type Canary struct {
	pc        net.PacketConn
	datagrams atomic.Int64
	mu        sync.Mutex
	usernames map[string]int
	sources   map[string]map[string]bool // source address -> usernames it sent
	done      chan struct{}
}

const stunCookie = 0x2112A442

// New starts a canary on 127.0.0.1 (an OS-chosen port) that stops when the
// test ends.
func New(t testing.TB) *Canary {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &Canary{pc: pc, usernames: map[string]int{}, sources: map[string]map[string]bool{}, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		buf := make([]byte, 2048)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c.datagrams.Add(1)
			c.handle(buf[:n], from)
		}
	}()
	t.Cleanup(func() { pc.Close(); <-c.done })
	return c
}

// Port is the canary's UDP port on 127.0.0.1.
func (c *Canary) Port() int { return c.pc.LocalAddr().(*net.UDPAddr).Port }

func (c *Canary) handle(b []byte, from net.Addr) {
	user := ""
	stun := len(b) >= 20 && binary.BigEndian.Uint32(b[4:8]) == stunCookie
	if stun {
		for p := 20; p+4 <= len(b); {
			at, l := binary.BigEndian.Uint16(b[p:]), int(binary.BigEndian.Uint16(b[p+2:]))
			if p+4+l > len(b) {
				break
			}
			if at == 0x0006 {
				user = string(b[p+4 : p+4+l])
			}
			p += 4 + (l+3)&^3
		}
	}
	c.mu.Lock()
	src := c.sources[from.String()]
	if src == nil {
		src = map[string]bool{}
		c.sources[from.String()] = src
	}
	if user != "" {
		c.usernames[user]++
		src[user] = true
	}
	c.mu.Unlock()
	if !stun || binary.BigEndian.Uint16(b[0:2]) != 0x0003 || user != "" {
		return
	}
	// 401 Unauthorized with a realm and a nonce: the client retries with
	// its credentials.
	attr := func(t uint16, v []byte) []byte {
		out := binary.BigEndian.AppendUint16(nil, t)
		out = binary.BigEndian.AppendUint16(out, uint16(len(v)))
		out = append(out, v...)
		for len(out)%4 != 0 {
			out = append(out, 0)
		}
		return out
	}
	var body []byte
	body = append(body, attr(0x0009, append([]byte{0, 0, 4, 1}, "Unauthorized"...))...)
	body = append(body, attr(0x0014, []byte("snug-canary"))...)
	body = append(body, attr(0x0015, []byte("nonce-0123456789"))...)
	msg := binary.BigEndian.AppendUint16(nil, 0x0113)
	msg = binary.BigEndian.AppendUint16(msg, uint16(len(body)))
	msg = append(msg, b[4:20]...) // cookie and transaction id
	msg = append(msg, body...)
	_, _ = c.pc.WriteTo(msg, from)
}

// Leaks returns the usernames the canary received, sorted, and the
// datagram count.
func (c *Canary) Leaks() ([]string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for u := range c.usernames {
		out = append(out, u)
	}
	sort.Strings(out)
	return out, c.datagrams.Load()
}

// OnlyFrom reports whether everything the canary received came from
// clients that sent username: every source address seen has sent it, and
// no other username arrived. A test that expects an app to send nothing
// has a client it trusts send username after the app's attempts (each
// refused at once) and waits until OnlyFrom(username) holds: then the
// canary was listening, and every datagram it got by the time the trusted
// one's arrived was the trusted client's (the canary answers each source's
// first Allocate, so every socket a client uses sends its username).
func (c *Canary) OnlyFrom(username string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.sources) == 0 {
		return false
	}
	for _, users := range c.sources {
		if !users[username] {
			return false
		}
	}
	for u := range c.usernames {
		if u != username {
			return false
		}
	}
	return true
}

// Sources returns how many source addresses sent datagrams.
func (c *Canary) Sources() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sources)
}
