package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// copyCase copies pack/testdata/NAME/in into a fresh directory.
func copyCase(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join("..", "..", "pack", "testdata", name, "in")
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestBuildWritesOneFile(t *testing.T) {
	dir := copyCase(t, "app")
	out := filepath.Join(t.TempDir(), "app.html")
	code, _, stderr := runCLI(t, "build", filepath.Join(dir, "index.html"), "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte(`http-equiv="Content-Security-Policy"`)) || !bytes.Contains(page, []byte("globalThis.snug")) {
		t.Errorf("output lacks the CSP meta or the runtime")
	}
	if !strings.Contains(stderr, "built "+out) {
		t.Errorf("stderr = %q, want a built line", stderr)
	}
	// Identical input, identical bytes.
	out2 := filepath.Join(t.TempDir(), "again.html")
	if code, _, stderr := runCLI(t, "build", filepath.Join(dir, "index.html"), "-o", out2); code != 0 {
		t.Fatalf("second build: %s", stderr)
	}
	page2, _ := os.ReadFile(out2)
	if !bytes.Equal(page, page2) {
		t.Errorf("two builds of the same input differ")
	}
}

var placeRE = regexp.MustCompile(`(?m)^\S+:\d+:\d+: error: `)

// TestBuildBadInputsWriteNothing: each bad input exits 1, names
// file:line:col, and leaves an existing output file untouched.
func TestBuildBadInputsWriteNothing(t *testing.T) {
	for _, name := range []string{"missing-file", "import-cycle", "syntax-error", "asset-too-large", "cdn-not-allowed", "invalid-utf8", "invalid-utf8-file"} {
		t.Run(name, func(t *testing.T) {
			dir := copyCase(t, name)
			out := filepath.Join(t.TempDir(), "out.html")
			old := []byte("previous good build")
			os.WriteFile(out, old, 0o644)
			args := []string{"build", filepath.Join(dir, "index.html"), "-o", out}
			if name == "asset-too-large" {
				args = append(args, "--max-asset", "100")
			}
			code, _, stderr := runCLI(t, args...)
			if code != 1 {
				t.Errorf("exit %d, want 1\n%s", code, stderr)
			}
			if !placeRE.MatchString(stderr) {
				t.Errorf("no file:line:col error in\n%s", stderr)
			}
			if got, _ := os.ReadFile(out); !bytes.Equal(got, old) {
				t.Errorf("the old output was changed")
			}
			entries, _ := os.ReadDir(filepath.Dir(out))
			if len(entries) != 1 {
				t.Errorf("files left beside the output: %v", entries)
			}
		})
	}
}

func TestBuildJSON(t *testing.T) {
	dir := copyCase(t, "modal")
	out := filepath.Join(t.TempDir(), "m.html")
	code, stdout, stderr := runCLI(t, "build", filepath.Join(dir, "index.html"), "-o", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		OK          bool `json:"ok"`
		Diagnostics []struct {
			Severity, Code, File, Message, Why, Fix string
			Line, Column                            int
		} `json:"diagnostics"`
		Manifest struct {
			AppID  string `json:"appId"`
			SHA256 string `json:"sha256"`
			Bytes  int    `json:"bytes"`
		} `json:"manifest"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
	}
	if !got.OK || got.Manifest.AppID != "test.case" || len(got.Manifest.SHA256) != 64 || got.Manifest.Bytes == 0 {
		t.Errorf("manifest = %+v", got.Manifest)
	}
	if len(got.Diagnostics) != 2 || got.Diagnostics[0].Code != "sandbox.modal" || got.Diagnostics[0].Line == 0 || got.Diagnostics[0].Fix == "" {
		t.Errorf("diagnostics = %+v", got.Diagnostics)
	}
	if !strings.HasSuffix(got.Diagnostics[0].File, "index.html") {
		t.Errorf("file = %q, want the path as given", got.Diagnostics[0].File)
	}
}

func TestBuildStrict(t *testing.T) {
	dir := copyCase(t, "modal")
	page := filepath.Join(dir, "index.html")
	if code, _, stderr := runCLI(t, "build", page, "-o", filepath.Join(t.TempDir(), "a.html")); code != 0 || !strings.Contains(stderr, "warning: confirm") {
		t.Errorf("without --strict: exit %d\n%s", code, stderr)
	}
	out := filepath.Join(t.TempDir(), "b.html")
	if code, _, stderr := runCLI(t, "build", page, "-o", out, "--strict"); code != 1 || !strings.Contains(stderr, "error: confirm") {
		t.Errorf("with --strict: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("--strict failure wrote output")
	}
}

func TestBuildStdoutAndManifest(t *testing.T) {
	dir := copyCase(t, "app")
	man := filepath.Join(t.TempDir(), "manifest.json")
	code, stdout, stderr := runCLI(t, "build", filepath.Join(dir, "index.html"), "-o", "-", "--manifest", man)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "<!doctype html>") {
		t.Errorf("stdout does not hold the page: %.80q", stdout)
	}
	var m struct {
		AppID        string   `json:"appId"`
		Capabilities []string `json:"capabilities"`
	}
	data, err := os.ReadFile(man)
	if err != nil || json.Unmarshal(data, &m) != nil {
		t.Fatalf("manifest: %v %s", err, data)
	}
	if m.AppID != "test.app" || strings.Join(m.Capabilities, ",") != "ask,db" {
		t.Errorf("manifest = %+v", m)
	}
}

// TestBuildDirectory builds a folder of apps: the good ones are written,
// the bad one is reported, the exit is 1, and index.json lists the good.
func TestBuildDirectory(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"app", "modal", "syntax-error"} {
		os.Rename(copyCase(t, name), filepath.Join(root, name))
	}
	os.WriteFile(filepath.Join(root, "solo.html"), []byte(`<!doctype html><title>Solo</title><meta name="snug:app-id" content="solo"><meta name="snug:display-name" content="Solo"><p>hi</p>`), 0o644)
	out := filepath.Join(t.TempDir(), "site")
	code, _, stderr := runCLI(t, "build", root, "-o", out)
	if code != 1 {
		t.Errorf("exit %d, want 1 (one app fails)\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "3 of 4 apps built") || !placeRE.MatchString(stderr) {
		t.Errorf("stderr:\n%s", stderr)
	}
	for _, f := range []string{"app.html", "modal.html", "solo.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "syntax-error.html")); err == nil {
		t.Errorf("the failing app was written")
	}
	var cat struct {
		Apps []struct {
			AppID, Name, Icon, File, SHA256 string
			Bytes                           int
		} `json:"apps"`
	}
	data, err := os.ReadFile(filepath.Join(out, "index.json"))
	if err != nil || json.Unmarshal(data, &cat) != nil {
		t.Fatalf("index.json: %v %s", err, data)
	}
	if len(cat.Apps) != 3 || cat.Apps[0].File != "app.html" || cat.Apps[0].AppID != "test.app" || cat.Apps[0].Icon != "🧪" || cat.Apps[0].Bytes == 0 || len(cat.Apps[0].SHA256) != 64 {
		t.Errorf("catalog = %+v", cat.Apps)
	}
}

// syncBuffer is a bytes.Buffer safe for the watcher's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBuildWatchRebuildsOnChange(t *testing.T) {
	dir := copyCase(t, "app")
	out := filepath.Join(t.TempDir(), "app.html")
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runBuild(ctx, &IO{In: strings.NewReader(""), Out: &stdout, Err: &stderr}, &buildOptions{
			input: filepath.Join(dir, "index.html"), out: out, watch: true, poll: 20 * time.Millisecond, maxAsset: 1 << 20,
		})
	}()
	waitUntil(t, func() bool { _, err := os.Stat(out); return err == nil })
	// Change a module the page imports: the watcher rebuilds. Its baseline
	// is taken after the first build is reported, so the edit is written
	// again (growing) until it is seen.
	n := 0
	waitUntil(t, func() bool {
		if page, _ := os.ReadFile(out); bytes.Contains(page, []byte("WATCHED")) {
			return true
		}
		n++
		if err := os.WriteFile(filepath.Join(dir, "lib", "state.js"), []byte("export const state = { count: 41, marker: \"WATCHED\" };\n"+strings.Repeat(" ", n)), 0o644); err != nil {
			t.Fatal(err)
		}
		return false
	})
	waitUntil(t, func() bool { return strings.Contains(stderr.String(), "rebuilt") })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("watch returned %v", err)
	}
	lines := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d rebuilt \S+ in \d+(\.\d+)?m?s`).FindAllString(stderr.String(), -1)
	if len(lines) == 0 {
		t.Errorf("no rebuild line with its time in\n%s", stderr.String())
	}
}

// waitUntil waits for cond; the deadline only bounds a hang (a loaded
// machine, or the race detector, takes longer to get there).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBuildHelpHasExample(t *testing.T) {
	code, stdout, _ := runCLI(t, "build", "--help")
	if code != 0 || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "snuggen build app.html") {
		t.Errorf("help:\n%s", stdout)
	}
}

func TestBuildUsageErrors(t *testing.T) {
	if code, _, _ := runCLI(t, "build"); code != 2 {
		t.Errorf("no argument: exit %d, want 2", code)
	}
	if code, _, _ := runCLI(t, "build", filepath.Join(t.TempDir(), "nope.html")); code != 2 {
		t.Errorf("missing input: exit %d, want 2", code)
	}
}
