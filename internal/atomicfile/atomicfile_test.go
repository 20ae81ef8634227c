package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// writers are Write and Replace: both replace the file whole.
var writers = map[string]func(string, []byte, fs.FileMode) error{"Write": Write, "Replace": Replace}

func TestWriteReplacesAndLeavesNoTemporary(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) { testReplacesAndLeavesNoTemporary(t, write) })
	}
}

func testReplacesAndLeavesNoTemporary(t *testing.T, write func(string, []byte, fs.FileMode) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := write(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Fatalf("got %q %v", b, st.Mode())
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("directory holds %d entries, want the file alone", len(es))
	}
}

func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	for name, write := range writers {
		t.Run(name, func(t *testing.T) { testFailedWriteKeepsTheOldFile(t, write) })
	}
}

func testFailedWriteKeepsTheOldFile(t *testing.T, write func(string, []byte, fs.FileMode) error) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o644)
	// A directory where the file should go: the rename fails.
	target := filepath.Join(dir, "sub")
	os.Mkdir(target, 0o755)
	os.WriteFile(filepath.Join(target, "x"), nil, 0o644)
	if err := write(target, []byte("new"), 0o644); err == nil {
		t.Fatal("writing over a non-empty directory succeeded")
	}
	if es, _ := os.ReadDir(dir); len(es) != 2 {
		t.Fatalf("a temporary file was left behind: %d entries", len(es))
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("old file changed: %q", b)
	}
	if err := write(filepath.Join(dir, "missing", "f"), nil, 0o644); err == nil {
		t.Fatal("a missing directory was not an error")
	}
}

// BenchmarkWrite writes a built page's size (10 KiB) over itself in the
// benchmark's temporary directory, synced (Write) and not (Replace).
func BenchmarkWrite(b *testing.B) {
	data := make([]byte, 10<<10)
	for _, name := range []string{"Write", "Replace"} {
		b.Run(name, func(b *testing.B) {
			p := filepath.Join(b.TempDir(), "page.html")
			for b.Loop() {
				if err := writers[name](p, data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
