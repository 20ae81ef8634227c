package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/hostkit/mcpapps"
	"github.com/snuggen/snuggen/internal/atomicfile"
	"github.com/snuggen/snuggen/internal/bytesize"
	"github.com/snuggen/snuggen/pack"
	runtimejs "github.com/snuggen/snuggen/runtime-js"
)

// buildOptions are the flags of "snuggen build".
type buildOptions struct {
	input    string
	out      string
	strict   bool
	json     bool
	manifest string
	watch    bool
	maxAsset int64
	target   string
	// poll is the watcher's interval (tests shorten it).
	poll time.Duration
}

func newBuildCmd(io *IO) *cobra.Command {
	o := &buildOptions{poll: 250 * time.Millisecond}
	c := &cobra.Command{
		Use:   "build FILE.html | DIR",
		Short: "Bundle an app and the runtime into one self-contained HTML file",
		Long: `Build packages an app page and the local files it references (scripts,
modules, node_modules packages, styles, images, fonts) into one HTML file that
runs in any Snug host's sandbox: scripts and styles bundled and minified with
esbuild, assets inlined as data URIs, the Snug runtime and a
Content-Security-Policy injected. Only scripts and styles from the CDN
allowlist stay external.

It reports what will not work in the sandbox (fetch, localStorage,
window.open, confirm, ...) with the Snug call to use instead. Errors fail the
build (exit 1) and write nothing; warnings print and pass (--strict makes them
errors).

Given a directory, it builds every app in it in parallel (each *.html file,
and each sub-folder with an index.html or app.html), continues past a
failing app, and writes index.json, a catalog of the built apps.

--target says which hosts the file is for: snug (the default) for Snug hosts
(snuggen serve, a host built on hostkit), mcp-app for MCP Apps hosts (Claude,
ChatGPT, VS Code and others, through snuggen mcp): the same app and the same
snug API, with the runtime that speaks MCP Apps instead of Snug frames, and
with the sandbox defences a Snug host adds when it serves a file (the
prelude first, Trusted Types required by a CSP meta, no nested frames),
since an MCP Apps host sends none of snuggen's headers.`,
		Example: `  snuggen build app.html                 # writes dist/app.html
  snuggen build app.html -o out.html
  snuggen build app.html -o - > app.built.html
  snuggen build app.html --json           # diagnostics and the manifest as JSON
  snuggen build apps/ -o site/            # every app, plus site/index.json
  snuggen build app.html --watch          # rebuild on every change
  snuggen build app.html --target mcp-app # for an MCP Apps host`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.input = args[0]
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			if o.watch {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt)
				defer stop()
			}
			return runBuild(ctx, io, o)
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "out", "o", "dist", "output file, or directory (a directory gets NAME.html); - writes to stdout")
	f.BoolVar(&o.strict, "strict", false, "treat warnings as errors")
	f.BoolVar(&o.json, "json", false, "print the diagnostics and the manifest as JSON on stdout")
	f.StringVar(&o.manifest, "manifest", "", "write the manifest (appId, displayName, sha256, bytes, capabilities) to this file")
	f.BoolVar(&o.watch, "watch", false, "rebuild on every change to the app's files, one line per rebuild")
	f.Int64Var(&o.maxAsset, "max-asset", pack.DefaultMaxAssetBytes, "largest asset, in bytes, inlined as a data URI")
	f.StringVar(&o.target, "target", targetSnug, "the hosts the file is for: snug (Snug hosts) or mcp-app (MCP Apps hosts, via snuggen mcp)")
	c.ValidArgsFunction = appArgs
	_ = c.RegisterFlagCompletionFunc("target", cobra.FixedCompletions([]string{targetSnug, targetMCPApp}, cobra.ShellCompDirectiveNoFileComp))
	_ = c.RegisterFlagCompletionFunc("manifest", jsonFiles)
	return c
}

// appJob is one app to build and where its output goes.
type appJob struct {
	name   string // display name (the input path)
	input  string
	output string // "" = stdout
	file   string // output file name inside the catalog
}

