package js

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
)

// bundleOptions says how one esbuild bundle is built.
type bundleOptions struct {
	entry  string // slash path inside files
	format api.Format
	minify bool
	banner string
	// lacks are the capability members (ShakeMembers) the bundle is built
	// without: each one's SNUG_<MEMBER> (memberFlag) is false in it, every
	// other member's true, so code only a member can run is dropped from
	// a runtime without it (a variant, shaken.go).
	lacks []string
}

// memberFlag is the identifier the runtime's sources test to know whether
// the bundle has member (SNUG_DB, SNUG_OPEN_URL, …): esbuild defines it as
// true or false (bundleOptions.lacks), so a branch only that member runs is
// dead code in a runtime without it.
func memberFlag(member string) string { return "SNUG_" + screaming(member) }

// bundle runs esbuild over an in-memory tree: files maps slash paths (relative
// to runtime-js/) to their contents, so generated modules that are not on
// disk yet bundle exactly like the committed ones. Nothing is read from or
// written to disk, and no npm step is involved.
func bundle(files map[string]string, o bundleOptions) ([]byte, error) {
	opts := api.BuildOptions{
		EntryPoints:       []string{o.entry},
		Bundle:            true,
		Write:             false,
		Format:            o.format,
		Target:            api.ES2022,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		MinifyWhitespace:  o.minify,
		MinifyIdentifiers: o.minify,
		MinifySyntax:      o.minify,
		TreeShaking:       api.TreeShakingTrue,
		LogLevel:          api.LogLevelSilent,
		Plugins:           []api.Plugin{memfs(files)},
		Define:            map[string]string{},
	}
	for _, m := range ShakeMembers {
		opts.Define[memberFlag(m.Member)] = "true"
	}
	for _, m := range o.lacks {
		opts.Define[memberFlag(m)] = "false"
	}
	res := api.Build(opts)
	if len(res.Errors) > 0 {
		var msgs []string
		for _, m := range res.Errors {
			where := ""
			if m.Location != nil {
				where = fmt.Sprintf("%s:%d:%d: ", m.Location.File, m.Location.Line, m.Location.Column)
			}
			msgs = append(msgs, where+m.Text)
		}
		return nil, fmt.Errorf("js: bundle %s: %s", o.entry, strings.Join(msgs, "; "))
	}
	if len(res.OutputFiles) != 1 {
		return nil, fmt.Errorf("js: bundle %s: esbuild produced %d files, want 1", o.entry, len(res.OutputFiles))
	}
	out := res.OutputFiles[0].Contents
	if o.minify {
		var err error
		if out, err = minifyWhole(out); err != nil {
			return nil, fmt.Errorf("js: bundle %s: second minify pass: %w", o.entry, err)
		}
	}
	if o.banner != "" {
		out = append([]byte(o.banner+"\n"), out...)
	}
	return out, nil
}

// memfs is the esbuild plugin that resolves and loads the modules of
// files (slash paths relative to runtime-js/), relative imports only.
func memfs(files map[string]string) api.Plugin {
	const ns = "snug-runtime"
	return api.Plugin{
		Name: "memfs",
		Setup: func(b api.PluginBuild) {
			b.OnResolve(api.OnResolveOptions{Filter: ".*"}, func(a api.OnResolveArgs) (api.OnResolveResult, error) {
				p := a.Path
				if a.Importer != "" {
					if !strings.HasPrefix(p, ".") {
						return api.OnResolveResult{}, fmt.Errorf("import %q from %s: only relative imports are bundled", p, a.Importer)
					}
					p = path.Join(path.Dir(a.Importer), p)
				}
				if _, ok := files[p]; !ok {
					return api.OnResolveResult{}, fmt.Errorf("import %q: no file %s", a.Path, p)
				}
				return api.OnResolveResult{Path: p, Namespace: ns}, nil
			})
			b.OnLoad(api.OnLoadOptions{Filter: ".*", Namespace: ns}, func(a api.OnLoadArgs) (api.OnLoadResult, error) {
				c := files[a.Path]
				return api.OnLoadResult{Contents: &c, Loader: api.LoaderJS}, nil
			})
		},
	}
}

// minifyWhole is a second minify pass over the bundle: esbuild's bundler
// keeps each module's top-level declarations apart (var a=…;var b=…) and
// names them module by module; over the whole bundle the minifier joins
// them into one declaration and names by use across modules. Same code,
// 20–30 B less min+gzip in every runtime (docs/decisions.md, Runtime
// budgets).
func minifyWhole(code []byte) ([]byte, error) {
	t := api.Transform(string(code), api.TransformOptions{
		Target:            api.ES2022,
		Charset:           api.CharsetUTF8,
		LegalComments:     api.LegalCommentsNone,
		MinifyWhitespace:  true,
		MinifyIdentifiers: true,
		MinifySyntax:      true,
		LogLevel:          api.LogLevelSilent,
	})
	if len(t.Errors) > 0 {
		return nil, errors.New(t.Errors[0].Text)
	}
	return t.Code, nil
}
