package cli

import (
	"bytes"
	"context"
	"go/format"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The promise of `snuggen new host`: in a fresh directory, with the module
// pointed at this checkout, `go vet ./... && go test ./...` pass as written.
// The module's own test builds the example app and round-trips every
// capability over the relay. Compiling a new module is slow, so -short skips
// this one test.
func TestNewHostVetsAndTestsInAFreshModule(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a new module against this checkout (about a minute cold); runs without -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is not on PATH: %v", err)
	}
	checkout, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// The machine's module cache only: no network, no workspace, no
	// toolchain switch. The checksum database is on, as on a fresh machine,
	// but unreachable: every module must be verified from the go.sum the
	// scaffold writes (snuggen's own), never looked up.
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOSUMDB", "sum.golang.org")
	for _, v := range []string{"GONOSUMDB", "GONOSUMCHECK", "GOPRIVATE", "GOINSECURE"} {
		t.Setenv(v, "")
	}
	t.Setenv("GOWORK", "off")
	t.Setenv("GOTOOLCHAIN", "local")

	dir := filepath.Join(t.TempDir(), "my-host")
	code, out, errs := run(t, "new", "host", "my-host", "--dir", dir, "--snuggen", checkout, "--module", "example.com/my-host")
	if code != 0 {
		t.Fatalf("new host: exit %d\n%s%s\n(a module missing from the cache? run 'go mod download' in %s)", code, out, errs, checkout)
	}
	for _, want := range []string{"go.mod", "main.go", "handlers.go", "host_test.go", "config.json", "README.md", filepath.Join("apps", "hello", "app.html")} {
		if !strings.Contains(out, filepath.Join(dir, want)) {
			t.Errorf("new host did not report writing %s:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "EXAMPLE_API_TOKEN=… go run .") {
		t.Errorf("the next step does not name the secret's variable:\n%s", out)
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("module example.com/my-host")) || !bytes.Contains(mod, []byte("=> "+checkout)) {
		t.Fatalf("go.mod (%v):\n%s", err, mod)
	}
	goFiles, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range goFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt-formatted (%v)", filepath.Base(f), err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"vet", "./..."}, {"test", "-count=1", "./..."}} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = dir
		got, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in the new module: %v\n%s", strings.Join(args, " "), err, got)
		}
	}
}

func TestNewHostRefusesBadInputWithTheRule(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"new", "host", "my host"}, "letters, digits"},
		{[]string{"new", "host", "h", "--module", "/abs/path"}, "invalid --module"},
		{[]string{"new", "host", "h", "--module", "has space/x"}, "invalid --module"},
		{[]string{"new", "host", "h", "--snuggen", t.TempDir()}, "no go.mod there"},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		code, _, errs := run(t, append(c.args, "--dir", dir, "--no-tidy")...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("%q: the directory was created", c.args)
		}
	}
}

// The new module's go.sum is snuggen's own, as built into the binary from the
// repository's go.sum (one source, no copy to keep in step).
func TestNewHostStartsWithSnuggensGoSum(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "h")
	if code, out, errs := run(t, "new", "host", "h", "--dir", dir, "--no-tidy"); code != 0 {
		t.Fatalf("new host: exit %d\n%s%s", code, out, errs)
	}
	got, err := os.ReadFile(filepath.Join(dir, "go.sum"))
	if err != nil {
		t.Fatalf("new host wrote no go.sum: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("go.sum of the new module (%d bytes) is not snuggen's go.sum (%d bytes)", len(got), len(want))
	}
}
