package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snuggen/snuggen/conform"
	"github.com/snuggen/snuggen/internal/testenv"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// conformReport runs snuggen conform with args and --json and returns its
// exit code and report.
func conformReport(t *testing.T, args ...string) (int, *conform.Report, string) {
	t.Helper()
	code, out, errs := run(t, append([]string{"conform", "--json", "--chromium", testenv.Chromium(t)}, args...)...)
	if code != 0 && code != 1 {
		t.Fatalf("conform: exit %d\n%s", code, errs)
	}
	var r conform.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("conform --json printed no report (%v):\n%s\n%s", err, out, errs)
	}
	return code, &r, errs
}

// requireGreen fails the test for every case that did not pass, and for a
// skip unless skipOK allows it.
func requireGreen(t *testing.T, code int, r *conform.Report, skipOK func(conform.Case) bool) {
	t.Helper()
	for _, c := range r.Cases {
		switch {
		case c.Status == conform.Fail:
			t.Errorf("%s (%s) failed: %s; expected %s; got %s", c.ID, c.Rule, c.Reason, c.Expected, c.Got)
		case c.Status == conform.Skip && !skipOK(c):
			t.Errorf("%s (%s) skipped: %s", c.ID, c.Rule, c.Reason)
		}
	}
	if code != 0 && r.Passed() {
		t.Errorf("exit %d for a passing report", code)
	}
}

// `snuggen conform` against snuggen's own serve: every case runs (the
// driver answers the dialogs) and passes, and the exit code says so.
func TestConformPassesAgainstServe(t *testing.T) {
	code, r, errs := conformReport(t)
	if code != 0 {
		t.Errorf("exit %d\n%s", code, errs)
	}
	requireGreen(t, code, r, func(conform.Case) bool { return false })
	if r.Host == nil || r.Host.Transport != "snug" || r.Driver == nil || !r.Driver.Dialogs {
		t.Errorf("host %+v, driver %+v", r.Host, r.Driver)
	}
	seen := map[string]bool{}
	for _, c := range r.Cases {
		seen[c.Rule] = true
	}
	for _, want := range []string{"handshake", "R1", "R2", "R3", "R4", "R5", "R6", "R7", "db", "net", "open-url", "C1", "C2"} {
		if !seen[want] {
			t.Errorf("no case checks %s", want)
		}
	}
}

// The table names each case, its rule and result, and a summary line.
func TestConformPrintsATable(t *testing.T) {
	code, out, errs := run(t, "conform", "--chromium", testenv.Chromium(t), "--only", "handshake.theme,r1.no-type")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"CASE", "handshake.theme", "handshake", "r1.no-type", "R1 frame.type", "pass", "2 cases: 2 pass, 0 fail, 0 skip"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// --app prints the kit as one built app for either kind of host.
func TestConformApp(t *testing.T) {
	for _, c := range []struct {
		args   []string
		target string
	}{{nil, "snug"}, {[]string{"--target", "mcp-app"}, "mcp"}} {
		code, out, errs := run(t, append([]string{"conform", "--app"}, c.args...)...)
		if code != 0 {
			t.Fatalf("conform --app %v: exit %d\n%s", c.args, code, errs)
		}
		if !strings.HasPrefix(strings.ToLower(out), "<!doctype html>") || runtimejs.TargetOf([]byte(out)) != c.target || !strings.Contains(out, `content="`+conform.AppKey+`"`) {
			t.Errorf("conform --app %v printed no kit built for %s (%d bytes)", c.args, c.target, len(out))
		}
	}
	for _, args := range [][]string{
		{"conform", "--app", "--json"},
		{"conform", "--app", "--url", "http://127.0.0.1:1/"},
		{"conform", "--target", "mcp-app"},
		{"conform", "--app", "--target", "snugg"},
		{"conform", "extra"},
	} {
		if code, _, errs := run(t, args...); code != 2 {
			t.Errorf("%v: exit %d (%s), want 2", args, code, errs)
		}
	}
}

// The promise of the kit for hosts built on hostkit: a host made by
// `snuggen new host`, with the kit installed as one of its apps and run as
// its own program, passes `snuggen conform --url`. Compiling the new module
// is slow, so -short skips it.
func TestConformPassesAgainstANewHost(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a new module against this checkout; runs without -short")
	}
	testenv.Chromium(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The machine's module cache only, as in TestNewHostVetsAndTestsInAFreshModule.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")
	dir := filepath.Join(t.TempDir(), "my-host")
	if code, out, errs := run(t, "new", "host", "my-host", "--dir", dir, "--snuggen", checkout, "--module", "example.com/my-host"); code != 0 {
		t.Fatalf("new host: exit %d\n%s%s", code, out, errs)
	}
	code, kit, errs := run(t, "conform", "--app")
	if code != 0 {
		t.Fatalf("conform --app: exit %d\n%s", code, errs)
	}
	kitDir := filepath.Join(dir, "apps", conform.AppKey)
	if err := os.MkdirAll(kitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(kitDir, "app.html"), []byte(kit), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "my-host")
	build := exec.CommandContext(ctx, goBin, "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build in the new module: %v\n%s", err, out)
	}

	host := exec.CommandContext(ctx, bin, "--addr", "127.0.0.1:0", "--data", t.TempDir())
	host.Dir = dir
	host.Env = append(os.Environ(), "EXAMPLE_API_TOKEN=conform-example-token-0123456789")
	var stderr bytes.Buffer
	host.Stderr = &stderr
	stdout, err := host.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := host.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = host.Process.Signal(syscall.SIGINT)
		if err := host.Wait(); err != nil {
			t.Errorf("the new host did not stop cleanly: %v\n%s", err, stderr.String())
		}
	}()
	url := ""
	lines := bufio.NewScanner(stdout)
	for url == "" && lines.Scan() {
		if f := strings.Fields(lines.Text()); len(f) == 3 && f[0] == "app" && f[1] == conform.AppKey {
			url = f[2]
		}
	}
	if url == "" {
		t.Fatalf("the new host printed no line for the kit\n%s", stderr.String())
	}
	go func() {
		for lines.Scan() {
		}
	}()
	code, r, errs := conformReport(t, "--url", url)
	requireGreen(t, code, r, func(conform.Case) bool { return false })
	if t.Failed() {
		t.Logf("conform stderr:\n%s\nhost stderr:\n%s", errs, stderr.String())
	}
}
