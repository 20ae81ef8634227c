// Package load reads schemas/ (the frame schemas and rules.json) into the
// plain model of gen/model and checks it: every schema is well-formed JSON
// using only the keywords the generator understands, each with a value the
// JSON Schema 2020-12 meta-schema allows (santhosh-tekuri/jsonschema/v5
// checks schemas/ in this package's tests), every frame type in
// rules.json has a schema and every schema is used. Every problem is
// collected as a Diagnostic pointing at a file, line, column and JSON
// pointer, printed like a compiler. It reads only; it never writes.
package load

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/snuggen/snuggen/gen/model"
)

// Diagnostic is one problem found in the spec files.
type Diagnostic struct {
	File       string // display path, e.g. "schemas/net-request.schema.json"
	Line, Col  int    // 1-based; 0 when unknown
	Pointer    string // JSON pointer inside File
	Message    string
	Suggestion string // e.g. `did you mean "maxLength"?`
}

func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Col)
	}
	b.WriteString(": error: ")
	if d.Pointer != "" {
		b.WriteString(d.Pointer + ": ")
	}
	b.WriteString(d.Message)
	if d.Suggestion != "" {
		b.WriteString(" (" + d.Suggestion + ")")
	}
	return b.String()
}

// Diagnostics is the error Load returns: every problem it found.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

type file struct {
	name string // in fsys
	data []byte
	root *node
}

type loader struct {
	fsys   fs.FS
	prefix string
	files  map[string]*file
	diags  Diagnostics
	used   map[string]bool
}

// Load reads the spec from fsys (a directory holding *.schema.json and
// rules.json); prefix is the directory's display path in diagnostics, e.g.
// "schemas". A non-nil error is Diagnostics listing every problem.
func Load(fsys fs.FS, prefix string) (*model.Model, error) {
	l := &loader{fsys: fsys, prefix: prefix, files: map[string]*file{}, used: map[string]bool{}}
	names, err := fs.Glob(fsys, "*.schema.json")
	if err != nil {
		return nil, fmt.Errorf("load: list schemas: %w", err)
	}
	sort.Strings(names)
	for _, n := range names {
		l.readFile(n)
	}
	rf := l.readFile("rules.json")
	if rf == nil || len(l.diags) > 0 {
		return nil, l.diags
	}
	for _, n := range names {
		if f := l.files[n]; f != nil && f.root.kind == 'o' {
			l.checkShapes(f, "", f.root, true)
		}
	}
	m := l.build(rf)
	if m == nil {
		// rules.json could not be read: which schemas it names is unknown,
		// so no schema is reported unused.
		return nil, l.diags
	}
	for _, n := range names {
		if !l.used[n] && l.files[n] != nil {
			l.errAt(n, "", "schema file is not used by rules.json (no frame, errorSchema or envelopeSchema names it)", "add it to rules.json frames or remove it")
		}
	}
	if len(l.diags) > 0 {
		sort.SliceStable(l.diags, func(i, j int) bool {
			a, b := l.diags[i], l.diags[j]
			if a.File != b.File {
				return a.File < b.File
			}
			if a.Line != b.Line {
				return a.Line < b.Line
			}
			return a.Col < b.Col
		})
		// The shape check and the model's reading may both report one
		// problem: once is enough.
		l.diags = slices.CompactFunc(l.diags, func(a, b Diagnostic) bool { return a == b })
		return nil, l.diags
	}
	return m, nil
}

func (l *loader) display(name string) string {
	if l.prefix == "" {
		return name
	}
	return path.Join(l.prefix, name)
}

func (l *loader) readFile(name string) *file {
	data, err := fs.ReadFile(l.fsys, name)
	if err != nil {
		l.diags = append(l.diags, Diagnostic{File: l.display(name), Message: "cannot read: " + err.Error()})
		return nil
	}
	root, off, err := parseTree(data)
	if err != nil {
		line, col := lineCol(data, off)
		l.diags = append(l.diags, Diagnostic{File: l.display(name), Line: line, Col: col, Message: "invalid JSON: " + err.Error()})
		return nil
	}
	f := &file{name: name, data: data, root: root}
	l.files[name] = f
	return f
}

// errAt records a diagnostic at pointer ptr of file name.
func (l *loader) errAt(name, ptr, msg, suggestion string) {
	d := Diagnostic{File: l.display(name), Pointer: ptr, Message: msg, Suggestion: suggestion}
	if f := l.files[name]; f != nil {
		_, off := f.root.at(ptr)
		d.Line, d.Col = lineCol(f.data, off)
	}
	l.diags = append(l.diags, d)
}

