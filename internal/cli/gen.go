package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/gen"
	"github.com/snuggen/snuggen/gen/model"
)

func init() { register(newGenCmd) }

type genOptions struct {
	schemas string // directory of the spec
	root    string // repository root the generated paths are relative to
	check   bool
}

func newGenCmd(io *IO) *cobra.Command {
	o := &genOptions{}
	c := &cobra.Command{
		Use:   "gen",
		Short: "Regenerate frame and runtime-js from schemas/",
		Long: `gen reads the frame schemas and rules.json from schemas/, checks them, and
writes the generated Go package frame and the generated JS under
runtime-js/. With --check it writes nothing and exits 1 listing every file
that is stale (what CI runs).`,
		Example: `  snuggen gen
  snuggen gen --check
  snuggen gen --schemas ./schemas --root .`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGen(io, o) },
	}
	c.Flags().StringVar(&o.schemas, "schemas", "schemas", "directory holding *.schema.json and rules.json")
	c.Flags().StringVar(&o.root, "root", ".", "repository root the generated files are written under")
	c.Flags().BoolVar(&o.check, "check", false, "write nothing; exit 1 when any generated file would change")
	return c
}

func runGen(io *IO, o *genOptions) error {
	if st, err := os.Stat(o.schemas); err != nil || !st.IsDir() {
		return usageError("gen: %s is not a directory of schemas (run from the repository root or pass --schemas)", o.schemas)
	}
	m, err := gen.Load(os.DirFS(o.schemas), filepath.ToSlash(o.schemas))
	if err != nil {
		fmt.Fprintln(io.Err, err)
		return &ExitError{Code: 1, Err: fmt.Errorf("gen: the spec in %s has errors", o.schemas)}
	}
	files, err := gen.Generate(m)
	if err != nil {
		return &ExitError{Code: 1, Err: err}
	}
	stale := staleFiles(o.root, files)
	if o.check {
		if len(stale) == 0 {
			return nil
		}
		for _, f := range stale {
			fmt.Fprintf(io.Out, "stale: %s\n", f)
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("gen --check: %d generated file(s) out of date; run snuggen gen", len(stale))}
	}
	for _, f := range files {
		if !contains(stale, f.Name) {
			continue
		}
		if err := writeFileAtomic(filepath.Join(o.root, filepath.FromSlash(f.Name)), f.Contents); err != nil {
			return &ExitError{Code: 1, Err: fmt.Errorf("gen: %w", err)}
		}
		fmt.Fprintf(io.Out, "wrote %s\n", f.Name)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// staleFiles lists the generated files whose contents on disk differ.
func staleFiles(root string, files []model.File) []string {
	var out []string
	for _, f := range files {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Name)))
		if err != nil || !bytes.Equal(old, f.Contents) {
			out = append(out, f.Name)
		}
	}
	return out
}

// writeFileAtomic writes through a temporary file and a rename, so a failed
// write leaves the old file intact.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
