package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/pack"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestNewAppBuildsStrictWithNoWarnings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "word-explainer")
	code, out, errs := run(t, "new", "app", "word-explainer", "--dir", dir)
	if code != 0 {
		t.Fatalf("new app: exit %d\n%s%s", code, out, errs)
	}
	res, err := pack.Build(context.Background(), pack.Options{Path: filepath.Join(dir, "app.html"), Strict: true})
	if err != nil {
		t.Fatalf("the scaffold does not build with --strict: %v %+v", err, res)
	}
	if len(res.Diagnostics) != 0 {
		t.Fatalf("the scaffold builds with diagnostics: %+v", res.Diagnostics)
	}
	m := res.Manifest
	if m.AppID != "app.word-explainer" || m.DisplayName != "Word Explainer" {
		t.Errorf("manifest = %+v, want appId app.word-explainer, displayName Word Explainer", m)
	}
	for _, capab := range []string{"ask", "db"} {
		if !strings.Contains(strings.Join(m.Capabilities, ","), capab) {
			t.Errorf("the scaffold does not use %s: capabilities %v", capab, m.Capabilities)
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !bytes.Contains(readme, []byte("snuggen serve app.html")) {
		t.Errorf("README missing or without the serve command: %v", err)
	}
}

func TestNewRefusesANonEmptyDirectoryWithoutTouchingIt(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "app.html")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "new", "app", "x", "--dir", dir)
	if code != 1 || !strings.Contains(errs, "not empty") || !strings.Contains(errs, "--force") {
		t.Fatalf("exit %d, stderr %q; want 1 and a message naming --force", code, errs)
	}
	if b, _ := os.ReadFile(keep); string(b) != "mine" {
		t.Fatalf("the existing file changed: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Fatalf("the directory gained files: %v", entries)
	}
	// --force overwrites the scaffold's own files.
	if code, _, errs := run(t, "new", "app", "x", "--dir", dir, "--force"); code != 0 {
		t.Fatalf("--force: exit %d: %s", code, errs)
	}
	if b, _ := os.ReadFile(keep); !bytes.Contains(b, []byte("snug:app-id")) {
		t.Fatalf("--force did not write app.html")
	}
}

func TestNewRefusesAnInvalidNameWithTheRule(t *testing.T) {
	for _, name := range []string{"my app", "a/b", `a\b`, "../up", "", "_under", strings.Repeat("a", 65)} {
		code, _, errs := run(t, "new", "app", name, "--dir", t.TempDir())
		if code != 2 || !strings.Contains(errs, "letters, digits") {
			t.Errorf("name %q: exit %d, stderr %q; want 2 and the naming rule", name, code, errs)
		}
	}
}

func TestNewIntoAnUnwritablePlaceSaysWhy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := run(t, "new", "app", "x", "--dir", filepath.Join(file, "sub"))
	if code != 1 || !strings.Contains(errs, filepath.Join(file, "sub")) || !strings.Contains(errs, "not a directory") {
		t.Fatalf("exit %d, stderr %q; want 1 and why the directory cannot be created", code, errs)
	}
}
