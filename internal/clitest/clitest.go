// Package clitest runs snuggen's own verbs in the test's process, as a user
// would run them, for tests of other packages that need a live server.
package clitest

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/cli"
)

// StartMCP runs `snuggen mcp ARGS…` (which must serve over --http) in this
// process and returns the endpoint it prints; the server stops when the
// test ends, as after Ctrl-C, and the test fails if it exits with an error
// or does not stop within 15 s.
func StartMCP(t testing.TB, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		code := cli.MainContext(ctx, append([]string{"mcp"}, args...), strings.NewReader(""), pw, &stderr)
		pw.Close()
		done <- code
	}()
	lines := bufio.NewScanner(pr)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "mcp ") {
		cancel()
		t.Fatalf("snuggen mcp did not start: %q\n%s", lines.Text(), stderr.String())
	}
	endpoint := strings.TrimPrefix(lines.Text(), "mcp ")
	go func() { // drains stdout until the server closes it
		for lines.Scan() {
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("snuggen mcp exited %d:\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("snuggen mcp did not stop")
		}
	})
	return endpoint
}

// lockedBuffer is a bytes.Buffer safe for one writer and one reader.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