// appResult is one app's outcome.
type appResult struct {
	job  appJob
	res  *pack.Result
	err  error
	took time.Duration
}

// The build targets: which runtime the file carries.
const (
	targetSnug   = "snug"
	targetMCPApp = "mcp-app"
)

// runtimeFor is the runtime a target's file carries (nil: the packager's
// default, the Snug one).
func runtimeFor(target string) ([]byte, error) {
	switch target {
	case targetSnug, "":
		return nil, nil
	case targetMCPApp:
		return runtimejs.ScriptMCP, nil
	}
	return nil, usageError("build: --target %q: use snug or mcp-app", target)
}

func runBuild(ctx context.Context, io *IO, o *buildOptions) error {
	if _, err := runtimeFor(o.target); err != nil {
		return err
	}
	fi, err := os.Stat(o.input)
	if err != nil {
		return &ExitError{Code: exitUsage, Err: fmt.Errorf("build: %w", err)}
	}
	dir := fi.IsDir()
	if dir && (o.out == "-" || strings.HasSuffix(strings.ToLower(o.out), ".html")) {
		return usageError("build: building a directory needs -o DIR, not %q", o.out)
	}
	if dir && o.manifest != "" {
		return usageError("build: --manifest names one app's manifest; a directory build writes index.json")
	}
	if o.json && o.out == "-" {
		return usageError("build: --json prints to stdout, so the page needs -o FILE, not -o -")
	}
	if o.watch && o.out == "-" {
		return usageError("build: --watch needs an output file, not -o -")
	}
	if !dir && !o.watch {
		// One short build: garbage collection only costs time (esbuild's
		// CLI does the same for a single entry point).
		defer debug.SetGCPercent(debug.SetGCPercent(-1))
	}
	buildOnce := func() ([]appResult, error) {
		jobs, err := planJobs(o, dir)
		if err != nil {
			return nil, err
		}
		results := buildAll(ctx, io, o, jobs, dir)
		if dir {
			if err := writeCatalog(o, results); err != nil {
				return results, &ExitError{Code: exitFailure, Err: err}
			}
		}
		return results, nil
	}
	results, err := buildOnce()
	if err != nil {
		return err
	}
	failed := report(io, o, results, dir)
	if !o.watch {
		if failed {
			return silentExit(exitFailure)
		}
		return nil
	}
	// Watch: rebuild when a file the builds read changes (or one is added to
	// their folders) until interrupted.
	watchInputs(ctx, o.poll, func() [][]string { return [][]string{watchSet(o, results)} }, func(int) {
		start := time.Now()
		next, err := buildOnce()
		if err != nil {
			fmt.Fprintf(io.Err, "%s build: %v\n", time.Now().Format("15:04:05"), err)
			return
		}
		results = next
		printDiagnostics(io.Err, results)
		fmt.Fprintln(io.Err, rebuildLine(results, time.Since(start)))
	})
	return nil
}

// rebuildLine is the one line --watch prints per rebuild.
func rebuildLine(results []appResult, took time.Duration) string {
	ok, bad, warn := 0, 0, 0
	for _, r := range results {
		if r.err != nil {
			bad++
		} else {
			ok++
		}
		if r.res != nil {
			warn += len(r.res.Diagnostics) - r.res.Errors()
		}
	}
	stamp := time.Now().Format("15:04:05")
	what := results[0].job.output
	if len(results) > 1 {
		what = fmt.Sprintf("%d apps", len(results))
	}
	if bad > 0 {
		return fmt.Sprintf("%s rebuild failed (%d of %d apps) in %s", stamp, bad, len(results), took.Round(time.Millisecond))
	}
	s := fmt.Sprintf("%s rebuilt %s in %s", stamp, what, took.Round(time.Millisecond))
	if warn > 0 {
		s += fmt.Sprintf(" (%d warnings)", warn)
	}
	return s
}

