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
// process and returns the endpoint it prints first; the server stops when
// the test ends, as after Ctrl-C, and the test fails if it exits with an
// error or does not stop within 15 s.
func StartMCP(t testing.TB, args ...string) string {
	t.Helper()
	lines := startMCP(t, args)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "mcp ") {
		t.Fatalf("snuggen mcp did not start: %q", lines.Text())
	}
	endpoint := strings.TrimPrefix(lines.Text(), "mcp ")
	go drain(lines)
	return endpoint
}

// StartMCPApps is StartMCP for a server of the apps keys: it returns each
// app's endpoint, read from the "mcp <url>" line above the app's
// "app <key> <tool>" line.
func StartMCPApps(t testing.TB, keys []string, args ...string) map[string]string {
	t.Helper()
	lines := startMCP(t, args)
	out := map[string]string{}
	endpoint := ""
	for len(out) < len(keys) && lines.Scan() {
		f := strings.Fields(lines.Text())
		switch {
		case len(f) == 2 && f[0] == "mcp":
			endpoint = f[1]
		case len(f) >= 2 && f[0] == "app" && endpoint != "":
			out[f[1]] = endpoint
		}
	}
	for _, k := range keys {
		if out[k] == "" {
			t.Fatalf("snuggen mcp printed no endpoint for app %s (got %v)", k, out)
		}
	}
	go drain(lines)
	return out
}

// drain reads stdout until the server closes it.
func drain(lines *bufio.Scanner) {
	for lines.Scan() {
	}
}

// startMCP runs snuggen mcp and returns its stdout's lines.
func startMCP(t testing.TB, args []string) *bufio.Scanner {
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
	return bufio.NewScanner(pr)
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
