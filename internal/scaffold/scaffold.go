// Package scaffold writes new projects from templates/scaffold: a Snug app
// (one app.html and a README) or a Go module for a host built on hostkit.
// It renders every file in memory before it touches the disk, refuses a
// directory that is not empty unless told to overwrite, and on a failed
// write removes what it wrote, so a failure leaves the directory as it was.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"text/template"
	"unicode"

	"github.com/snuggen/snuggen/internal/atomicfile"
	"github.com/snuggen/snuggen/templates"
)

// Kind names a scaffold: a directory under templates/scaffold.
type Kind string

// The scaffolds.
const (
	App  Kind = "app"
	Host Kind = "host"
)

// Params are what the templates see.
type Params struct {
	Name        string // as given: the directory name and the app key
	AppID       string // the app's snug:app-id
	DisplayName string // the app's snug:display-name
	Module      string // host: the Go module path
	SnuggenPath string // host: the module path of snuggen itself
	Replace     string // host: when set, a replace directive points snuggen here
	GoVersion   string // host: the go directive
	// SnuggenVersion is the version of snuggen a host requires when there is
	// no Replace; empty leaves the choice to go mod tidy (the latest).
	SnuggenVersion string
	// GoSum is the host module's first go.sum: snuggen's own (snuggen.GoSum),
	// so go mod tidy there finds every module snuggen depends on already
	// checked and needs no checksum database for them.
	GoSum string
}

// NameRule says what a valid NAME is; ValidName's errors quote it.
const NameRule = "a name is 1 to 64 letters, digits, '-', '_' or '.', starting with a letter or digit"

var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`) })

// ValidName checks name against NameRule.
func ValidName(name string) error {
	if !nameRE().MatchString(name) {
		return fmt.Errorf("invalid name %q: %s", name, NameRule)
	}
	return nil
}

// DisplayName turns a name such as "word-explainer" into "Word Explainer".
func DisplayName(name string) string {
	fields := strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' || r == '.' })
	for i, f := range fields {
		r := []rune(f)
		r[0] = unicode.ToUpper(r[0])
		fields[i] = string(r)
	}
	return strings.Join(fields, " ")
}

// File is one rendered file, with a slash-separated path relative to the
// project directory.
type File struct {
	Path     string
	Contents []byte
	Mode     fs.FileMode
}

// Render renders kind's templates with p.
func Render(kind Kind, p Params) ([]File, error) {
	root := path.Join("scaffold", string(kind))
	if _, err := fs.Stat(templates.Scaffold, root); err != nil {
		return nil, fmt.Errorf("scaffold: no scaffold named %q", kind)
	}
	var files []File
	err := fs.WalkDir(templates.Scaffold, root, func(p0 string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(templates.Scaffold, p0)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p0, root+"/")
		if strings.HasSuffix(rel, ".tmpl") {
			rel = strings.TrimSuffix(rel, ".tmpl")
			t, err := template.New(rel).Option("missingkey=error").Parse(string(data))
			if err != nil {
				return fmt.Errorf("scaffold: template %s: %w", p0, err)
			}
			var buf bytes.Buffer
			if err := t.Execute(&buf, p); err != nil {
				return fmt.Errorf("scaffold: template %s: %w", p0, err)
			}
			data = buf.Bytes()
		}
		files = append(files, File{Path: rel, Contents: data, Mode: 0o644})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, nil
}

// ErrNotEmpty is returned for a directory that already has files in it.
var ErrNotEmpty = errors.New("directory is not empty")

// Write renders kind into dir. dir must be missing or empty unless force is
// set; with force, files of the scaffold overwrite files of the same name
// and nothing else in dir is touched. It returns the paths it wrote.
func Write(kind Kind, dir string, p Params, force bool) ([]string, error) {
	files, err := Render(kind, p)
	if err != nil {
		return nil, err
	}
	created := false
	switch entries, err := os.ReadDir(dir); {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("cannot create %s: %w", dir, errors.Unwrap(err))
		}
		created = true
	case err != nil:
		return nil, fmt.Errorf("cannot read %s: %w", dir, errors.Unwrap(err))
	case len(entries) > 0 && !force:
		return nil, fmt.Errorf("%s: %w (%d entries); choose another directory or pass --force to overwrite the scaffold's files", dir, ErrNotEmpty, len(entries))
	}
	var written, made []string
	undo := func() {
		for i := len(written) - 1; i >= 0; i-- {
			os.Remove(written[i])
		}
		for i := len(made) - 1; i >= 0; i-- {
			os.Remove(made[i])
		}
		if created {
			os.Remove(dir)
		}
	}
	for _, f := range files {
		target := filepath.Join(dir, filepath.FromSlash(f.Path))
		if sub := filepath.Dir(target); sub != dir {
			if _, err := os.Stat(sub); errors.Is(err, fs.ErrNotExist) {
				if err := os.MkdirAll(sub, 0o755); err != nil {
					undo()
					return nil, fmt.Errorf("cannot create %s: %w", sub, errors.Unwrap(err))
				}
				made = append(made, sub)
			}
		}
		if force {
			if _, err := os.Stat(target); err == nil {
				// An overwritten file is not removed on undo: write it in place
				// through a temporary file so a failure keeps the old one.
				if err := replaceFile(target, f.Contents, f.Mode); err != nil {
					undo()
					return nil, err
				}
				continue
			}
		}
		if err := os.WriteFile(target, f.Contents, f.Mode); err != nil {
			undo()
			return nil, fmt.Errorf("cannot write %s: %w", target, errors.Unwrap(err))
		}
		written = append(written, target)
	}
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = filepath.Join(dir, filepath.FromSlash(f.Path))
	}
	return paths, nil
}

func replaceFile(target string, data []byte, mode fs.FileMode) error {
	if err := atomicfile.Write(target, data, mode); err != nil {
		return fmt.Errorf("cannot write %s: %w", target, errors.Unwrap(err))
	}
	return nil
}