func watchSet(o *buildOptions, results []appResult) []string {
	var inputs []string
	for _, r := range results {
		inputs = append(inputs, r.job.input)
		if r.res != nil {
			inputs = append(inputs, r.res.Inputs...)
		}
	}
	return inputSet(o.input, inputs)
}

// planJobs lists the apps to build: the one file, or every app in the
// directory.
func planJobs(o *buildOptions, dir bool) ([]appJob, error) {
	if !dir {
		out := o.out
		switch {
		case out == "-":
			out = ""
		case strings.HasSuffix(strings.ToLower(out), ".html"):
		default:
			out = filepath.Join(out, filepath.Base(o.input))
		}
		return []appJob{{name: o.input, input: o.input, output: out, file: filepath.Base(o.input)}}, nil
	}
	found, err := discoverApps("build", []string{o.input}, o.out)
	if err != nil {
		return nil, err
	}
	var jobs []appJob
	for _, a := range found {
		name := a.name()
		jobs = append(jobs, appJob{name: a.path, input: a.path, output: filepath.Join(o.out, name), file: name})
	}
	seen := map[string]string{}
	for _, j := range jobs {
		if other, dup := seen[j.file]; dup {
			return nil, &ExitError{Code: exitUsage, Err: fmt.Errorf("build: %s and %s would both be written to %s; rename one", other, j.input, j.output)}
		}
		seen[j.file] = j.input
	}
	return jobs, nil
}

// buildAll builds the jobs in parallel; on a terminal it shows progress.
func buildAll(ctx context.Context, io *IO, o *buildOptions, jobs []appJob, dir bool) []appResult {
	results := make([]appResult, len(jobs))
	workers := runtime.GOMAXPROCS(0)
	if workers > len(jobs) {
		workers = len(jobs)
	}
	progress := dir && isTerminal(io.Err) && !o.json
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = buildOne(ctx, o, jobs[i])
				if progress {
					mu.Lock()
					done++
					fmt.Fprintf(io.Err, "\r\x1b[K[%d/%d] %s", done, len(jobs), jobs[i].name)
					mu.Unlock()
				}
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	if progress {
		fmt.Fprint(io.Err, "\r\x1b[K")
	}
	return results
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func buildOne(ctx context.Context, o *buildOptions, job appJob) appResult {
	start := time.Now()
	rt, _ := runtimeFor(o.target) // checked by runBuild
	opts := pack.Options{Path: job.input, Strict: o.strict, MaxAssetBytes: o.maxAsset, Runtime: rt}
	build := pack.Build
	if o.target == targetMCPApp {
		// An MCP Apps host sends none of snuggen's headers: the file
		// carries the host's defences itself.
		build = mcpapps.Build
	}
	res, err := build(ctx, opts)
	r := appResult{job: job, res: res, err: err}
	if err == nil && job.output != "" {
		if werr := writeAtomic(job.output, res.HTML); werr != nil {
			r.err = werr
		}
	}
	if r.err == nil && o.manifest != "" {
		m, _ := json.MarshalIndent(res.Manifest, "", "  ")
		if werr := writeAtomic(o.manifest, append(m, '\n')); werr != nil {
			r.err = werr
		}
	}
	r.took = time.Since(start)
	return r
}

// writeAtomic writes data beside path and renames it into place, so a failed
// write never leaves a partial file. A build's output is derived, so it is
// not synced (atomicfile.Replace), as no other build tool syncs its output.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	if err := atomicfile.Replace(path, data, 0o644); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	return nil
}

// catalogEntry is one app in index.json.
type catalogEntry struct {
	AppID     string `json:"appId"`
	Name      string `json:"name"`
	Icon      string `json:"icon,omitempty"`
	IconColor string `json:"iconColor,omitempty"`
	File      string `json:"file"`
	SHA256    string `json:"sha256"`
	Bytes     int    `json:"bytes"`
}

