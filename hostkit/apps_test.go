package hostkit_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/pack"
)

// A file snuggen build already built is installed by FileApp as it is (a
// host that installs every apps/*/app.html, as the new host scaffold does,
// takes built files too); packaged again it would carry two runtimes.
func TestFileAppServesABuiltFileAsItIs(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src.html")
	if err := os.WriteFile(src, []byte(`<!doctype html><title>Built</title><meta name="snug:display-name" content="Built app"><p>hi`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := pack.Build(context.Background(), pack.Options{Path: src})
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(dir, "app.html")
	if err := os.WriteFile(built, res.HTML, 0o644); err != nil {
		t.Fatal(err)
	}
	doc, meta, err := hostkit.FileApp("built", built).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(doc, res.HTML) {
		t.Fatalf("the built file was packaged again (%d bytes, built %d)", len(doc), len(res.HTML))
	}
	if meta.DisplayName != "Built app" {
		t.Fatalf("meta %+v", meta)
	}
	// A source file is still packaged.
	doc, _, err = hostkit.FileApp("src", src).Build(context.Background())
	if err != nil || bytes.Equal(doc, []byte(`<!doctype html><title>Built</title><p>hi`)) {
		t.Fatalf("the source was not packaged: %v", err)
	}
}
