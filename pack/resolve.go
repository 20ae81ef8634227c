package pack

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// resolveFS resolves an import inside Options.FS the way a bundler does on
// disk: relative paths with extension and index probing, "/x" from the app
// root, and bare package names from node_modules folders (package.json
// exports ".", module, browser or main).
func (b *builder) resolveFS(a api.OnResolveArgs, msgs *pluginMsgs) (api.OnResolveResult, error) {
	dir, _ := a.PluginData.(string)
	if dir == "" {
		dir = b.src.root
	}
	notFound := func() (api.OnResolveResult, error) {
		return api.OnResolveResult{Errors: []api.Message{{Text: msgs.put(Diagnostic{Code: "ref.missing",
			Message: fmt.Sprintf("cannot resolve %q", a.Path),
			Why:     "every local file and package the app imports is bundled at build time",
			Fix:     "check the path (relative to the importing file) or add the package to node_modules"})}}}, nil
	}
	p := a.Path
	switch {
	case strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == "..":
		p = cleanFS(joinFS(dir, p))
	case strings.HasPrefix(p, "/"):
		p = cleanFS(strings.TrimPrefix(p, "/"))
	default:
		if a.Kind == api.ResolveCSSURLToken || a.Kind == api.ResolveCSSImportRule {
			// CSS reads a bare url(x.png) as relative, then as a package.
			if r, ok := b.probe(cleanFS(joinFS(dir, p))); ok {
				return api.OnResolveResult{Path: r, Namespace: nsFS}, nil
			}
		}
		if r, ok := b.resolvePackage(dir, p); ok {
			return api.OnResolveResult{Path: r, Namespace: nsFS}, nil
		}
		return notFound()
	}
	if r, ok := b.probe(p); ok {
		return api.OnResolveResult{Path: r, Namespace: nsFS}, nil
	}
	return notFound()
}

var probeExts = []string{"", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".json", ".css"}

func (b *builder) probe(p string) (string, bool) {
	if !fs.ValidPath(p) {
		return "", false
	}
	for _, ext := range probeExts {
		if fi, err := fs.Stat(b.src.fsys, p+ext); err == nil && !fi.IsDir() {
			return p + ext, true
		}
	}
	for _, ext := range probeExts[1:] {
		q := joinFS(p, "index"+ext)
		if fi, err := fs.Stat(b.src.fsys, q); err == nil && !fi.IsDir() {
			return q, true
		}
	}
	return "", false
}

func (b *builder) resolvePackage(dir, spec string) (string, bool) {
	name, sub := spec, ""
	parts := strings.SplitN(spec, "/", 3)
	if strings.HasPrefix(spec, "@") && len(parts) >= 2 {
		name = parts[0] + "/" + parts[1]
		if len(parts) == 3 {
			sub = parts[2]
		}
	} else if i := strings.IndexByte(spec, '/'); i >= 0 {
		name, sub = spec[:i], spec[i+1:]
	}
	for d := dir; ; d = path.Dir(d) {
		pkg := joinFS(joinFS(d, "node_modules"), name)
		if fi, err := fs.Stat(b.src.fsys, pkg); err == nil && fi.IsDir() {
			return b.packageEntry(pkg, sub)
		}
		if d == "." || d == "/" || d == "" {
			return "", false
		}
	}
}

func (b *builder) packageEntry(pkg, sub string) (string, bool) {
	var pj struct {
		Exports json.RawMessage `json:"exports"`
		Module  string          `json:"module"`
		Browser json.RawMessage `json:"browser"`
		Main    string          `json:"main"`
	}
	if raw, err := fs.ReadFile(b.src.fsys, joinFS(pkg, "package.json")); err == nil {
		_ = json.Unmarshal(raw, &pj)
	}
	key := "."
	if sub != "" {
		key = "./" + sub
	}
	if len(pj.Exports) > 0 {
		if t, ok := exportTarget(pj.Exports, key); ok {
			return b.probe(cleanFS(joinFS(pkg, t)))
		}
	}
	if sub != "" {
		return b.probe(cleanFS(joinFS(pkg, sub)))
	}
	var browser string
	_ = json.Unmarshal(pj.Browser, &browser)
	for _, m := range []string{pj.Module, browser, pj.Main, "index.js"} {
		if m != "" {
			if r, ok := b.probe(cleanFS(joinFS(pkg, m))); ok {
				return r, true
			}
		}
	}
	return "", false
}

// exportTarget reads package.json "exports" for key with the conditions a
// browser ES module build uses.
func exportTarget(raw json.RawMessage, key string) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, key == "."
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false
	}
	subpaths := false
	for k := range m {
		if strings.HasPrefix(k, ".") {
			subpaths = true
		}
	}
	if subpaths {
		v, ok := m[key]
		if !ok {
			return "", false
		}
		return conditionTarget(v)
	}
	if key != "." {
		return "", false
	}
	return conditionTarget(raw)
}

func conditionTarget(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return "", false
	}
	for _, c := range []string{"browser", "import", "module", "default"} {
		if v, ok := m[c]; ok {
			if t, ok := conditionTarget(v); ok {
				return t, true
			}
		}
	}
	return "", false
}