// checkShapes checks the value of every keyword the generator knows, in
// every subschema of a schema file, the way the JSON Schema 2020-12
// meta-schema does (and a little more strictly: $schema and $id only at a
// file's root), so that a schema the generator would misread is refused
// with its file and line.
func (l *loader) checkShapes(sf *file, ptr string, n *node, root bool) {
	bad := func(key, msg string) { l.errAt(sf.name, ptr+"/"+escape(key), msg, "") }
	if n.kind != 'o' {
		if n.kind != 'b' {
			l.errAt(sf.name, ptr, "a schema here must be an object", "")
		}
		return
	}
	sub := func(key string, x *node) { l.checkShapes(sf, ptr+"/"+escape(key), x, false) }
	for _, m := range n.members {
		x := m.val
		switch m.key {
		case "$schema":
			if !root || x.kind != 's' || x.str != "https://json-schema.org/draft/2020-12/schema" {
				bad(m.key, `$schema must be "https://json-schema.org/draft/2020-12/schema", at a file's root`)
			}
		case "$id":
			u, err := url.Parse(x.str)
			if !root || x.kind != 's' || err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(x.str, "#") {
				bad(m.key, "$id must be an absolute URI without a fragment, at a file's root")
			}
		case "$comment", "title", "description", "contentEncoding", "pattern":
			if x.kind != 's' {
				bad(m.key, m.key+" must be a string")
			}
		case "examples":
			if x.kind != 'a' {
				bad(m.key, "examples must be an array")
			}
		case "enum":
			if x.kind != 'a' || len(x.items) == 0 {
				bad(m.key, "enum must be a non-empty array")
			}
		case "type":
			if x.kind == 'a' && len(x.items) == 0 || x.kind != 'a' && x.kind != 's' {
				bad(m.key, "type must be a type name or a non-empty array of them")
			}
			for _, t := range x.items {
				if t.kind != 's' {
					bad(m.key, "type must be a type name or a non-empty array of them")
					break
				}
			}
		case "required":
			seen := map[string]bool{}
			for _, r := range x.items {
				if r.kind != 's' || seen[r.str] {
					bad(m.key, "required must be an array of distinct property names")
					break
				}
				seen[r.str] = true
			}
			if x.kind != 'a' {
				bad(m.key, "required must be an array of distinct property names")
			}
		case "minLength", "maxLength", "minItems", "maxItems", "maxProperties":
			if v, err := strconv.Atoi(x.num); x.kind != 'n' || err != nil || v < 0 {
				bad(m.key, m.key+" must be a non-negative integer")
			}
		case "properties":
			if x.kind != 'o' {
				bad(m.key, "properties must be an object of schemas")
			}
			for _, p := range x.members {
				l.checkShapes(sf, ptr+"/properties/"+escape(p.key), p.val, false)
			}
		case "additionalProperties", "propertyNames", "items", "if", "then":
			sub(m.key, x)
		case "allOf":
			if x.kind != 'a' || len(x.items) == 0 {
				bad(m.key, "allOf must be a non-empty array of schemas")
			}
			for i, s := range x.items {
				l.checkShapes(sf, ptr+"/allOf/"+strconv.Itoa(i), s, false)
			}
		}
	}
}

func schemaID(f *file, name string) string {
	if id := f.root.get("$id"); id != nil && id.kind == 's' {
		return id.str
	}
	return "file:///schemas/" + name
}

// rulesDoc mirrors rules.json; unknown keys are diagnosed.
type rulesDoc struct {
	Comment          string `json:"$comment"`
	Version          int    `json:"version"`
	ProtocolVersions []int  `json:"protocolVersions"`
	Frames           []struct {
		Type      string `json:"type"`
		Schema    string `json:"schema"`
		Direction string `json:"direction"`
		SizeClass string `json:"sizeClass"`
		Strict    bool   `json:"strict"`
		Answer    string `json:"answer"`
	} `json:"frames"`
	ErrorSchema    string `json:"errorSchema"`
	EnvelopeSchema string `json:"envelopeSchema"`
	DefaultAnswer  string `json:"defaultAnswer"`
	Refusal        struct {
		model.Refusal
		Comment string `json:"$comment"`
	} `json:"refusal"`
	SizeClasses []model.SizeClass `json:"sizeClasses"`
	Limits      []model.Limit     `json:"limits"`
	Backoff     []int             `json:"threadConflictBackoffMs"`
	Recovery    struct {
		Field     string `json:"field"`
		MinLength int    `json:"minLength"`
		MaxLength int    `json:"maxLength"`
	} `json:"requestIdRecovery"`
	Principles []model.Principle `json:"principles"`
	Stages     []model.Stage     `json:"stages"`
	Messages   struct {
		Comment   string            `json:"$comment"`
		Keywords  map[string]string `json:"keywords"`
		TypeNames map[string]string `json:"typeNames"`
	} `json:"messages"`
	Normative   []model.NormativeRule `json:"normativeRules"`
	FrameRules  []model.FrameRule     `json:"frameRules"`
	Refinements []struct {
		ID    string `json:"id"`
		Frame string `json:"frame"`
		Kind  string `json:"kind"`
		Field string `json:"field"`
		When  *struct {
			Field string   `json:"field"`
			In    []string `json:"in"`
		} `json:"when"`
		List            string        `json:"list"`
		CaseInsensitive bool          `json:"caseInsensitive"`
		Message         string        `json:"message"`
		Checks          []model.Check `json:"checks"`
		Algorithm       string        `json:"algorithm"`
	} `json:"refinements"`
	Lists    map[string][]string `json:"lists"`
	Envelope struct {
		Tag     string `json:"tag"`
		Marker  string `json:"marker"`
		Version int    `json:"version"`
	} `json:"envelope"`
	Errors []struct {
		Code      string `json:"code"`
		Retryable any    `json:"retryable"`
		Reserved  bool   `json:"reserved"`
		Extension string `json:"extension"`
		When      string `json:"when"`
	} `json:"errors"`
	Events []struct {
		Name      string `json:"name"`
		Direction string `json:"direction"`
		Data      []struct {
			Name      string   `json:"name"`
			Type      string   `json:"type"`
			MinLength *int     `json:"minLength"`
			MaxLength *int     `json:"maxLength"`
			Minimum   *int64   `json:"minimum"`
			Maximum   *int64   `json:"maximum"`
			Enum      []string `json:"enum"`
		} `json:"data"`
	} `json:"events"`
	Unicode struct {
		Comment       string   `json:"$comment"`
		ACECategories []string `json:"aceCategories"`
		RTLScripts    []string `json:"rtlScripts"`
	} `json:"unicode"`
	Sandbox struct {
		Comment    string               `json:"$comment"`
		ListPrefix string               `json:"listSourcePrefix"`
		Iframe     []string             `json:"iframe"`
		CSP        []model.CSPDirective `json:"csp"`
		HostCSP    struct {
			Comment    string               `json:"$comment"`
			Directives []model.CSPDirective `json:"directives"`
		} `json:"hostCsp"`
	} `json:"sandbox"`
}