func writeCatalog(o *buildOptions, results []appResult) error {
	cat := struct {
		Apps []catalogEntry `json:"apps"`
	}{Apps: []catalogEntry{}}
	for _, r := range results {
		if r.err != nil {
			continue
		}
		m := r.res.Manifest
		cat.Apps = append(cat.Apps, catalogEntry{AppID: m.AppID, Name: m.DisplayName, Icon: m.IconEmoji, IconColor: m.IconColor,
			File: r.job.file, SHA256: m.SHA256, Bytes: m.Bytes})
	}
	sort.Slice(cat.Apps, func(i, j int) bool { return cat.Apps[i].File < cat.Apps[j].File })
	data, _ := json.MarshalIndent(cat, "", "  ")
	return writeAtomic(filepath.Join(o.out, "index.json"), append(data, '\n'))
}

// report prints the outcome: diagnostics (text on stderr, or JSON on
// stdout), the built files, and for stdout output the HTML itself. It
// returns whether any app failed.
func report(io *IO, o *buildOptions, results []appResult, dir bool) bool {
	failed := false
	for _, r := range results {
		if r.err != nil {
			failed = true
		}
	}
	if o.json {
		type jsonApp struct {
			File        string            `json:"file"`
			Output      string            `json:"output,omitempty"`
			OK          bool              `json:"ok"`
			Error       string            `json:"error,omitempty"`
			Diagnostics []pack.Diagnostic `json:"diagnostics"`
			Manifest    *pack.Manifest    `json:"manifest,omitempty"`
		}
		var apps []jsonApp
		for _, r := range results {
			a := jsonApp{File: r.job.input, Output: r.job.output, OK: r.err == nil, Diagnostics: []pack.Diagnostic{}}
			if r.res != nil {
				a.Diagnostics = prefixed(r)
				if r.err == nil {
					m := r.res.Manifest
					a.Manifest = &m
				}
			}
			if r.err != nil && (r.res == nil || !errors.Is(r.err, pack.ErrFailed)) {
				a.Error = r.err.Error()
			}
			apps = append(apps, a)
		}
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if dir {
			enc.Encode(struct {
				Apps []jsonApp `json:"apps"`
			}{apps})
		} else {
			enc.Encode(apps[0])
		}
		return failed
	}
	printDiagnostics(io.Err, results)
	for _, r := range results {
		switch {
		case r.err != nil && r.res != nil && errors.Is(r.err, pack.ErrFailed):
			fmt.Fprintf(io.Err, "%s: build failed: %d errors, nothing written\n", r.job.input, r.res.Errors())
		case r.err != nil:
			fmt.Fprintf(io.Err, "%s: %v\n", r.job.input, r.err)
		case r.job.output == "":
			io.Out.Write(r.res.HTML)
		default:
			fmt.Fprintf(io.Err, "built %s (%s, %s)\n", r.job.output, sizeText(r.res.Manifest.Bytes), r.took.Round(time.Millisecond))
		}
	}
	if dir {
		n := 0
		for _, r := range results {
			if r.err == nil {
				n++
			}
		}
		fmt.Fprintf(io.Err, "%d of %d apps built; catalog %s\n", n, len(results), filepath.Join(o.out, "index.json"))
	}
	return failed
}

// prefixed returns r's diagnostics with file names as the user sees them:
// relative to the current directory, the way the input was named.
func prefixed(r appResult) []pack.Diagnostic {
	base := filepath.Dir(r.job.input)
	out := make([]pack.Diagnostic, len(r.res.Diagnostics))
	for i, d := range r.res.Diagnostics {
		if base != "." {
			d.File = filepath.ToSlash(filepath.Join(base, filepath.FromSlash(d.File)))
		}
		out[i] = d
	}
	return out
}

func printDiagnostics(w io.Writer, results []appResult) {
	for _, r := range results {
		if r.res == nil {
			continue
		}
		for _, d := range prefixed(r) {
			fmt.Fprint(w, d.Detail())
		}
	}
}

func sizeText(n int) string { return bytesize.Approx(int64(n)) }
