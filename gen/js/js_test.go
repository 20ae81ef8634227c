package js

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/gen/model"
	"github.com/snuggen/snuggen/schemas"
)

var update = flag.Bool("update", false, "rewrite the committed generated JS files")

const repoRoot = "../.."

func generate(t *testing.T) []model.File {
	t.Helper()
	m, err := load.Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatalf("load schemas: %v", err)
	}
	files, err := Generate(m)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	return files
}

// The committed files under runtime-js/ are the goldens: the node tests run
// them, and this test holds them equal to what the generator emits now.
func TestGeneratedFilesCurrent(t *testing.T) {
	for _, f := range generate(t) {
		p := filepath.Join(repoRoot, filepath.FromSlash(f.Name))
		if *update {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Contents, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		old, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s: %v (run go test ./gen/js -update, or snuggen gen)", f.Name, err)
			continue
		}
		if !bytes.Equal(old, f.Contents) {
			t.Errorf("%s is stale: run snuggen gen (or go test ./gen/js -update)", f.Name)
		}
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, b := generate(t), generate(t)
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for i := range a {
		if a[i].Name != b[i].Name || !bytes.Equal(a[i].Contents, b[i].Contents) {
			t.Errorf("%s differs between two runs", a[i].Name)
		}
	}
}

func TestGeneratedHeader(t *testing.T) {
	for _, f := range generate(t) {
		if !strings.HasPrefix(string(f.Contents), Header+"\n") {
			t.Errorf("%s does not begin with %q", f.Name, Header)
		}
	}
}
