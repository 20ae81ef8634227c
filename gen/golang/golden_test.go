package golang

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/schemas"
)

// TestGenerateDeterministic generates frame from schemas/ twice: the output
// must be identical, carry the generated-code header, and equal the
// committed files (which compile and run every conformance vector).
// What each generator feature emits is pinned by the cases of cases_test.go.
func TestGenerateDeterministic(t *testing.T) {
	m, err := load.Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := load.Load(schemas.FS, "schemas")
	again, err := Generate(m2)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(again) {
		t.Fatal("two runs produced different file sets")
	}
	for i, f := range files {
		if f.Name != again[i].Name || !bytes.Equal(f.Contents, again[i].Contents) {
			t.Errorf("%s: two runs differ: the output is not deterministic", f.Name)
		}
		if !bytes.HasPrefix(f.Contents, []byte("// "+Header+"\n")) {
			t.Errorf("%s does not start with the generated-code header", f.Name)
		}
		committed, err := os.ReadFile(filepath.Join("../..", f.Name))
		if err != nil || !bytes.Equal(committed, f.Contents) {
			t.Errorf("%s is stale: run snuggen gen", f.Name)
		}
	}
}

func TestGoName(t *testing.T) {
	for in, want := range map[string]string{
		"requestId": "RequestID", "instanceId": "InstanceID", "openUrl": "OpenURL", "sql": "SQL", "ok": "OK",
		"lastInsertRowid": "LastInsertRowid", "MAX_DB_FRAME_BYTES": "MaxDBFrameBytes", "NET_SSRF_BLOCKED": "NetSSRFBlocked",
		"open-url-request": "OpenURLRequest", "db-request": "DBRequest", "net.header.credential": "NetHeaderCredential",
		"openurl.url.char": "OpenURLURLChar", "x-ratelimit-*": "XRatelimit", "CDN_ALLOWLIST": "CDNAllowlist",
	} {
		if got := goName(in); got != want {
			t.Errorf("goName(%q) = %q, want %q", in, got, want)
		}
	}
}
