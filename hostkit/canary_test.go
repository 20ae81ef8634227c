package hostkit_test

import (
	"encoding/binary"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// canary is a loopback TCP server that counts every connection it accepts
// and answers HTTP on it. Every *-canary.test name resolves to it in the
// test browser (testenv.ChromiumFlags), so any request, prefetch or
// preconnect that leaves the sandbox shows up here.
type canary struct {
	ln       net.Listener
	conns    atomic.Int64 // TCP connections accepted
	requests atomic.Int64 // connections that sent at least one byte
	mu       sync.Mutex
	paths    []string
	names    map[string]int // TLS ClientHello server names, and Host headers
	bytes    atomic.Int64   // bytes received on all connections
	done     chan struct{}
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln, names: map[string]int{}, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.conns.Add(1)
			go c.answer(conn)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-c.done })
	return c
}

func (c *canary) answer(conn net.Conn) {
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	buf := make([]byte, 16384)
	n, _ := conn.Read(buf)
	if n == 0 {
		return // a bare connect: nothing was sent
	}
	c.bytes.Add(int64(n))
	c.requests.Add(1)
	if sni, ok := clientHelloSNI(buf[:n]); ok {
		// A TLS ClientHello (a preconnect, or a navigation upgraded to
		// https): the name the app chose is in it. No handshake follows.
		c.mu.Lock()
		c.names[sni]++
		c.paths = append(c.paths, "TLS "+sni)
		c.mu.Unlock()
		return
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	c.mu.Lock()
	c.paths = append(c.paths, line)
	c.mu.Unlock()
	_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: 6\r\nConnection: close\r\n\r\ncanary"))
}

// clientHelloSNI returns the server name of a TLS ClientHello at the start
// of b (ok is true for any ClientHello, with or without one).
func clientHelloSNI(b []byte) (string, bool) {
	// Record header (5), handshake header (4), version (2), random (32).
	if len(b) < 43 || b[0] != 22 || b[5] != 1 {
		return "", false
	}
	p := 43
	skip := func(lenBytes int) bool {
		if p+lenBytes > len(b) {
			return false
		}
		l := 0
		for i := 0; i < lenBytes; i++ {
			l = l<<8 | int(b[p+i])
		}
		p += lenBytes + l
		return p <= len(b)
	}
	if !skip(1) || !skip(2) || !skip(1) { // session id, cipher suites, compression
		return "", true
	}
	if p+2 > len(b) {
		return "", true
	}
	end := p + 2 + int(binary.BigEndian.Uint16(b[p:]))
	p += 2
	for p+4 <= len(b) && p+4 <= end {
		typ, l := binary.BigEndian.Uint16(b[p:]), int(binary.BigEndian.Uint16(b[p+2:]))
		p += 4
		if typ == 0 && p+5 <= len(b) { // server_name: list length, type, name length
			nl := int(binary.BigEndian.Uint16(b[p+3:]))
			if p+5+nl <= len(b) {
				return string(b[p+5 : p+5+nl]), true
			}
		}
		p += l
	}
	return "", true
}

// sniNames returns the server names the canary's ClientHellos carried.
func (c *canary) sniNames() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.names))
	for k, v := range c.names {
		out[k] = v
	}
	return out
}

func (c *canary) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// hits returns the connections accepted and the request lines received.
func (c *canary) hits() (int64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns.Load(), append([]string(nil), c.paths...)
}

// turnCanary is a loopback UDP server that speaks just enough STUN/TURN to
// make a WebRTC client put its TURN username on the wire: it answers an
// Allocate request without credentials with 401 (a realm and a nonce), so
// the client sends the Allocate again with USERNAME. It counts every
// datagram and records every USERNAME it sees.
type turnCanary struct {
	pc        net.PacketConn
	datagrams atomic.Int64
	mu        sync.Mutex
	usernames map[string]int
	done      chan struct{}
}

const stunCookie = 0x2112A442

func newTURNCanary(t *testing.T) *turnCanary {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &turnCanary{pc: pc, usernames: map[string]int{}, done: make(chan struct{})}
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

func (c *turnCanary) port() int { return c.pc.LocalAddr().(*net.UDPAddr).Port }

func (c *turnCanary) handle(b []byte, from net.Addr) {
	if len(b) < 20 || binary.BigEndian.Uint32(b[4:8]) != stunCookie {
		return
	}
	typ := binary.BigEndian.Uint16(b[0:2])
	user := ""
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
	if user != "" {
		c.mu.Lock()
		c.usernames[user]++
		c.mu.Unlock()
	}
	if typ != 0x0003 || user != "" {
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

// leaks returns the usernames the canary received, sorted, and the
// datagram count.
func (c *turnCanary) leaks() ([]string, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for u := range c.usernames {
		out = append(out, u)
	}
	sort.Strings(out)
	return out, c.datagrams.Load()
}
