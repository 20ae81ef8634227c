package hostkit_test

import (
	"net"
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
	done     chan struct{}
}

func newCanary(t *testing.T) *canary {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &canary{ln: ln, done: make(chan struct{})}
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
	buf := make([]byte, 4096)
	n, _ := conn.Read(buf)
	if n == 0 {
		return // a bare connect (a preconnect): nothing was sent
	}
	c.requests.Add(1)
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	c.mu.Lock()
	c.paths = append(c.paths, line)
	c.mu.Unlock()
	_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: 6\r\nConnection: close\r\n\r\ncanary"))
}

func (c *canary) port() int { return c.ln.Addr().(*net.TCPAddr).Port }

// hits returns the connections accepted and the request lines received.
func (c *canary) hits() (int64, []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conns.Load(), append([]string(nil), c.paths...)
}
