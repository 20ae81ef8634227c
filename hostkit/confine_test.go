package hostkit_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/pack"
)

const hostSecret = "HOSTKIT-SECRET-e3b0c4"

const leakHead = `<!doctype html><html><head><meta name="snug:app-id" content="leak"><meta name="snug:display-name" content="Leak"></head><body>
`

// leakTree writes secret/hostname and an app folder beside it, with a
// symlink in the app pointing at the secret.
func leakTree(t *testing.T) (app string) {
	t.Helper()
	root := t.TempDir()
	app = filepath.Join(root, "app")
	if err := os.MkdirAll(filepath.Join(root, "secret"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secret", "hostname"), []byte(hostSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../secret/hostname", filepath.Join(app, "leak.png")); err != nil {
		t.Fatal(err)
	}
	return app
}

func wantOutsideError(t *testing.T, err error, line int) {
	t.Helper()
	var be *hostkit.BuildError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a *hostkit.BuildError", err)
	}
	if strings.Contains(err.Error(), hostSecret) {
		t.Fatalf("the error carries the secret: %v", err)
	}
	for _, d := range be.Diagnostics {
		if d.Code == "ref.outside" && d.Severity == pack.SeverityError && d.Line == line {
			return
		}
	}
	t.Fatalf("no ref.outside error on line %d:\n%v", line, err)
}

// TestFileAppCannotReadOutsideItsFolder: hostkit packages a FileApp with the
// packager's confinement: a reference out of the app's folder (by ".." or
// by a symlink) stops New with the place, and a Reload that brings one in
// keeps serving the last good document, whose bytes hold no secret.
func TestFileAppCannotReadOutsideItsFolder(t *testing.T) {
	app := leakTree(t)
	page := filepath.Join(app, "index.html")
	for i, body := range []string{`<img src="../secret/hostname">`, `<img src="leak.png">`, `<p style="background:url(%2e%2e/secret/hostname)">`} {
		if err := os.WriteFile(page, []byte(leakHead+body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := hostkit.New(hostkit.WithApps(hostkit.FileApp("leak", page)), hostkit.WithDataDir(t.TempDir()))
		if err == nil {
			t.Fatalf("case %d: New accepted an app that reads outside its folder", i)
		}
		wantOutsideError(t, err, 2)
	}

	if err := os.WriteFile(page, []byte(leakHead+`<p id="v">good</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := hostkit.New(hostkit.WithApps(hostkit.FileApp("leak", page)), hostkit.WithDataDir(t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	get := func() string {
		res, err := testenv.LocalhostClient.Get(h.AppDocumentURL("leak"))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET the document: %d %s", res.StatusCode, b)
		}
		return string(b)
	}
	if !strings.Contains(get(), ">good<") {
		t.Fatal("the good document is not served")
	}
	if err := os.WriteFile(page, []byte(leakHead+`<p id="v">evil</p><img src="leak.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	wantOutsideError(t, h.Apps.Reload(context.Background(), "leak"), 2)
	doc := get()
	if strings.Contains(doc, hostSecret) || strings.Contains(doc, ">evil<") || !strings.Contains(doc, ">good<") {
		t.Fatalf("after the refused reload the host serves:\n%.400s", doc)
	}
}

// TestRawAppReadsNoFile: an LLM's raw HTML has no folder at all.
func TestRawAppReadsNoFile(t *testing.T) {
	app := leakTree(t)
	raw := leakHead + `<img src="` + strings.Repeat("../", 30) + strings.TrimPrefix(filepath.ToSlash(filepath.Join(filepath.Dir(app), "secret", "hostname")), "/") + `">`
	_, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("raw", []byte(raw))), hostkit.WithDataDir(t.TempDir()))
	wantOutsideError(t, err, 2)
}
