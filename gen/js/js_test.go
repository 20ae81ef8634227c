package js

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/gen/model"
	"github.com/snuggen/snuggen/internal/testenv"
	"github.com/snuggen/snuggen/schemas"
)

var update = flag.Bool("update", false, "rewrite the committed generated JS files")

const repoRoot = "../.."

func loadModel(t *testing.T) *model.Model {
	t.Helper()
	m, err := load.Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatalf("load schemas: %v", err)
	}
	return m
}

func generate(t *testing.T) []model.File {
	t.Helper()
	files, err := Generate(loadModel(t), os.DirFS(repoRoot))
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

// A schema change flows through: an optional field added to a temp copy of
// schemas/ appears in the generated validator, typings and bundle, and the
// generated validator enforces its constraint when node runs it.
func TestSchemaChangeFlowsThrough(t *testing.T) {
	dir := t.TempDir()
	ents, err := fs.ReadDir(schemas.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := fs.ReadFile(schemas.FS, e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if e.Name() == "host-event.schema.json" {
			var s map[string]any
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			s["properties"].(map[string]any)["priority"] = map[string]any{"type": "integer", "minimum": 0, "maximum": 5}
			if b, err = json.MarshalIndent(s, "", "  "); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := load.Load(os.DirFS(dir), dir)
	if err != nil {
		t.Fatalf("load the changed copy: %v", err)
	}
	files, err := Generate(m, os.DirFS(repoRoot))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, f := range files {
		p := filepath.Join(out, filepath.FromSlash(f.Name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, f.Contents, 0o644); err != nil {
			t.Fatal(err)
		}
		switch f.Name {
		case PathTypes:
			if !strings.Contains(string(f.Contents), "priority?: number;") {
				t.Errorf("%s has no priority field", f.Name)
			}
		case PathScript, PathFrames, PathValidate:
			if !strings.Contains(string(f.Contents), "priority") {
				t.Errorf("%s does not mention the new field", f.Name)
			}
		}
	}
	node := testenv.Node(t)
	script := `import { checkFrame } from "./runtime-js/dist/frames.mjs";
const f = (priority) => ({ v: 1, type: "snug:host-event", event: "hint", priority });
const a = checkFrame(f(5)), b = checkFrame(f(6)), c = checkFrame(f("high"));
console.log(JSON.stringify([a.verdict, b.errors.map((e) => e.rule), c.errors.map((e) => e.rule)]));`
	if err := os.WriteFile(filepath.Join(out, "probe.mjs"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "probe.mjs")
	cmd.Dir = out
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node probe.mjs: %v\n%s", err, got)
	}
	if want := `["accept",["maximum"],["type"]]`; strings.TrimSpace(string(got)) != want {
		t.Errorf("changed schema under node: got %s, want %s", got, want)
	}
}

func TestScreaming(t *testing.T) {
	for in, want := range map[string]string{
		"net-request": "NET_REQUEST", "lastInsertRowid": "LAST_INSERT_ROWID", "DBResult": "DB_RESULT",
		"OpenURLResult": "OPEN_URL_RESULT", "GET": "GET", "kvGet": "KV_GET", "theme-change": "THEME_CHANGE",
	} {
		if got := screaming(in); got != want {
			t.Errorf("screaming(%q) = %q, want %q", in, got, want)
		}
	}
}

// The generated sizeClass (the runtime refuses a frame past it before
// sending) gives every frame type, and a type it does not know, the class
// Go's frame.SizeClass gives.
func TestSizeClassAgreesWithGo(t *testing.T) {
	m := loadModel(t)
	types := []string{"snug:not-a-type", ""}
	want := map[string]int{}
	for _, f := range m.Frames {
		types = append(types, f.Type)
	}
	for _, typ := range types {
		want[typ] = frame.SizeClass(typ)
	}
	node := testenv.Node(t)
	abs, err := filepath.Abs(filepath.Join(repoRoot, "runtime-js", "gen", "constants.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(types)
	script := fmt.Sprintf(`import { sizeClass } from %q;
console.log(JSON.stringify(Object.fromEntries(%s.map((t) => [t, sizeClass(t)]))));`, "file://"+filepath.ToSlash(abs), in)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got, err := exec.CommandContext(ctx, node, "--input-type=module", "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, got)
	}
	var js map[string]int
	if err := json.Unmarshal(got, &js); err != nil {
		t.Fatalf("node printed %s: %v", got, err)
	}
	for _, typ := range types {
		if js[typ] != want[typ] {
			t.Errorf("sizeClass(%q) = %d in JS, %d in Go", typ, js[typ], want[typ])
		}
	}
}

// TestConstantsInline holds constants.mjs to the order that lets esbuild
// inline a string or number constant into the module that uses it: esbuild
// does so only for the primitive constants no array or object constant
// precedes in their file. A variant then carries a size class as the number
// it is, not as a variable (−19 B min+gzip ask-only when it landed).
func TestConstantsInline(t *testing.T) {
	var consts, askOnly []byte
	for _, f := range generate(t) {
		switch f.Name {
		case "runtime-js/gen/constants.mjs":
			consts = f.Contents
		case "runtime-js/dist/shaken/snug-ask.js":
			askOnly = f.Contents
		}
	}
	table := ""
	for _, line := range strings.Split(string(consts), "\n") {
		name, value, ok := strings.Cut(strings.TrimPrefix(line, "export const "), " = ")
		if !ok || line == name {
			continue
		}
		switch {
		case strings.HasPrefix(value, "[") || strings.HasPrefix(value, "{"):
			if table == "" {
				table = name
			}
		case strings.HasPrefix(value, "(") || strings.Contains(value, "=>"):
			// a function: neither blocks inlining nor is inlined
		case table != "":
			t.Errorf("constants.mjs: %s comes after the table %s, so esbuild keeps it a variable in every bundle: put it before the arrays and objects", name, table)
		}
	}
	if table == "" {
		t.Fatal("constants.mjs has no array or object constant: did the template change?")
	}
	if bytes.Contains(askOnly, []byte("=262144")) || !bytes.Contains(askOnly, []byte(",262144,")) {
		t.Error("dist/shaken/snug-ask.js does not pass its size class as the number 262144")
	}
}
