package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/internal/scaffold"
)

const snuggenModule = "github.com/snuggen/snuggen"

type newOptions struct {
	dir     string
	force   bool
	module  string
	snuggen string
	noTidy  bool
}

func newNewCmd(io *IO) *cobra.Command {
	c := &cobra.Command{
		Use:   "new",
		Short: "Start a new Snug app or a new Go host from a scaffold",
		Example: `  snuggen new app word-explainer
  snuggen new host my-host --module example.com/my-host`,
		Args: noArgs,
	}
	c.AddCommand(newNewAppCmd(io), newNewHostCmd(io))
	return c
}

func newNewAppCmd(io *IO) *cobra.Command {
	o := &newOptions{}
	c := &cobra.Command{
		Use:   "app NAME",
		Short: "Write a working app: app.html with the snug:* metadata, ask with a schema and streaming, db, theme",
		Long: `Writes NAME/app.html and NAME/README.md. The app asks the host's agent with a
response schema and streams the answer, keeps a history in its SQLite
database, and follows the host's theme. It builds with no warnings under
snuggen build --strict.

` + scaffold.NameRule + ".",
		Example: `  snuggen new app word-explainer
  snuggen new app notes --dir apps/notes
  snuggen serve word-explainer/app.html`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := scaffold.ValidName(name); err != nil {
				return usageError("%v", err)
			}
			p := scaffold.Params{Name: name, AppID: "app." + strings.ToLower(name), DisplayName: scaffold.DisplayName(name)}
			dir := o.dirFor(name)
			paths, err := scaffold.Write(scaffold.App, dir, p, o.force)
			if err != nil {
				return &ExitError{Code: exitFailure, Err: fmt.Errorf("new app: %w", err)}
			}
			printWritten(io, paths)
			fmt.Fprintf(io.Out, "\nnext: snuggen serve %s\n", filepath.Join(dir, "app.html"))
			return nil
		},
	}
	c.Flags().StringVar(&o.dir, "dir", "", "directory to write into (default ./NAME)")
	c.Flags().BoolVar(&o.force, "force", false, "write into a non-empty directory, overwriting the scaffold's files")
	return c
}

func newNewHostCmd(io *IO) *cobra.Command {
	o := &newOptions{}
	c := &cobra.Command{
		Use:   "host NAME",
		Short: "Write a Go module for a host built on hostkit, with a test that round-trips every capability",
		Long: `Writes a Go module that imports hostkit and wires a full host: the handler
skeleton with each capability's default (offline agent agent, SQLite storage,
the governed network with an example connection in config.json, open-url),
the runner page, main.go, a README and a test that builds the example app and
round-trips one request of each capability. Then it runs 'go mod tidy' there
(skip with --no-tidy), so 'go vet ./... && go test ./...' pass as written.

--snuggen DIR points the module at a snuggen checkout with a replace
directive; without it the module requires snuggen's released version.

` + scaffold.NameRule + ".",
		Example: `  snuggen new host my-host
  snuggen new host my-host --module example.com/my-host
  snuggen new host my-host --snuggen ~/src/snuggen   # develop against a checkout`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			if err := scaffold.ValidName(name); err != nil {
				return usageError("%v", err)
			}
			module := o.module
			if module == "" {
				module = "example.com/" + strings.ToLower(name)
			}
			if strings.ContainsAny(module, " \\") || strings.HasPrefix(module, "/") || strings.HasSuffix(module, "/") {
				return usageError("invalid --module %q: a module path is slash-separated elements such as example.com/my-host", module)
			}
			p := scaffold.Params{
				Name: name, AppID: "app.hello", DisplayName: scaffold.DisplayName(name),
				Module: module, SnuggenPath: snuggenModule, GoVersion: goDirective(),
				SnuggenVersion: releasedVersion(),
				// The module starts with snuggen's own checksums: its go mod
				// tidy then verifies snuggen's dependencies against them, and
				// works offline with a warm module cache.
				GoSum: snuggen.GoSum,
			}
			if o.snuggen != "" {
				abs, err := filepath.Abs(o.snuggen)
				if err != nil {
					return usageError("--snuggen %s: %v", o.snuggen, err)
				}
				if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
					return usageError("--snuggen %s: no go.mod there; name the root of a snuggen checkout", o.snuggen)
				}
				p.Replace = abs
			}
			dir := o.dirFor(name)
			paths, err := scaffold.Write(scaffold.Host, dir, p, o.force)
			if err != nil {
				return &ExitError{Code: exitFailure, Err: fmt.Errorf("new host: %w", err)}
			}
			printWritten(io, paths)
			if !o.noTidy {
				tidy := exec.CommandContext(cmd.Context(), "go", "mod", "tidy")
				tidy.Dir = dir
				tidy.Stdout, tidy.Stderr = io.Err, io.Err
				if err := tidy.Run(); err != nil {
					return &ExitError{Code: exitFailure, Err: fmt.Errorf("new host: go mod tidy in %s: %w (the files are written; fix the module setup and run it again)", dir, err)}
				}
			}
			fmt.Fprintf(io.Out, "\nnext: cd %s && go test ./... && %sgo run .\n", dir, secretEnvs(filepath.Join(dir, "config.json")))
			return nil
		},
	}
	c.Flags().StringVar(&o.dir, "dir", "", "directory to write into (default ./NAME)")
	c.Flags().BoolVar(&o.force, "force", false, "write into a non-empty directory, overwriting the scaffold's files")
	c.Flags().StringVar(&o.module, "module", "", "the new module's path (default example.com/NAME)")
	c.Flags().StringVar(&o.snuggen, "snuggen", "", "a snuggen checkout to use through a replace directive")
	c.Flags().BoolVar(&o.noTidy, "no-tidy", false, "do not run 'go mod tidy' after writing")
	return c
}

func (o *newOptions) dirFor(name string) string {
	if o.dir != "" {
		return o.dir
	}
	return name
}

func printWritten(io *IO, paths []string) {
	for _, p := range paths {
		fmt.Fprintf(io.Out, "wrote %s\n", p)
	}
}

// secretEnvs lists, as "NAME=… " assignments, the environment variables the
// new host's net config reads its connections' secrets from: go run needs
// them set.
func secretEnvs(configPath string) string {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return ""
	}
	var cfg netgate.Config
	if json.Unmarshal(data, &cfg) != nil {
		return ""
	}
	var b strings.Builder
	for _, c := range cfg.Connections {
		if c.SecretEnv != "" {
			b.WriteString(c.SecretEnv + "=… ")
		}
	}
	return b.String()
}

// releasedVersion is this binary's snuggen version when it was built from
// a released module (go install …@v1.2.3), else "".
func releasedVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != snuggenModule || bi.Main.Version == "(devel)" || !strings.HasPrefix(bi.Main.Version, "v") {
		return ""
	}
	return bi.Main.Version
}

// goDirective is the go line of a new module: this toolchain's language
// version, such as 1.26.
func goDirective() string {
	v := strings.TrimPrefix(runtime.Version(), "go")
	if parts := strings.SplitN(v, ".", 3); len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		return strings.TrimPrefix(bi.GoVersion, "go")
	}
	return v
}
