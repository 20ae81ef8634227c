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

	"github.com/snuggen/snuggen/internal/turncanary"
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

// namesUnder is the TLS server names seen, each without suffix, sorted:
// the paths a test named its hosts after.
func (c *canary) namesUnder(suffix string) []string {
	var out []string
	for n := range c.sniNames() {
		out = append(out, strings.TrimSuffix(n, suffix))
	}
	sort.Strings(out)
	return out
}

func (c *canary) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// hits returns the connections accepted and the request lines received.
func (c *canary) hits() (int64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns.Load(), append([]string(nil), c.paths...)
}

// turnCanary is the loopback TURN canary of internal/turncanary: a
// WebRTC client that runs puts its TURN username on the wire there.
type turnCanary struct{ *turncanary.Canary }

func newTURNCanary(t *testing.T) *turnCanary { return &turnCanary{turncanary.New(t)} }

func (c *turnCanary) port() int { return c.Port() }

// leaks returns the usernames the canary received, sorted, and the
// datagram count.
func (c *turnCanary) leaks() ([]string, int64) { return c.Leaks() }
