package golang

import (
	"bytes"
	"flag"
	"os"
	"path"
	"path/filepath"
	"testing"

	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/schemas"
)

var update = flag.Bool("update", false, "rewrite the golden files under gen/testdata/golden")

const goldenDir = "../testdata/golden/go"

// TestGolden generates frame from schemas/ twice (the output must be
// deterministic) and compares it with the golden files; -update rewrites
// them. The golden files are also the committed frame, which compiles
// and is run against every conformance vector, so this golden is one that
// runs rather than bytes alone.
func TestGolden(t *testing.T) {
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
		golden := filepath.Join(goldenDir, path.Base(f.Name)+".golden")
		if *update {
			if err := os.MkdirAll(goldenDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, f.Contents, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./gen/golang -update)", err)
		}
		if !bytes.Equal(f.Contents, want) {
			t.Errorf("%s differs from %s (run go test ./gen/golang -update and review the diff)", f.Name, golden)
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
