package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/hostkit/server"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

const mcpTestApp = `<!doctype html><html><head><title>T</title><meta name="snug:app-id" content="t.app"></head>
<body><script>snug.ready.then(() => snug.db.get("k"))</script></body></html>`

// TestBuildTargets: --target picks the runtime the file carries, through
// the same packager; an unknown target is a usage error.
func TestBuildTargets(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "app.html")
	if err := os.WriteFile(src, []byte(mcpTestApp), 0o644); err != nil {
		t.Fatal(err)
	}
	for target, want := range map[string]string{"snug": "snug", "mcp-app": "mcp"} {
		out := filepath.Join(dir, target+".html")
		var stdout, stderr bytes.Buffer
		if code := Main([]string{"build", src, "-o", out, "--target", target}, nil, &stdout, &stderr); code != 0 {
			t.Fatalf("--target %s: exit %d: %s", target, code, stderr.String())
		}
		doc, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if runtimejs.TargetOf(doc) != want {
			t.Errorf("--target %s: the file lacks its runtime", target)
		}
		if mcpapps.IsBuilt(doc) != (target == "mcp-app") {
			t.Errorf("--target %s: mcpapps.IsBuilt = %v", target, mcpapps.IsBuilt(doc))
		}
		// The MCP file carries the host's defences itself (an MCP Apps
		// host sends none of snuggen's headers); a Snug host adds them when
		// it serves the file (docs/decisions.md).
		hasPrelude := bytes.Contains(doc, []byte(server.Prelude())) && bytes.Contains(doc, []byte("require-trusted-types-for"))
		if hasPrelude != (target == "mcp-app") {
			t.Errorf("--target %s: carries the prelude and policy: %v", target, hasPrelude)
		}
	}
	// The manifest describes the file written.
	out, man := filepath.Join(dir, "m.html"), filepath.Join(dir, "m.json")
	var so, se bytes.Buffer
	if code := Main([]string{"build", src, "-o", out, "--manifest", man, "--target", "mcp-app"}, nil, &so, &se); code != 0 {
		t.Fatalf("--manifest: exit %d: %s", code, se.String())
	}
	doc, _ := os.ReadFile(out)
	m, _ := os.ReadFile(man)
	sum := sha256.Sum256(doc)
	if !strings.Contains(string(m), hex.EncodeToString(sum[:])) || !strings.Contains(string(m), fmt.Sprintf(`"bytes": %d`, len(doc))) {
		t.Errorf("the manifest does not describe the file written:\n%s", m)
	}
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"build", src, "--target", "chatgpt"}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "use snug or mcp-app") {
		t.Fatalf("an unknown target: exit %d, %s", code, stderr.String())
	}
	// snuggen mcp refuses a file built for Snug hosts, naming the fix.
	if code := Main([]string{"mcp", filepath.Join(dir, "snug.html"), "--data", t.TempDir()}, nil, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--target mcp-app") {
		t.Fatalf("mcp on a Snug build: exit %d, %s", code, stderr.String())
	}
}

// TestMCPStdioServesOneApp: over stdio one process is one MCP server, so
// several apps, which would each reach the others' storage, are refused
// unless --shared-server says they may share it.
func TestMCPStdioServesOneApp(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"a.html", "b.html"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(mcpTestApp), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	code, stdout, stderr := runCLI(t, append([]string{"mcp", "--data", t.TempDir()}, files...)...)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--shared-server") || !strings.Contains(stderr, "every other app's storage") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a usage error naming the choice", code, stdout, stderr)
	}
	// With the choice made, it serves both until stdin ends.
	code, _, stderr = runCLI(t, append([]string{"mcp", "--shared-server", "--data", t.TempDir()}, files...)...)
	if code != 0 {
		t.Fatalf("--shared-server: exit %d: %s", code, stderr)
	}
}
