// Package pgtest starts a throwaway PostgreSQL cluster for a test: initdb
// in a temporary directory, one server on a free loopback port, removed
// when the test ends. As root (CI runs as root, and initdb refuses it) the
// server runs as the unprivileged user nobody. PostgreSQL comes from
// testenv.PostgresBin: missing, the test skips, or fails when CI is set.
//
// Its limit: the cluster trades durability for speed (fsync off); it is for
// tests of the code that talks to it, not of PostgreSQL.
package pgtest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/snuggen/snuggen/internal/testenv"
)

// nobody is the uid and gid the server runs as under root.
const nobody = 65534

// Server is a running throwaway cluster.
type Server struct {
	URL  string // postgres://snug@127.0.0.1:<port>/postgres?sslmode=disable
	cmd  *exec.Cmd
	logs *syncBuffer
	done chan struct{} // closed when the process exited; err is Wait's
	err  error
}

// Start initialises and starts a cluster; it is stopped and removed by
// t.Cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := testenv.PostgresBin(t)
	root := os.Geteuid() == 0
	base := ""
	if root {
		// nobody must reach the directory: /tmp, whatever TMPDIR says.
		base = "/tmp"
	}
	dir, err := os.MkdirTemp(base, "snug-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if root {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	var out bytes.Buffer
	initdb := asNobody(root, filepath.Join(bin, "initdb"), "-D", data, "-U", "snug", "--auth=trust", "-E", "UTF8", "--no-sync", "--no-instructions")
	initdb.Stdout, initdb.Stderr = &out, &out
	if err := initdb.Run(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out.String())
	}
	var s *Server
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		logs := &syncBuffer{}
		cmd := asNobody(root, filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
			"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
			"-c", "max_connections=200", "-c", "shared_buffers=32MB")
		cmd.Stdout, cmd.Stderr = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatalf("pgtest: start postgres: %v", err)
		}
		s = &Server{URL: fmt.Sprintf("postgres://snug@127.0.0.1:%d/postgres?sslmode=disable", port), cmd: cmd, logs: logs, done: make(chan struct{})}
		go func(s *Server) { s.err = s.cmd.Wait(); close(s.done) }(s)
		if err := s.waitReady(30 * time.Second); err == nil {
			break
		} else if attempt == 2 {
			s.stop()
			t.Fatalf("pgtest: postgres did not start: %v\n%s", err, logs.String())
		}
		s.stop() // the port was taken between choosing and binding it: again
	}
	t.Cleanup(s.stop)
	return s
}

func asNobody(root bool, name string, args ...string) *exec.Cmd {
	if !root {
		return exec.Command(name, args...)
	}
	return exec.Command("setpriv", append([]string{"--reuid=" + strconv.Itoa(nobody), "--regid=" + strconv.Itoa(nobody), "--clear-groups", "--", name}, args...)...)
}

func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// waitReady connects until the server answers, the process exits or the
// time is up.
func (s *Server) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL)
		cancel()
		if err == nil {
			return conn.Close(context.Background())
		}
		select {
		case <-s.done:
			return fmt.Errorf("postgres exited: %v", s.err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer within %s: %v", limit, err)
		}
		time.Sleep(50 * time.Millisecond) // polling for readiness, not timing anything
	}
}

// stop shuts the server down (fast shutdown, then kill) and waits for it.
func (s *Server) stop() {
	select {
	case <-s.done:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Logs is what the server printed.
func (s *Server) Logs() string { return s.logs.String() }

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