// build makes the model from rules.json and the schemas it names, in
// steps; each reports what it finds wrong with l.errAt and goes on, so one
// run names every mistake.
func (l *loader) build(rf *file) *model.Model {
	rd := l.decodeRules(rf)
	if rd == nil {
		return nil
	}
	r := l.rules(rf, rd)
	l.errorCodes(rf, rd, r)
	l.events(rf, rd, r)
	r.CSP = l.expandCSP(rf.name, "/sandbox/csp", rd.Sandbox.CSP, rd.Sandbox.ListPrefix, r)
	r.HostCSP = l.expandCSP(rf.name, "/sandbox/hostCsp/directives", rd.Sandbox.HostCSP.Directives, rd.Sandbox.ListPrefix, r)

	m := &model.Model{Version: rd.Version, ProtocolVersions: rd.ProtocolVersions, Rules: r}
	l.frames(rf, rd, m)
	l.expandStrictFrames(rf.name, m)
	l.refinements(rf, rd, m)
	l.errorAndEnvelope(rf, rd, m)
	for _, n := range l.sortedFiles() {
		f := l.files[n]
		if n == "rules.json" {
			continue
		}
		m.Schemas = append(m.Schemas, model.SchemaFile{Name: n, ID: schemaID(f, n), Contents: f.data})
	}
	return m
}

// decodeRules reads rules.json, every key known; nil when it cannot.
func (l *loader) decodeRules(rf *file) *rulesDoc {
	var rd rulesDoc
	dec := json.NewDecoder(bytes.NewReader(rf.data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rd); err != nil {
		msg := err.Error()
		ptr := ""
		if i := strings.Index(msg, `unknown field "`); i >= 0 {
			key := strings.Trim(msg[i+len("unknown field "):], `"`)
			msg = "unknown key " + msg[i+len("unknown field "):]
			// Point at the key itself (encoding/json says only its name).
			ptr, _ = rf.root.pointerToKey(key)
		}
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) {
			ptr = "/" + strings.ReplaceAll(ute.Field, ".", "/")
		}
		l.errAt(rf.name, ptr, "rules: "+msg, "")
		return nil
	}
	return &rd
}

// rules is the rules' plain parts: limits, size classes, lists, messages
// and the normative rules.
func (l *loader) rules(rf *file, rd *rulesDoc) *model.Rules {
	r := &model.Rules{
		SizeClasses:      rd.SizeClasses,
		Limits:           rd.Limits,
		ThreadConflictMs: rd.Backoff,
		RecoverField:     rd.Recovery.Field,
		ACECategories:    rd.Unicode.ACECategories,
		RTLScripts:       rd.Unicode.RTLScripts,
		RecoverMinLength: rd.Recovery.MinLength,
		RecoverMaxLength: rd.Recovery.MaxLength,
		Principles:       rd.Principles,
		Stages:           rd.Stages,
		Messages:         rd.Messages.Keywords,
		TypeNames:        rd.Messages.TypeNames,
		NormativeRules:   rd.Normative,
		FrameRules:       rd.FrameRules,
		EnvelopeTag:      rd.Envelope.Tag,
		EnvelopeMarker:   rd.Envelope.Marker,
		EnvelopeVersion:  rd.Envelope.Version,
		SandboxTokens:    rd.Sandbox.Iframe,
		DefaultAnswer:    rd.DefaultAnswer,
		Refusal:          rd.Refusal.Refusal,
	}
	l.checkMessages(rf.name, r)
	seenRule := map[string]bool{}
	for i, nr := range rd.Normative {
		ptr := fmt.Sprintf("/normativeRules/%d", i)
		switch {
		case nr.ID == "" || nr.Title == "" || nr.Source == "":
			l.errAt(rf.name, ptr, "a normative rule needs an id, a title and a source", "")
		case seenRule[nr.ID]:
			l.errAt(rf.name, ptr+"/id", fmt.Sprintf("normative rule %q listed twice", nr.ID), "")
		}
		seenRule[nr.ID] = true
	}
	for name, vals := range rd.Lists {
		r.Lists = append(r.Lists, model.List{Name: name, Values: vals})
	}
	sort.Slice(r.Lists, func(i, j int) bool { return r.Lists[i].Name < r.Lists[j].Name })
	if v, ok := r.Limit("PARSE_FAILURE_BUDGET"); ok {
		r.ParseFailureLimit = v
	} else {
		l.errAt(rf.name, "/limits", "no PARSE_FAILURE_BUDGET limit", "")
	}
	for i := range r.SizeClasses {
		sc := &r.SizeClasses[i]
		v, ok := r.Limit(sc.Limit)
		if !ok {
			l.errAt(rf.name, fmt.Sprintf("/sizeClasses/%d/limit", i), fmt.Sprintf("size class %q names unknown limit %q", sc.Name, sc.Limit), suggest(sc.Limit, limitNames(r)))
		}
		sc.Bytes = v
	}
	return r
}

// errorCodes is the error registry.
func (l *loader) errorCodes(rf *file, rd *rulesDoc, r *model.Rules) {
	for i, e := range rd.Errors {
		ec := model.ErrorCode{Code: e.Code, Reserved: e.Reserved, Extension: e.Extension, When: e.When}
		switch v := e.Retryable.(type) {
		case bool:
			ec.Retryable = model.RetryNo
			if v {
				ec.Retryable = model.RetryYes
			}
		case string:
			if v != model.RetryWhileAttemptsRemain {
				l.errAt(rf.name, fmt.Sprintf("/errors/%d/retryable", i), fmt.Sprintf("retryable must be true, false or %q", model.RetryWhileAttemptsRemain), "")
			}
			ec.Retryable = v
		default:
			l.errAt(rf.name, fmt.Sprintf("/errors/%d/retryable", i), "retryable is missing", "")
		}
		r.Errors = append(r.Errors, ec)
	}
}

