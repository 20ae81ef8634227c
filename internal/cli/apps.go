package cli

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// foundApp is one app a command line names: build, serve and mcp all find
// apps with discoverApps, so `build apps/` and `serve apps/` see the same
// apps.
type foundApp struct {
	path string // the app's HTML file
	// ownsFolder: the app is a folder's app.html or index.html, so the
	// folder is the app's (its name names the app) and not a folder of apps.
	ownsFolder bool
}

// appPages are the names of a folder's own app page, in the order they are
// looked for: app.html (what snuggen new writes), then index.html.
var appPages = []string{"app.html", "index.html"}

// isHTML reports whether p names an HTML file by its extension (.html or
// .htm, any case).
func isHTML(p string) bool {
	ext := strings.ToLower(filepath.Ext(p))
	return ext == ".html" || ext == ".htm"
}

// appPage returns dir's own app page (appPages, in order), "" for none.
func appPage(dir string) string {
	for _, name := range appPages {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// skipEntry reports whether a folder entry is never an app: a dot file or
// folder, node_modules.
func skipEntry(name string) bool {
	return strings.HasPrefix(name, ".") || name == "node_modules"
}

// discoverApps turns the command line's FILE and DIR arguments into apps.
// A FILE must be .html or .htm; it is a folder's app when it is that
// folder's app.html or index.html. A DIR with its own app page is one app;
// any other DIR is a folder of apps: its *.html and *.htm files and its
// subfolders' app pages, dot entries and node_modules left out, and the
// folder skip (a build's output, "" for none) too. what names the command
// in errors, which are usage errors (exit 2).
func discoverApps(what string, args []string, skip string) ([]foundApp, error) {
	skipAbs := ""
	if skip != "" {
		skipAbs, _ = filepath.Abs(skip)
	}
	var out []foundApp
	for _, arg := range args {
		st, err := os.Stat(arg)
		if err != nil {
			return nil, usageError("%s: %s: %v", what, arg, errors.Unwrap(err))
		}
		if !st.IsDir() {
			if !isHTML(arg) {
				return nil, usageError("%s: %s is not an .html file; give an app's HTML file or a folder of apps", what, arg)
			}
			base := filepath.Base(arg)
			out = append(out, foundApp{path: arg, ownsFolder: strings.EqualFold(base, "app.html") || strings.EqualFold(base, "index.html")})
			continue
		}
		if p := appPage(arg); p != "" {
			out = append(out, foundApp{path: p, ownsFolder: true})
			continue
		}
		entries, err := os.ReadDir(arg)
		if err != nil {
			return nil, usageError("%s: %s: %v", what, arg, err)
		}
		n := len(out)
		for _, e := range entries {
			p := filepath.Join(arg, e.Name())
			if skipEntry(e.Name()) {
				continue
			}
			if abs, _ := filepath.Abs(p); abs == skipAbs {
				continue
			}
			switch {
			case e.IsDir():
				if page := appPage(p); page != "" {
					out = append(out, foundApp{path: page, ownsFolder: true})
				}
			case isHTML(p):
				out = append(out, foundApp{path: p})
			}
		}
		if len(out) == n {
			return nil, usageError("%s: no apps in %s (looked for *.html, *.htm and */%s)", what, arg, strings.Join(appPages, ", */"))
		}
	}
	return out, nil
}

// name is the app's name as a file: a folder app's folder name plus .html,
// else the file's own name.
func (a foundApp) name() string {
	if a.ownsFolder {
		return filepath.Base(filepath.Dir(a.path)) + ".html"
	}
	return filepath.Base(a.path)
}
