package cli

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
	// Its log lines name the verb that wrote them.
	if !strings.HasPrefix(stderr, "snuggen mcp: serving 2 apps over stdio") {
		t.Errorf("stderr %q, want lines prefixed snuggen mcp:", stderr)
	}
}

// startMCPCLI runs snuggen mcp ARGS (over --http) in this process until the
// test ends and returns the first endpoint it prints.
func startMCPCLI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := MainContext(ctx, append([]string{"mcp"}, args...), strings.NewReader(""), pw, &stderr)
		pw.Close()
		done <- code
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("snuggen mcp exited %d: %s", code, stderr.String())
		}
	})
	lines := bufio.NewScanner(pr)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "mcp ") {
		t.Fatalf("snuggen mcp did not start: %q", lines.Text())
	}
	first := lines.Text() // read before the scanner goes on in the drain below
	go func() {
		for lines.Scan() {
		}
	}()
	return strings.TrimPrefix(first, "mcp ")
}

// writeTestApp writes mcpTestApp as notes.html (app key notes) in a new directory.
func writeTestApp(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "notes.html")
	if err := os.WriteFile(p, []byte(mcpTestApp), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type bearerRT string

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// TestMCPTokensKeepUsersApart: snuggen mcp --http --token-file serves each
// token's user a storage of their own, on a real socket; a request without
// a token is 401 with the protected resource metadata's URL.
func TestMCPTokensKeepUsersApart(t *testing.T) {
	toks := map[string]string{"alice": strings.Repeat("a", 40), "bob": strings.Repeat("b", 40)}
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# token user\n"+toks["alice"]+" alice\n"+toks["bob"]+" bob\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	endpoint := startMCPCLI(t, writeTestApp(t), "--http", "127.0.0.1:0", "--data", t.TempDir(), "--token-file", file, "--authorization-server", "https://auth.example.com")

	resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "resource_metadata=") {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	db := func(user string, fr map[string]any) map[string]any {
		t.Helper()
		caps := &mcp.ClientCapabilities{}
		caps.AddExtension(mcpapps.Extension, map[string]any{"mimeTypes": []string{mcpapps.MIMEType}})
		c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: bearerRT(toks[user])}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "open_notes"})
		if err != nil || res.IsError {
			t.Fatalf("%s: open: %v %+v", user, err, res)
		}
		var sess struct {
			Handle     string            `json:"handle"`
			InstanceID string            `json:"instanceId"`
			Tools      map[string]string `json:"tools"`
		}
		b, _ := json.Marshal(res.Meta[mcpapps.MetaSession])
		_ = json.Unmarshal(b, &sess)
		fr["v"], fr["type"], fr["requestId"], fr["instanceId"] = 1, "snug:db-request", "r1", sess.InstanceID
		res, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: sess.Tools["snug:db-request"], Arguments: map[string]any{"handle": sess.Handle, "frame": fr}})
		if err != nil || res.IsError {
			t.Fatalf("%s: db: %v %+v", user, err, res)
		}
		var out map[string]any
		b, _ = json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &out)
		return out
	}
	db("alice", map[string]any{"op": "kvSet", "key": "k", "value": "alice's"})
	if f := db("bob", map[string]any{"op": "kvGet", "key": "k"}); f["result"].(map[string]any)["found"] != false {
		t.Fatalf("bob read alice's key: %v", f)
	}
	if f := db("alice", map[string]any{"op": "kvGet", "key": "k"}); f["result"].(map[string]any)["value"] != "alice's" {
		t.Fatalf("alice's key: %v", f)
	}
}

// TestMCPAuthFlags: an address other than loopback without an
// authenticator is refused before anything is served, unless
// --insecure-no-auth; the auth flags go with --http; a token file others
// can read, or with short tokens, is refused.
func TestMCPAuthFlags(t *testing.T) {
	app := writeTestApp(t)
	code, stdout, stderr := runCLI(t, "mcp", app, "--http", "0.0.0.0:0", "--data", t.TempDir())
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "--token-file") || !strings.Contains(stderr, "--insecure-no-auth") {
		t.Fatalf("0.0.0.0 without auth: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if ep := startMCPCLI(t, app, "--http", "0.0.0.0:0", "--data", t.TempDir(), "--insecure-no-auth"); ep == "" {
		t.Fatal("--insecure-no-auth: no endpoint")
	}
	dir := t.TempDir()
	open, short := filepath.Join(dir, "open"), filepath.Join(dir, "short")
	_ = os.WriteFile(open, []byte(strings.Repeat("a", 40)+" alice\n"), 0o644)
	_ = os.WriteFile(short, []byte("abc alice\n"), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--token-file", open}, "go with --http"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", open}, "chmod 600"},
		{[]string{"--http", "127.0.0.1:0", "--token-file", short}, "at least 32"},
		{[]string{"--http", "127.0.0.1:0", "--authorization-server", "https://a.example"}, "goes with --token-file"},
	} {
		code, _, stderr := runCLI(t, append([]string{"mcp", app, "--data", t.TempDir()}, c.args...)...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %s; want %q", c.args, code, stderr, c.want)
		}
	}
}

// TestMCPSessionFlags: --max-sessions reaches the HTTP endpoint (the
// session past it is refused 429, naming the limit and --session-idle's
// time), and a count or idle time that is not positive is a usage error
// (--max-instances too).
func TestMCPSessionFlags(t *testing.T) {
	app := writeTestApp(t)
	endpoint := startMCPCLI(t, app, "--http", "127.0.0.1:0", "--data", t.TempDir(), "--max-sessions", "2", "--session-idle", "7m")
	for i := 1; i <= 3; i++ {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := map[bool]int{true: http.StatusOK, false: http.StatusTooManyRequests}[i <= 2]; resp.StatusCode != want {
			t.Fatalf("session %d: %d %s, want %d", i, resp.StatusCode, b, want)
		}
		if i == 3 && (!strings.Contains(string(b), "holds 2") || !strings.Contains(string(b), "7m0s")) {
			t.Fatalf("the refusal: %s", b)
		}
	}
	for _, bad := range [][]string{{"--max-sessions", "0"}, {"--session-idle", "-1s"}, {"--max-instances", "0"}} {
		code, _, stderr := runCLI(t, append([]string{"mcp", app, "--http", "127.0.0.1:0", "--data", t.TempDir()}, bad...)...)
		if code != exitUsage || !strings.Contains(stderr, bad[0]) {
			t.Errorf("%v: exit %d, %s", bad, code, stderr)
		}
	}
}