// events is the events, each with its data object.
func (l *loader) events(rf *file, rd *rulesDoc, r *model.Rules) {
	for i, e := range rd.Events {
		ev := model.Event{Name: e.Name, Direction: e.Direction,
			Object: &model.Object{Name: goish(strings.TrimSuffix(e.Name, "-event")) + "Data", Doc: fmt.Sprintf("the data of a %s event (%s).", e.Name, e.Direction)}}
		for j, d := range e.Data {
			ev.Data = append(ev.Data, model.EventField{Name: d.Name, Type: d.Type, MinLength: d.MinLength, MaxLength: d.MaxLength, Minimum: d.Minimum, Maximum: d.Maximum, Enum: d.Enum})
			t := &model.Type{MinLength: d.MinLength, MaxLength: d.MaxLength, Minimum: d.Minimum, Maximum: d.Maximum, Enum: d.Enum}
			switch d.Type {
			case "string":
				t.Kind = model.String
			case "integer":
				t.Kind = model.Integer
			case "boolean":
				t.Kind = model.Boolean
			case "object":
				t.Kind = model.RawObject
			default:
				l.errAt(rf.name, fmt.Sprintf("/events/%d/data/%d/type", i, j), fmt.Sprintf("event field type %q: want string, integer, boolean or object", d.Type), suggest(d.Type, []string{"string", "integer", "boolean", "object"}))
			}
			ev.Object.Fields = append(ev.Object.Fields, &model.Field{Name: d.Name, Required: true, Type: t, Pointer: fmt.Sprintf("/events/%d/data/%d", i, j)})
		}
		r.Events = append(r.Events, ev)
	}
}

// frames is the frame table, each frame with its schema's root object.
func (l *loader) frames(rf *file, rd *rulesDoc, m *model.Model) {
	r := m.Rules
	frameTypes := map[string]bool{}
	for i, fr := range rd.Frames {
		ptr := fmt.Sprintf("/frames/%d", i)
		if frameTypes[fr.Type] {
			l.errAt(rf.name, ptr+"/type", fmt.Sprintf("frame type %q listed twice", fr.Type), "")
		}
		frameTypes[fr.Type] = true
		if fr.Direction != model.AppToHost && fr.Direction != model.HostToApp {
			l.errAt(rf.name, ptr+"/direction", fmt.Sprintf("direction %q is neither %q nor %q", fr.Direction, model.AppToHost, model.HostToApp), "")
		}
		f := &model.Frame{
			Type: fr.Type, Name: strings.TrimPrefix(fr.Type, "snug:"), Direction: fr.Direction,
			Strict: fr.Strict, SizeClass: fr.SizeClass, Answer: fr.Answer, SchemaFile: fr.Schema,
		}
		if f.Answer == "" && f.Direction == model.AppToHost {
			f.Answer = rd.DefaultAnswer
		}
		found := false
		for _, sc := range r.SizeClasses {
			if sc.Name == fr.SizeClass {
				f.MaxBytes, found = sc.Bytes, true
			}
		}
		if !found {
			l.errAt(rf.name, ptr+"/sizeClass", fmt.Sprintf("unknown size class %q", fr.SizeClass), suggest(fr.SizeClass, classNames(r)))
		}
		sf := l.files[fr.Schema]
		if sf == nil {
			l.errAt(rf.name, ptr+"/schema", fmt.Sprintf("frame %s: schema file %q not found in %s", fr.Type, fr.Schema, l.prefix), suggest(fr.Schema, l.fileNames()))
			continue
		}
		l.used[fr.Schema] = true
		f.SchemaID = schemaID(sf, fr.Schema)
		l.frameRoot(sf, f)
		m.Frames = append(m.Frames, f)
	}
	for _, f := range m.Frames {
		if f.Answer != "" && !frameTypes[f.Answer] {
			l.errAt(rf.name, "/frames", fmt.Sprintf("frame %s answers with unknown type %q", f.Type, f.Answer), "")
		}
	}
}

// refinements is the rules beyond the schemas, each on a known frame and field.
func (l *loader) refinements(rf *file, rd *rulesDoc, m *model.Model) {
	r := m.Rules
	for i, x := range rd.Refinements {
		ref := model.Refinement{ID: x.ID, Frame: x.Frame, Kind: x.Kind, Field: x.Field, List: x.List, CaseInsensitive: x.CaseInsensitive, Message: x.Message, Checks: x.Checks, Algorithm: x.Algorithm}
		if x.When != nil {
			ref.WhenField, ref.WhenIn = x.When.Field, x.When.In
		}
		ptr := fmt.Sprintf("/refinements/%d", i)
		fr := m.FrameByType(x.Frame)
		switch {
		case fr == nil:
			l.errAt(rf.name, ptr+"/frame", fmt.Sprintf("refinement %s names unknown frame %q", x.ID, x.Frame), "")
		case fr.Body.Field(x.Field) == nil:
			l.errAt(rf.name, ptr+"/field", fmt.Sprintf("refinement %s names unknown field %q of %s", x.ID, x.Field, x.Frame), "")
		}
		switch x.Kind {
		case model.ForbidFieldWhen:
			if x.When == nil || (fr != nil && fr.Body.Field(x.When.Field) == nil) {
				l.errAt(rf.name, ptr+"/when", "forbidFieldWhen needs when.field naming a field of the frame", "")
			}
		case model.MapKeyNotInList:
			if r.List(x.List) == nil {
				l.errAt(rf.name, ptr+"/list", fmt.Sprintf("unknown list %q", x.List), suggest(x.List, listNames(r)))
			}
		case model.MapKeysUnique:
		case model.URLReadIdentically:
			if len(x.Checks) == 0 {
				l.errAt(rf.name, ptr+"/checks", "urlReadIdentically needs its checks", "")
			}
		default:
			l.errAt(rf.name, ptr+"/kind", fmt.Sprintf("unknown refinement kind %q", x.Kind), suggest(x.Kind, []string{model.ForbidFieldWhen, model.MapKeyNotInList, model.MapKeysUnique, model.URLReadIdentically}))
		}
		r.Refinements = append(r.Refinements, ref)
	}
}

