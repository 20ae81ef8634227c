package pack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"syscall"

	"github.com/evanw/esbuild/pkg/api"
)

// resolveFS resolves an import the way a bundler does on disk, confined to
// the app's folder: relative paths with extension and index probing, "/x"
// from the app's folder, and bare package names from node_modules folders
// (package.json exports ".", module, browser or main). A CSS url() or
// @import is a URL: its query and fragment are dropped and its percent
// escapes decoded, as a browser would.
func (b *builder) resolveFS(a api.OnResolveArgs, msgs *pluginMsgs) (api.OnResolveResult, error) {
	dir, _ := a.PluginData.(string)
	if dir == "" {
		dir = b.src.root
	}
	css := a.Kind == api.ResolveCSSURLToken || a.Kind == api.ResolveCSSImportRule
	fail := func(err error) (api.OnResolveResult, error) {
		d := b.refDiag(a.Path, "import", err, maxSourceBytes)
		return api.OnResolveResult{Errors: []api.Message{{Text: msgs.put(d)}}}, nil
	}
	notFound := func() (api.OnResolveResult, error) {
		return api.OnResolveResult{Errors: []api.Message{{Text: msgs.put(Diagnostic{Code: "ref.missing",
			Message: fmt.Sprintf("cannot resolve %q", a.Path),
			Why:     "every local file and package the app imports is bundled at build time",
			Fix:     "check the path (relative to the importing file) or add the package to node_modules"})}}}, nil
	}
	found := func(p string) (api.OnResolveResult, error) {
		return api.OnResolveResult{Path: p, Namespace: nsFS}, nil
	}
	p := a.Path
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == ".." || strings.HasPrefix(p, "/") || css {
		q, err := b.src.confine(p, dir, css)
		if err != nil {
			return fail(err)
		}
		r, ok, err := b.probe(q, a.Path)
		switch {
		case err != nil:
			return fail(err)
		case ok:
			return found(r)
		case !css || strings.HasPrefix(p, ".") || strings.HasPrefix(p, "/"):
			return notFound()
		}
		// CSS reads a bare url(x.png) as relative, then as a package.
	}
	if _, err := b.src.confine(p, dir, false); err != nil {
		return fail(err) // a backslash, a file: URL, a control character
	}
	if climbs(p) {
		return fail(outside(a.Path, "its \"..\" climbs out of the package"))
	}
	r, ok, err := b.resolvePackage(dir, p)
	switch {
	case err != nil:
		return fail(err)
	case ok:
		return found(r)
	}
	return notFound()
}

var probeExts = []string{"", ".js", ".mjs", ".ts", ".tsx", ".jsx", ".json", ".css"}

// probe finds the file an import names: as written, with an extension, or
// as a folder's index. A candidate that leads out of the app's folder is an
// error, not a miss.
func (b *builder) probe(p, ref string) (string, bool, error) {
	if !fs.ValidPath(p) {
		return "", false, outside(ref, "it is not a path inside the folder")
	}
	try := func(q string) (bool, error) {
		fi, err := b.src.stat(q, ref)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return false, nil
			}
			return false, err
		}
		return !fi.IsDir(), nil
	}
	for _, ext := range probeExts {
		if ok, err := try(p + ext); ok || err != nil {
			return p + ext, ok, err
		}
	}
	for _, ext := range probeExts[1:] {
		q := joinFS(p, "index"+ext)
		if ok, err := try(q); ok || err != nil {
			return q, ok, err
		}
	}
	return "", false, nil
}

func (b *builder) resolvePackage(dir, spec string) (string, bool, error) {
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
		fi, err := b.src.stat(pkg, spec)
		switch {
		case err == nil && fi.IsDir():
			return b.packageEntry(pkg, sub, spec)
		case err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR):
			return "", false, err
		}
		if d == "." || d == "/" || d == "" {
			return "", false, nil
		}
	}
}

func (b *builder) packageEntry(pkg, sub, spec string) (string, bool, error) {
	var pj struct {
		Exports json.RawMessage `json:"exports"`
		Module  string          `json:"module"`
		Browser json.RawMessage `json:"browser"`
		Main    string          `json:"main"`
	}
	raw, err := b.src.read(joinFS(pkg, "package.json"), spec+"/package.json", maxSourceBytes)
	switch {
	case err == nil:
		_ = json.Unmarshal(raw, &pj)
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, err
	}
	// An entry named by package.json must stay inside the package.
	in := func(t string) (string, bool, error) {
		if path.IsAbs(t) || strings.ContainsRune(t, '\\') || climbs(t) {
			return "", false, outside(spec, fmt.Sprintf("its package.json names %s, outside the package", quote(t)))
		}
		return b.probe(cleanFS(joinFS(pkg, t)), spec)
	}
	key := "."
	if sub != "" {
		key = "./" + sub
	}
	if len(pj.Exports) > 0 {
		if t, ok := exportTarget(pj.Exports, key); ok {
			return in(t)
		}
	}
	if sub != "" {
		return in(sub)
	}
	var browser string
	_ = json.Unmarshal(pj.Browser, &browser)
	for _, m := range []string{pj.Module, browser, pj.Main, "index.js"} {
		if m != "" {
			if r, ok, err := in(m); ok || err != nil {
				return r, ok, err
			}
		}
	}
	return "", false, nil
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
