package gen

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/snuggen/snuggen/gen/golang"
	"github.com/snuggen/snuggen/schemas"
)

func repoRoot() string {
	_, here, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(here))
}

// specWithNote is a copy of schemas/ whose app-cancel schema has a new
// optional field: note, a string of at most 10 code points.
func specWithNote(t *testing.T) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	ents, err := os.ReadDir(filepath.Join(repoRoot(), "schemas"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			b, err := os.ReadFile(filepath.Join(repoRoot(), "schemas", e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			fsys[e.Name()] = &fstest.MapFile{Data: b}
		}
	}
	old := string(fsys["app-cancel.schema.json"].Data)
	anchor := `"instanceId": { "type": "string", "minLength": 1, "maxLength": 128 }`
	if !strings.Contains(old, anchor) {
		t.Fatal("app-cancel schema changed shape; update this test")
	}
	fsys["app-cancel.schema.json"] = &fstest.MapFile{Data: []byte(strings.Replace(old, anchor, anchor+`,
    "note": { "type": "string", "maxLength": 10 }`, 1))}
	return fsys
}

// TestSchemaChangeFlowsThrough adds an optional field to a temp copy of the
// schemas and checks it reaches both outputs: the Go package is compiled
// (through a build overlay, so the tree is not touched) and run, and must
// accept the new field, reject it past its bound, and keep it through
// Marshal; the JS output must carry it too.
func TestSchemaChangeFlowsThrough(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a package; skipped with -short")
	}
	m, err := Load(specWithNote(t), "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m, os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	sawJS := false
	for _, f := range files {
		if strings.HasPrefix(f.Name, "runtime-js/gen/") && bytes.Contains(f.Contents, []byte("note")) {
			sawJS = true
		}
	}
	if !sawJS {
		t.Error("the new field did not reach runtime-js/gen")
	}

	// Overlay the regenerated frame package and a small program over the
	// module, then run the program.
	tmp := t.TempDir()
	root := repoRoot()
	replace := map[string]string{}
	for _, f := range files {
		if !strings.HasPrefix(f.Name, golang.Dir+"/") {
			continue
		}
		p := filepath.Join(tmp, filepath.Base(f.Name))
		if err := os.WriteFile(p, f.Contents, 0o644); err != nil {
			t.Fatal(err)
		}
		replace[filepath.Join(root, filepath.FromSlash(f.Name))] = p
	}
	prog := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(prog, []byte(flowProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	progPath := filepath.Join(root, "gen", "internal", "flowcheck", "main.go")
	replace[progPath] = prog
	ov, _ := json.Marshal(map[string]any{"Replace": replace})
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", "-overlay", ovPath, "./gen/internal/flowcheck")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	want := "accept note=hello\nreject maxLength /note\nmarshal {\"v\":1,\"type\":\"snug:app-cancel\",\"requestId\":\"r1\",\"instanceId\":\"i1\",\"note\":\"hello\"}\n"
	if string(out) != want {
		t.Fatalf("program printed\n%s\nwant\n%s", out, want)
	}
}

const flowProgram = `package main

import (
	"fmt"

	"github.com/snuggen/snuggen/frame"
)

func main() {
	f, err := frame.Parse([]byte(` + "`" + `{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1","note":"hello"}` + "`" + `))
	if err != nil {
		panic(err)
	}
	c := f.(*frame.AppCancel)
	fmt.Printf("accept note=%s\n", *c.Note)
	_, err = frame.Parse([]byte(` + "`" + `{"v":1,"type":"snug:app-cancel","requestId":"r1","instanceId":"i1","note":"hello world!"}` + "`" + `))
	re := err.(*frame.RejectError)
	fmt.Printf("reject %s %s\n", re.Violations[0].Rule, re.Violations[0].Path)
	b, _ := frame.Marshal(c)
	fmt.Printf("marshal %s\n", b)
}
`

// TestGenerateEmbeddedSpec checks the embedded spec loads and every emitter
// runs, with sorted, unique file names.
func TestGenerateEmbeddedSpec(t *testing.T) {
	m, err := Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m, os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	var sawGo, sawJS bool
	for i, f := range files {
		if i > 0 && files[i-1].Name >= f.Name {
			t.Errorf("files not sorted and unique at %s", f.Name)
		}
		sawGo = sawGo || strings.HasPrefix(f.Name, "frame/")
		sawJS = sawJS || strings.HasPrefix(f.Name, "runtime-js/")
	}
	if !sawGo || !sawJS {
		t.Errorf("go output %v, js output %v", sawGo, sawJS)
	}
}

// TestSyncFindsStaleAndOrphanedFiles: a generated file no emitter writes any
// more (a renamed output) is an orphan; --check reports it, a write removes
// it; a hand-written file beside it is left alone.
func TestSyncFindsStaleAndOrphanedFiles(t *testing.T) {
	m, err := Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	files, err := Generate(m, os.DirFS(".."))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if _, err := Sync(root, files, true); err != nil {
		t.Fatal(err)
	}
	if ch, err := Sync(root, files, false); err != nil || len(ch) != 0 {
		t.Fatalf("after a write: %v, %v", ch, err)
	}
	orphan := filepath.Join(root, "frame", "parse.go")
	hand := filepath.Join(root, "frame", "read.go")
	os.WriteFile(orphan, []byte(header+"\n\npackage frame\n"), 0o644)
	os.WriteFile(hand, []byte("package frame\n"), 0o644)
	os.WriteFile(filepath.Join(root, files[0].Name), []byte("edited"), 0o644)
	ch, err := Sync(root, files, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []Change{{Name: files[0].Name}, {Name: "frame/parse.go", Orphan: true}}
	if len(ch) != 2 || ch[0] != want[0] && ch[1] != want[0] || ch[0] != want[1] && ch[1] != want[1] {
		t.Fatalf("check: %v, want %v", ch, want)
	}
	if _, err := os.Stat(orphan); err != nil {
		t.Fatal("check removed the orphan")
	}
	if _, err := Sync(root, files, true); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Fatalf("the orphan is still there: %v", err)
	}
	if b, err := os.ReadFile(hand); err != nil || string(b) != "package frame\n" {
		t.Fatalf("the hand-written file changed: %q, %v", b, err)
	}
	if ch, _ := Sync(root, files, false); len(ch) != 0 {
		t.Fatalf("after the second write: %v", ch)
	}
}
