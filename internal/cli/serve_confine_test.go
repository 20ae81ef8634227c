package cli

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/snuggen/snuggen/internal/testenv"
)

const serveSecret = "SERVE-SECRET-9b2d71"

const leakPage = `<!doctype html><html><head><meta name="snug:app-id" content="leak"><meta name="snug:display-name" content="Leak"></head><body>
`

// serveLeakTree makes root/secret (the file an app wants) and root/apps/leak,
// an app folder two levels below root, so "../../secret" reaches it.
func serveLeakTree(t *testing.T) (page string) {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "secret"), []byte(serveSecret), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "apps", "leak")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "index.html")
}

// runServeAsync runs serve and returns its stdout lines, its stderr and
// the channel its result arrives on; the server stops when the test ends.
func runServeAsync(t *testing.T, o *serveOptions, args ...string) (*bufio.Scanner, *lockedBuffer, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	stderr := &lockedBuffer{}
	done := make(chan error, 1)
	go func() {
		err := runServe(ctx, &IO{In: strings.NewReader(""), Out: pw, Err: stderr}, o, args)
		pw.Close()
		done <- err
	}()
	result := make(chan error, 1)
	go func() { result <- <-done }()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
	})
	return bufio.NewScanner(pr), stderr, result
}

// carries reports whether doc holds the secret, as written or as the
// base64 of a data: URI.
func carries(doc string) bool {
	return strings.Contains(doc, serveSecret) || strings.Contains(doc, base64.StdEncoding.EncodeToString([]byte(serveSecret)))
}

func getDoc(t *testing.T, url string) string {
	t.Helper()
	res, err := testenv.LocalhostClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// TestServeRefusesAppReadingOutsideItsFolder: `snuggen serve` of an app with
// <img src="../../secret"> reports the error with its place and serves no
// document carrying the secret.
func TestServeRefusesAppReadingOutsideItsFolder(t *testing.T) {
	page := serveLeakTree(t)
	if err := os.WriteFile(page, []byte(leakPage+`<img src="../../secret">`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv}
	lines, stderr, result := runServeAsync(t, o, page)
	served := make(chan string, 1)
	go func() {
		if lines.Scan() {
			served <- lines.Text()
		}
	}()
	select {
	case line := <-served:
		// Serving at all is the failure; show what the document carries.
		f := strings.Fields(line)
		doc := getDoc(t, appDocURL(t, f[len(f)-1], "leak"))
		t.Fatalf("serve started (%q); the document carries the secret: %v", line, carries(doc))
	case err := <-result:
		if err == nil {
			t.Fatal("serve returned without error")
		}
		msg := err.Error() + stderr.String()
		if strings.Contains(msg, serveSecret) {
			t.Fatalf("the error carries the secret: %s", msg)
		}
		if !strings.Contains(msg, "index.html:2:6") || !strings.Contains(msg, "outside the app's folder") {
			t.Fatalf("the error does not name the place and the reason: %s", msg)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve neither served nor failed")
	}
}

// TestServeWatchKeepsTheLastGoodBuild: with --watch, an edit that adds a
// reference out of the folder is reported and the served document stays
// the last good one, without the secret.
func TestServeWatchKeepsTheLastGoodBuild(t *testing.T) {
	page := serveLeakTree(t)
	if err := os.WriteFile(page, []byte(leakPage+`<p>good</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv, watch: true}
	lines, stderr, _ := runServeAsync(t, o, page)
	if !lines.Scan() {
		t.Fatalf("serve printed nothing: %s", stderr.String())
	}
	f := strings.Fields(lines.Text())
	docURL := appDocURL(t, f[len(f)-1], "leak")
	if !strings.Contains(getDoc(t, docURL), "<p>good</p>") {
		t.Fatal("the good document is not served")
	}
	// The watcher takes its first snapshot after the app line, so the
	// edit is written again (growing) until it is noticed.
	edit := func(n int) {
		if err := os.WriteFile(page, []byte(leakPage+`<p>evil</p><img src="../../secret">`+strings.Repeat(" ", n)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(0)
	rebuilt := make(chan string, 1)
	go func() {
		if lines.Scan() {
			rebuilt <- lines.Text()
		}
	}()
	deadline := time.After(20 * time.Second)
	for n := 1; !strings.Contains(stderr.String(), "rebuild leak failed"); n++ {
		if n%10 == 0 {
			edit(n)
		}
		select {
		case l := <-rebuilt:
			t.Fatalf("serve rebuilt the app (%q); the document carries the secret: %v", l, carries(getDoc(t, docURL)))
		case <-deadline:
			t.Fatalf("no rebuild report; stderr: %s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if msg := stderr.String(); !strings.Contains(msg, "index.html:2:") || !strings.Contains(msg, "outside the app's folder") || strings.Contains(msg, serveSecret) {
		t.Errorf("rebuild report: %s", msg)
	}
	doc := getDoc(t, docURL)
	if carries(doc) || !strings.Contains(doc, "<p>good</p>") {
		t.Fatalf("served after the refused rebuild:\n%.400s", doc)
	}
}

// TestServeFolderWithAFIFOPage: a folder of apps whose page is a FIFO does
// not hang serve (it used to block reading the page to tell built from
// raw): the other app is served and the FIFO page is listed as broken.
func TestServeFolderWithAFIFOPage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.html"), []byte(leakPage+`<p>ok</p>`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.html"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := &serveOptions{addr: "127.0.0.1:0", data: t.TempDir(), agent: "offline", getenv: os.Getenv}
	lines, stderr, result := runServeAsync(t, o, dir)
	started := make(chan string, 1)
	go func() {
		if lines.Scan() {
			started <- lines.Text()
		}
	}()
	select {
	case l := <-started:
		// Issue 28 item 2: the apps that build are served, the FIFO page
		// is listed as not building.
		if !strings.Contains(l, "?app=ok") || !strings.Contains(stderr.String(), "pipe.html") || !strings.Contains(stderr.String(), "FIFO") {
			t.Fatalf("serve started with %q; stderr %s", l, stderr.String())
		}
	case err := <-result:
		if err == nil || !strings.Contains(err.Error()+stderr.String(), "pipe.html") || !strings.Contains(err.Error()+stderr.String(), "FIFO") {
			t.Fatalf("serve ended with %v; stderr %s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve hung on a FIFO in the folder")
	}
}
