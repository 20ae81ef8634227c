//go:build !cluster

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The default build has no replicated mode (its dependencies stay out of
// every snuggen process): --postgres says how to get it, and a half
// configuration names the missing flag.
func TestServeReplicatedModeNeedsTheBuildTag(t *testing.T) {
	app := filepath.Join(t.TempDir(), "app.html")
	if err := os.WriteFile(app, []byte("<!doctype html><title>x</title>"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(),
		"--postgres", "postgres://x@127.0.0.1:1/db", "--object-store", "s3://b/p", app)
	if code != 2 || !strings.Contains(stderr, "go build -tags cluster ./cmd/snuggen") {
		t.Errorf("exit %d, stderr %q; want 2 and the build command", code, stderr)
	}
	code, _, stderr = runCLI(t, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir(), "--postgres", "postgres://x@127.0.0.1:1/db", app)
	if code != 2 || !strings.Contains(stderr, "--object-store") {
		t.Errorf("exit %d, stderr %q; want 2 naming --object-store", code, stderr)
	}
}
