// Package gen turns schemas/ into code: Load reads and checks the spec into
// a model (gen/load), Generate runs every emitter (gen/golang for
// frame, gen/js for runtime-js) and returns the files. It never
// writes; the snuggen gen command does.
package gen

import (
	"fmt"
	"io/fs"
	"sort"

	"github.com/snuggen/snuggen/gen/golang"
	"github.com/snuggen/snuggen/gen/js"
	"github.com/snuggen/snuggen/gen/load"
	"github.com/snuggen/snuggen/gen/model"
)

// Load reads the spec from fsys; prefix is its display path in diagnostics.
func Load(fsys fs.FS, prefix string) (*model.Model, error) { return load.Load(fsys, prefix) }

// Generate runs every emitter over m and returns their files sorted by name.
func Generate(m *model.Model) ([]model.File, error) {
	var out []model.File
	for _, e := range []struct {
		name string
		run  func(*model.Model) ([]model.File, error)
	}{
		{"go", golang.Generate},
		{"js", js.Generate},
	} {
		files, err := e.run(m)
		if err != nil {
			return nil, fmt.Errorf("gen %s: %w", e.name, err)
		}
		out = append(out, files...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("gen: two emitters write %s", out[i].Name)
		}
	}
	return out, nil
}
