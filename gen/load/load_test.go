package load

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/snuggen/snuggen/gen/model"
	"github.com/snuggen/snuggen/schemas"
)

func TestLoadEmbedded(t *testing.T) {
	m, err := Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	// One frame per row of rules.json's frame table.
	raw, err := schemas.FS.ReadFile(schemas.RulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var table struct{ Frames []json.RawMessage }
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	if len(m.Frames) != len(table.Frames) || len(m.Frames) < 13 {
		t.Fatalf("frames = %d, want the %d of rules.json", len(m.Frames), len(table.Frames))
	}
	nr := m.FrameByType("snug:net-request")
	if nr == nil || !nr.Strict || nr.MaxBytes != 1<<20+64<<10 || nr.Answer != "snug:net-response" {
		t.Fatalf("net-request = %+v", nr)
	}
	var url *model.Field
	for _, f := range nr.Body.Fields {
		if f.Name == "url" {
			url = f
		}
	}
	if url == nil || !url.Required || *url.Type.MaxLength != 4096 {
		t.Fatalf("net-request url = %+v", url)
	}
	if got := m.FrameByType("snug:app-message").Answer; got != "snug:app-response" {
		t.Errorf("app-message answer = %q", got)
	}
	if m.Error == nil || m.Envelope == nil || len(m.Rules.CSP) == 0 {
		t.Fatalf("error/envelope/csp missing")
	}
	if got := m.Rules.CSP[1].Sources; strings.Join(got, " ") != "'unsafe-inline' https://cdn.jsdelivr.net https://cdnjs.cloudflare.com https://unpkg.com" {
		t.Errorf("script-src = %v", got)
	}
}

// copySchemas copies schemas/ into a map FS so a test can break one file.
func copySchemas(t *testing.T) fstest.MapFS { return copySpec(t, "../../schemas") }

// copySpec copies the spec in dir into a map FS so a test can break one
// file.
func copySpec(t *testing.T, dir string) fstest.MapFS {
	t.Helper()
	fsys := fstest.MapFS{}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fsys[e.Name()] = &fstest.MapFile{Data: b}
	}
	return fsys
}

func TestLoadDiagnostics(t *testing.T) {
	cases := []struct {
		name, file, old, new, want string
	}{
		{"typo keyword", "net-request.schema.json", `"url": { "type": "string", "minLength": 1, "maxLength": 4096 }`, `"url": { "type": "string", "minLength": 1, "maxLen": 4096 }`,
			`schemas/net-request.schema.json:14:48: error: /properties/url/maxLen: unknown keyword "maxLen" (did you mean "maxLength"?)`},
		{"bad json", "app-cancel.schema.json", `"required": [`, `"required" [`, `schemas/app-cancel.schema.json:7:14: error: invalid JSON: expected ':' after key "required"`},
		{"meta-schema", "app-cancel.schema.json", `"minLength": 1, "maxLength": 128 }`, `"minLength": -1, "maxLength": 128 }`, `schemas/app-cancel.schema.json`},
		{"strict mismatch", "open-url-request.schema.json", `"additionalProperties": false,`, ``, `rules.json marks snug:open-url-request strict`},
		{"missing schema", "rules.json", `"schema": "host-event.schema.json"`, `"schema": "host-evnt.schema.json"`, `did you mean "host-event.schema.json"?`},
		{"unknown size class", "rules.json", `"sizeClass": "db" }`, `"sizeClass": "dbb" }`, `unknown size class "dbb"`},
		{"normative rule twice", "rules.json", `{ "id": "R2", "source"`, `{ "id": "R1", "source"`, `normative rule "R1" listed twice`},
		{"normative rule without a title", "rules.json", `"title": "Push hints:`, `"titel": "Push hints:`, `unknown key "titel"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fsys := copySchemas(t)
			data := string(fsys[c.file].Data)
			if !strings.Contains(data, c.old) {
				t.Fatalf("%s does not contain %q", c.file, c.old)
			}
			fsys[c.file] = &fstest.MapFile{Data: []byte(strings.Replace(data, c.old, c.new, 1))}
			_, err := Load(fsys, "schemas")
			if err == nil {
				t.Fatal("Load succeeded on a broken spec")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("diagnostics:\n%v\nwant to contain %q", err, c.want)
			}
		})
	}
}

func TestLoadUnusedSchema(t *testing.T) {
	fsys := copySchemas(t)
	fsys["stray.schema.json"] = &fstest.MapFile{Data: []byte(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://x/stray", "type": "object"}`)}
	_, err := Load(fsys, "schemas")
	if err == nil || !strings.Contains(err.Error(), "schemas/stray.schema.json:1:1: error: schema file is not used by rules.json") {
		t.Fatalf("err = %v", err)
	}
}

// TestPortablePattern holds the pattern subset to what Go's regexp and JS's
// RegExp (u flag) read alike.
func TestPortablePattern(t *testing.T) {
	for _, p := range []string{`^[a-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$`, `^a|b$`, `^\.x$`, `^[0-9]+\/[0-9]+$`, `x*`} {
		if err := portablePattern(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	for p, why := range map[string]string{
		`^.+$`:     ". matches",
		`^\d+$`:    "escape",
		`^\w$`:     "escape",
		`(?i)abc`:  "flags",
		`^(?=a)a$`: "flags or looks around",
		`^[^a]$`:   "past ASCII",
		`^é$`:      "outside printable ASCII",
		`(?m)^a$`:  "flags",
		`^\-$`:     "escape",
		`^(a$`:     "missing closing",
		`\bword\b`: "escape",
		"^a\tb$":   "outside printable ASCII",
	} {
		err := portablePattern(p)
		if err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: %v, want an error about %q", p, err, why)
		}
	}
}

// TestR2NamesEveryStrictFrame: R2's text and its normative rule name the
// strict frames from the frame table, all of them and only them (issue 26
// item 13: the text once left out snug:save-file-request).
func TestR2NamesEveryStrictFrame(t *testing.T) {
	m, err := Load(schemas.FS, "schemas")
	if err != nil {
		t.Fatal(err)
	}
	var prose []string
	for _, p := range m.Rules.Principles {
		if p.ID == "R2" {
			prose = append(prose, p.Text)
		}
	}
	for _, nr := range m.Rules.NormativeRules {
		if nr.ID == "R2" {
			prose = append(prose, nr.Title)
		}
	}
	if len(prose) != 2 {
		t.Fatalf("found %d R2 texts, want the principle and the normative rule", len(prose))
	}
	strict := 0
	for _, f := range m.Frames {
		for _, s := range prose {
			if named := strings.Contains(s, "`"+f.Type+"`"); named != f.Strict {
				t.Errorf("R2 names %s: %v, but strict: %v, in %q", f.Type, named, f.Strict, s)
			}
		}
		if f.Strict {
			strict++
		}
	}
	if strict < 3 {
		t.Errorf("%d strict frames, want net-request, open-url-request and save-file-request at least", strict)
	}
}
