package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGenCheckAndWrite(t *testing.T) {
	schemasDir, _ := filepath.Abs("../../../schemas")
	root := t.TempDir()
	// The generator bundles the hand-written runtime, the runner page and
	// the prelude it reads in the tree.
	for _, dir := range []string{"runtime-js/src", "site/src"} {
		if err := os.CopyFS(filepath.Join(root, dir), os.DirFS(filepath.Join("../../..", dir))); err != nil {
			t.Fatal(err)
		}
	}
	pre, err := os.ReadFile("../../../hostkit/server/prelude.js")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "hostkit", "server"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "hostkit", "server", "prelude.js"), pre, 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"--schemas", schemasDir, "--root", root}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	code, out, _ := run("--check")
	if code != 1 || !strings.Contains(out, "stale: frame/decode.go") {
		t.Fatalf("--check on an empty root: exit %d, %q", code, out)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 3 {
		t.Fatalf("--check wrote %d entries", len(ents)-3)
	}
	if code, out, errOut := run(); code != 0 || !strings.Contains(out, "wrote frame/frames.go") {
		t.Fatalf("gen: exit %d, %q %q", code, out, errOut)
	}
	if code, out, _ := run("--check"); code != 0 || out != "" {
		t.Fatalf("--check after gen: exit %d, %q", code, out)
	}
	p := filepath.Join(root, "frame/spec.go")
	if err := os.WriteFile(p, []byte("package frame\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := run("--check"); code != 1 || strings.TrimSpace(out) != "stale: frame/spec.go" {
		t.Fatalf("--check after an edit: exit %d, %q", code, out)
	}
}

func TestGenReportsSpecErrors(t *testing.T) {
	src, _ := filepath.Abs("../../../schemas")
	dir := t.TempDir()
	ents, _ := os.ReadDir(src)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(src, e.Name()))
		if e.Name() == "net-request.schema.json" {
			b = bytes.Replace(b, []byte(`"maxLength": 4096 }`), []byte(`"maxLen": 4096 }`), 1)
		}
		os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
	}
	var out, errOut bytes.Buffer
	code := run([]string{"--check", "--schemas", dir, "--root", t.TempDir()}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), `net-request.schema.json:14:48: error: /properties/url/maxLen: unknown keyword "maxLen" (did you mean "maxLength"?)`) {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut.String())
	}
}
