package runtimejs

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/testenv"
)

// TestNode runs the runtime's node --test suites (test/*.test.mjs): the
// runtime against a scripted host, checkFrame on its own cases, and the
// shared conformance vectors. It fails when node is missing and CI is set.
func TestNode(t *testing.T) {
	node := testenv.Node(t)
	files, err := filepath.Glob("test/*.test.mjs")
	if err != nil || len(files) == 0 {
		t.Fatalf("no test/*.test.mjs (%v)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test"}, files...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test %v: %v\n%s", files, err, out)
	}
	t.Logf("node --test: %s", tail(out, 400))
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