// errorAndEnvelope is the error object and the envelope (without its marker).
func (l *loader) errorAndEnvelope(rf *file, rd *rulesDoc, m *model.Model) {
	if ef := l.files[rd.ErrorSchema]; ef != nil {
		l.used[rd.ErrorSchema] = true
		t := l.typeOf(ef, "", ef.root, "Error")
		m.Error = t.Object
	} else {
		l.errAt(rf.name, "/errorSchema", fmt.Sprintf("error schema %q not found", rd.ErrorSchema), "")
	}
	if ef := l.files[rd.EnvelopeSchema]; ef != nil {
		l.used[rd.EnvelopeSchema] = true
		t := l.typeOf(ef, "", ef.root, "Envelope")
		if t.Object != nil {
			m.Envelope = t.Object
			var keep []*model.Field
			for _, fl := range t.Object.Fields {
				if fl.Name != rd.Envelope.Marker {
					keep = append(keep, fl)
				}
			}
			m.Envelope.Fields = keep
		}
	} else {
		l.errAt(rf.name, "/envelopeSchema", fmt.Sprintf("envelope schema %q not found", rd.EnvelopeSchema), "")
	}
}

func (l *loader) sortedFiles() []string {
	var out []string
	for n := range l.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func (l *loader) fileNames() []string { return l.sortedFiles() }

func limitNames(r *model.Rules) []string {
	var out []string
	for _, x := range r.Limits {
		out = append(out, x.Name)
	}
	return out
}

func listNames(r *model.Rules) []string {
	var out []string
	for _, x := range r.Lists {
		out = append(out, x.Name)
	}
	return out
}

func classNames(r *model.Rules) []string {
	var out []string
	for _, x := range r.SizeClasses {
		out = append(out, x.Name)
	}
	return out
}

// frameRoot checks a frame schema's root (v, type, strictness) and fills
// f.Body with the fields other than v and type.
func (l *loader) frameRoot(sf *file, f *model.Frame) {
	root := sf.root
	if root.kind != 'o' {
		l.errAt(sf.name, "", "a frame schema must be an object", "")
		return
	}
	if t := root.get("title"); t != nil && t.kind == 's' {
		f.Title = t.str
	} else {
		l.errAt(sf.name, "", "a frame schema needs a title (the type name emitters use)", `add "title": "`+goish(f.Name)+`"`)
	}
	if d := root.get("description"); d != nil {
		f.Doc = d.str
	}
	props := root.get("properties")
	v := props.get("v")
	if c := v.get("const"); c == nil || c.kind != 'n' || c.num != "1" {
		l.errAt(sf.name, "/properties/v", "a frame schema's v must be {\"const\": 1}", "")
	}
	tp := props.get("type")
	if c := tp.get("const"); c == nil || c.kind != 's' || c.str != f.Type {
		l.errAt(sf.name, "/properties/type", fmt.Sprintf("type must be {\"const\": %q} as rules.json says", f.Type), "")
	}
	req := map[string]bool{}
	if r := root.get("required"); r != nil {
		for _, it := range r.items {
			req[it.str] = true
		}
	}
	if !req["v"] || !req["type"] {
		l.errAt(sf.name, "/required", "a frame schema must require v and type", "")
	}
	ap := root.get("additionalProperties")
	strict := ap != nil && ap.kind == 'b' && !ap.b
	if strict != f.Strict {
		if f.Strict {
			l.errAt(sf.name, "", fmt.Sprintf("rules.json marks %s strict but the schema allows additional properties", f.Type), `add "additionalProperties": false`)
		} else {
			l.errAt(sf.name, "/additionalProperties", fmt.Sprintf("the schema is strict but rules.json does not mark %s strict", f.Type), `add "strict": true to its rules.json entry`)
		}
	}
	t := l.typeOf(sf, "", root, f.Title)
	if t.Object == nil {
		return
	}
	body := *t.Object
	body.Fields = nil
	for _, fl := range t.Object.Fields {
		if fl.Name != "v" && fl.Name != "type" {
			body.Fields = append(body.Fields, fl)
		}
	}
	f.Body = &body
}

var knownKeywords = []string{
	"$schema", "$id", "$ref", "$comment", "title", "description", "type", "properties", "required",
	"additionalProperties", "items", "minLength", "maxLength", "minimum", "maximum", "enum", "const",
	"minItems", "maxItems", "maxProperties", "propertyNames", "allOf", "if", "then", "default",
	"contentEncoding", "examples", "pattern",
}

func isKnown(k string) bool {
	for _, x := range knownKeywords {
		if x == k {
			return true
		}
	}
	return false
}

// typeOf converts the schema node n (at pointer ptr of file sf) into a type.
// name is the struct name to use when n has no title.
func (l *loader) typeOf(sf *file, ptr string, n *node, name string) *model.Type {
	t := &model.Type{}
	if n == nil || n.kind != 'o' {
		if n != nil && n.kind == 'b' && n.b {
			return &model.Type{Kind: model.Any}
		}
		l.errAt(sf.name, ptr, "a schema here must be an object", "")
		return &model.Type{Kind: model.Any}
	}
	for _, m := range n.members {
		if !isKnown(m.key) {
			l.errAt(sf.name, ptr+"/"+escape(m.key), fmt.Sprintf("unknown keyword %q", m.key), suggest(m.key, knownKeywords))
		}
	}
	if ref := n.get("$ref"); ref != nil {
		target := ref.str
		rf := l.files[target]
		if rf == nil {
			l.errAt(sf.name, ptr+"/$ref", fmt.Sprintf("$ref %q is not a schema file in %s", target, l.prefix), suggest(target, l.fileNames()))
			return &model.Type{Kind: model.Any}
		}
		l.used[target] = true
		rt := l.typeOf(rf, "", rf.root, name)
		rt.Ref = target
		return rt
	}
	l.bounds(sf, ptr, n, t)
	types := typeNames(n)
	if t.Pattern != "" && !(len(types) == 1 && types[0] == "string") {
		l.errAt(sf.name, ptr+"/pattern", `pattern needs "type": "string"`, "")
	}
	switch {
	case len(types) == 0 && (t.Enum != nil || t.Const != nil):
		t.Kind = model.String
	case len(types) == 0:
		if n.get("properties") != nil {
			types = []string{"object"}
		} else {
			t.Kind = model.Any
		}
	case len(types) > 1:
		sort.Strings(types)
		if strings.Join(types, ",") != "boolean,null,number,string" {
			l.errAt(sf.name, ptr+"/type", "the generator supports one type, or the scalar set [string, number, boolean, null]", "")
		}
		t.Kind = model.Scalar
	}
	if len(types) == 1 {
		l.oneType(sf, ptr, n, name, t, types[0])
	}
	return t
}

// bounds reads a schema's bounds, default, pattern, enum and const into t.
func (l *loader) bounds(sf *file, ptr string, n *node, t *model.Type) {
	intp := func(key string) *int {
		x := n.get(key)
		if x == nil {
			return nil
		}
		v, err := strconv.Atoi(x.num)
		if x.kind != 'n' || err != nil || v < 0 {
			l.errAt(sf.name, ptr+"/"+key, key+" must be a non-negative integer", "")
			return nil
		}
		return &v
	}
	int64p := func(key string) *int64 {
		x := n.get(key)
		if x == nil {
			return nil
		}
		v, err := strconv.ParseInt(x.num, 10, 64)
		if x.kind != 'n' || err != nil {
			l.errAt(sf.name, ptr+"/"+key, key+" must be an integer (the generator supports integer bounds only)", "")
			return nil
		}
		return &v
	}
	t.MinLength, t.MaxLength = intp("minLength"), intp("maxLength")
	t.Minimum, t.Maximum = int64p("minimum"), int64p("maximum")
	t.MinItems, t.MaxItems, t.MaxProperties = intp("minItems"), intp("maxItems"), intp("maxProperties")
	if d := n.get("default"); d != nil && d.kind == 's' {
		t.Default = d.str
	}
	if p := n.get("pattern"); p != nil {
		if p.kind != 's' {
			l.errAt(sf.name, ptr+"/pattern", "pattern must be a string", "")
		} else if err := portablePattern(p.str); err != nil {
			l.errAt(sf.name, ptr+"/pattern", "pattern "+strconv.Quote(p.str)+": "+err.Error(), "write it with ASCII literals, [ranges], (?:groups), |, quantifiers, ^ and $, and escapes of the syntax characters ^$\\.*+?()[]{}|/ only")
		} else {
			t.Pattern = p.str
		}
	}
	if e := n.get("enum"); e != nil {
		for i, it := range e.items {
			if it.kind != 's' {
				l.errAt(sf.name, fmt.Sprintf("%s/enum/%d", ptr, i), "the generator supports string enums only", "")
				continue
			}
			t.Enum = append(t.Enum, it.str)
		}
	}
	if c := n.get("const"); c != nil {
		if c.kind != 's' && !(ptr == "/properties/v" || ptr == "/properties/snug") {
			l.errAt(sf.name, ptr+"/const", "the generator supports string consts only (v and snug excepted)", "")
		}
		if c.kind == 's' {
			s := c.str
			t.Const = &s
		}
	}
}

// typeNames is a schema's type keyword as a list.
func typeNames(n *node) []string {
	var types []string
	if tn := n.get("type"); tn != nil {
		if tn.kind == 's' {
			types = []string{tn.str}
		} else {
			for _, it := range tn.items {
				types = append(types, it.str)
			}
		}
	}
	return types
}

// oneType is the kind of a schema of one type, with its items, properties
// or values.
func (l *loader) oneType(sf *file, ptr string, n *node, name string, t *model.Type, typ string) {
	switch typ {
	case "string":
		t.Kind = model.String
	case "integer":
		t.Kind = model.Integer
	case "number":
		t.Kind = model.Number
	case "boolean":
		t.Kind = model.Boolean
	case "array":
		t.Kind = model.Array
		items := n.get("items")
		if items == nil {
			t.Elem = &model.Type{Kind: model.Any}
		} else {
			t.Elem = l.typeOf(sf, ptr+"/items", items, name+"Item")
		}
	case "object":
		props := n.get("properties")
		ap := n.get("additionalProperties")
		switch {
		case props != nil:
			t.Kind = model.Struct
			t.Object = l.object(sf, ptr, n, name)
		case ap != nil && ap.kind == 'o':
			t.Kind = model.Map
			t.Elem = l.typeOf(sf, ptr+"/additionalProperties", ap, name+"Value")
			if pn := n.get("propertyNames"); pn != nil {
				pt := l.typeOf(sf, ptr+"/propertyNames", pn, name+"Key")
				t.KeyMinLength, t.KeyMaxLength = pt.MinLength, pt.MaxLength
			}
		default:
			t.Kind = model.RawObject
		}
	case "null":
		l.errAt(sf.name, ptr+"/type", "a null-only type is not supported", "")
	default:
		l.errAt(sf.name, ptr+"/type", fmt.Sprintf("unknown type %q", typ), suggest(typ, []string{"string", "integer", "number", "boolean", "array", "object"}))
	}
}

func (l *loader) object(sf *file, ptr string, n *node, name string) *model.Object {
	o := &model.Object{Name: name}
	if t := n.get("title"); t != nil && t.kind == 's' {
		o.Name = t.str
	}
	if d := n.get("description"); d != nil {
		o.Doc = d.str
	}
	req := map[string]bool{}
	if r := n.get("required"); r != nil {
		for _, it := range r.items {
			req[it.str] = true
		}
	}
	props := n.get("properties")
	for _, m := range props.members {
		fp := ptr + "/properties/" + escape(m.key)
		fl := &model.Field{Name: m.key, Required: req[m.key], Pointer: fp}
		if d := m.val.get("description"); d != nil {
			fl.Doc = d.str
		}
		fl.Type = l.typeOf(sf, fp, m.val, goish(m.key))
		o.Fields = append(o.Fields, fl)
		delete(req, m.key)
	}
	for k := range req {
		l.errAt(sf.name, ptr+"/required", fmt.Sprintf("required %q is not a property", k), "")
	}
	if ap := n.get("additionalProperties"); ap != nil {
		if ap.kind == 'b' && !ap.b {
			o.Strict = true
		} else {
			l.errAt(sf.name, ptr+"/additionalProperties", "with properties, additionalProperties may only be false", "")
		}
	}
	if all := n.get("allOf"); all != nil {
		for i, it := range all.items {
			cp := fmt.Sprintf("%s/allOf/%d", ptr, i)
			c, ok := l.cond(it)
			if !ok {
				l.errAt(sf.name, cp, `the generator supports allOf entries of the form {"if": {"properties": {F: {"const": X}, ...}, "required": [F, ...]}, "then": {"required": [...], "properties": {G: {"const": Y}}}} with X, Y a string or a boolean and every F of the if required`, "")
				continue
			}
			for _, r := range c.Require {
				if o.Field(r) == nil {
					l.errAt(sf.name, cp+"/then/required", fmt.Sprintf("%q is not a property", r), "")
				}
			}
			for _, p := range c.Pins {
				fl := o.Field(p.Field)
				if fl == nil {
					l.errAt(sf.name, cp+"/then/properties/"+escape(p.Field), fmt.Sprintf("%q is not a property", p.Field), "")
					continue
				}
				if k := fl.Type.Kind; !(k == model.Boolean && isBool(p.Equals) || k == model.String && !isBool(p.Equals)) {
					l.errAt(sf.name, cp+"/then/properties/"+escape(p.Field), fmt.Sprintf("const %v does not fit %q, a %v", p.Equals, p.Field, k), "")
				}
			}
			for _, w := range c.When {
				if o.Field(w.Field) == nil {
					l.errAt(sf.name, cp+"/if/properties/"+escape(w.Field), fmt.Sprintf("%q is not a property", w.Field), "")
				}
			}
			o.Conds = append(o.Conds, c)
		}
	}
	return o
}

func (l *loader) cond(n *node) (model.Cond, bool) {
	var c model.Cond
	ifn, then := n.get("if"), n.get("then")
	if ifn == nil || then == nil || len(n.members) != 2 || len(ifn.members) != 2 {
		return c, false
	}
	props, req := ifn.get("properties"), ifn.get("required")
	if props == nil || len(props.members) == 0 || req == nil || len(req.items) != len(props.members) {
		return c, false
	}
	// Every field of the if is required by it: an absent field would
	// satisfy {"const": X} and the condition would hold without it.
	for _, m := range props.members {
		v, ok := constOf(m.val)
		if !ok || !slices.ContainsFunc(req.items, func(it *node) bool { return it.kind == 's' && it.str == m.key }) {
			return c, false
		}
		c.When = append(c.When, model.Pin{Field: m.key, Equals: v})
	}
	for _, m := range then.members {
		switch m.key {
		case "required":
			for _, it := range m.val.items {
				c.Require = append(c.Require, it.str)
			}
		case "properties":
			for _, p := range m.val.members {
				v, ok := constOf(p.val)
				if !ok {
					return c, false
				}
				c.Pins = append(c.Pins, model.Pin{Field: p.key, Equals: v})
			}
		default:
			return c, false
		}
	}
	return c, len(c.Require)+len(c.Pins) > 0
}

// constOf reads a schema of the form {"const": X} with X a string or a bool.
func constOf(n *node) (any, bool) {
	if n == nil || len(n.members) != 1 {
		return nil, false
	}
	k := n.get("const")
	switch {
	case k == nil:
		return nil, false
	case k.kind == 's':
		return k.str, true
	case k.kind == 'b':
		return k.b, true
	}
	return nil, false
}

func isBool(v any) bool { _, ok := v.(bool); return ok }

func escape(k string) string {
	return strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1")
}

// goish turns "net-request" or "openUrl" into "NetRequest" / "OpenUrl" for
// default names in messages and untitled structs.
func goish(s string) string {
	var b strings.Builder
	up := true
	for _, r := range s {
		if r == '-' || r == '_' {
			up = true
			continue
		}
		if up {
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// suggest returns `did you mean "x"?` for the closest candidate, if any is close.
func suggest(got string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		d := distance(strings.ToLower(got), strings.ToLower(c))
		if strings.HasPrefix(strings.ToLower(c), strings.ToLower(got)) && len(got) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" || bestD > max(2, len(got)/3) {
		return ""
	}
	return fmt.Sprintf("did you mean %q?", best)
}

func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// expandCSP copies directives, expanding each "$NAME" source into prefix
// plus every entry of list NAME.
func (l *loader) expandCSP(file, ptr string, ds []model.CSPDirective, prefix string, r *model.Rules) []model.CSPDirective {
	var out []model.CSPDirective
	for i, d := range ds {
		var srcs []string
		for _, s := range d.Sources {
			if name, ok := strings.CutPrefix(s, "$"); ok {
				vals := r.List(name)
				if vals == nil {
					l.errAt(file, fmt.Sprintf("%s/%d/sources", ptr, i), fmt.Sprintf("unknown list %q", name), suggest(name, listNames(r)))
				}
				for _, v := range vals {
					srcs = append(srcs, prefix+v)
				}
				continue
			}
			srcs = append(srcs, s)
		}
		out = append(out, model.CSPDirective{Name: d.Name, Sources: srcs})
	}
	return out
}

// portablePattern reports why a JSON Schema pattern is outside the subset
// both emitted validators read alike, nil when it is inside: Go's regexp
// (RE2) and JavaScript's RegExp with the u flag. The subset is ASCII
// literals and classes, non-capturing groups, alternation, the quantifiers
// * + ? {n,m}, ^ and $ (of the whole text), and a backslash only before a
// syntax character (which both read as that character). No ., no \d \w \s
// or \b (JS and Go differ on line terminators and Unicode), no flags, no
// backreferences or lookaround (RE2 has none).
func portablePattern(p string) error {
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c >= 0x80 || c < 0x20:
			return fmt.Errorf("a character outside printable ASCII at byte %d", i)
		case c == '\\':
			if i+1 >= len(p) || !strings.ContainsRune(`^$\.*+?()[]{}|/`, rune(p[i+1])) {
				return fmt.Errorf("the escape at byte %d is not of a syntax character", i)
			}
			i++
		case c == '(' && strings.HasPrefix(p[i:], "(?") && !strings.HasPrefix(p[i:], "(?:"):
			return fmt.Errorf("the group at byte %d sets flags or looks around", i)
		}
	}
	re, err := syntax.Parse(p, syntax.Perl)
	if err != nil {
		return err
	}
	var walk func(re *syntax.Regexp) error
	walk = func(re *syntax.Regexp) error {
		switch re.Op {
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			return fmt.Errorf(". matches other characters in Go and JS")
		case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return fmt.Errorf("%v is read differently in Go and JS", re)
		case syntax.OpCharClass:
			for i := 0; i < len(re.Rune); i += 2 {
				if re.Rune[i+1] >= 0x80 {
					return fmt.Errorf("the class %v reaches past ASCII (a negated class or \\d \\w \\s)", re)
				}
			}
		}
		for _, sub := range re.Sub {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(re)
}

// messagePlaceholders are the {names} each message template may use.
var messagePlaceholders = map[string][]string{
	"type": {"type"}, "requiredWhen": {"when"}, "const": {"value"}, "constWhen": {"value", "when"},
	"when": {"field", "value"}, "whenJoin": {},
	"enum": {"values"}, "minLength": {"limit"}, "maxLength": {"limit"}, "minimum": {"limit"}, "maximum": {"limit"},
	"minItems": {"limit"}, "maxItems": {"limit"}, "maxProperties": {"limit"}, "pattern": {"pattern"},
}

// checkMessages holds rules.json messages to what the validators need: a
// template for every keyword of a stage (propertyNames excepted: it says
// minLength's or maxLength's) and for requiredWhen, constWhen, when,
// whenJoin and minLength1, each using only its placeholders, and a type name for every
// kind.
func (l *loader) checkMessages(file string, r *model.Rules) {
	need := []string{"requiredWhen", "constWhen", "when", "whenJoin", "minLength1", "minLength", "maxLength"}
	for _, st := range r.Stages {
		for _, k := range st.Keywords {
			if k != "propertyNames" {
				need = append(need, k)
			}
		}
	}
	for _, k := range need {
		if _, ok := r.Messages[k]; !ok {
			l.errAt(file, "/messages/keywords", fmt.Sprintf("no message for %q", k), "")
		}
	}
	for k, tmpl := range r.Messages {
		allowed := messagePlaceholders[k]
		for rest := tmpl; ; {
			i := strings.IndexByte(rest, '{')
			if i < 0 {
				break
			}
			j := strings.IndexByte(rest[i:], '}')
			if j < 0 {
				l.errAt(file, "/messages/keywords/"+escape(k), "a { without its }", "")
				break
			}
			if name := rest[i+1 : i+j]; !slices.Contains(allowed, name) {
				l.errAt(file, "/messages/keywords/"+escape(k), fmt.Sprintf("unknown placeholder {%s}", name), fmt.Sprintf("%s may use %v", k, allowed))
			}
			rest = rest[i+j+1:]
		}
	}
	for _, k := range []string{"string", "integer", "number", "boolean", "object", "array", "scalar"} {
		if r.TypeNames[k] == "" {
			l.errAt(file, "/messages/typeNames", fmt.Sprintf("no type name for %q", k), "")
		}
	}
}

// StrictFramesPlaceholder in a principle's text or a normative rule's title
// stands for the frame table's strict frames, so the prose never restates the
// list by hand (issue 26 item 13: R2 once named two of the three).
const StrictFramesPlaceholder = "{strictFrames}"

var prosePlaceholder = regexp.MustCompile(`\{[A-Za-z]+\}`)

// expandStrictFrames replaces StrictFramesPlaceholder with the strict frames
// of the frame table, in table order ("`a`, `b` and `c`"), and refuses any
// other {placeholder} in that prose.
func (l *loader) expandStrictFrames(file string, m *model.Model) {
	var names []string
	for _, f := range m.Frames {
		if f.Strict {
			names = append(names, "`"+f.Type+"`")
		}
	}
	list := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	expand := func(ptr, s string) string {
		s = strings.ReplaceAll(s, StrictFramesPlaceholder, list)
		if p := prosePlaceholder.FindString(s); p != "" {
			l.errAt(file, ptr, fmt.Sprintf("unknown placeholder %s: prose expands only %s", p, StrictFramesPlaceholder), suggest(p, []string{StrictFramesPlaceholder}))
		}
		return s
	}
	for i := range m.Rules.Principles {
		p := &m.Rules.Principles[i]
		p.Text = expand(fmt.Sprintf("/principles/%d/text", i), p.Text)
	}
	for i := range m.Rules.NormativeRules {
		nr := &m.Rules.NormativeRules[i]
		nr.Title = expand(fmt.Sprintf("/normativeRules/%d/title", i), nr.Title)
	}
}
