package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdio "io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/conform"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/mcpapps"
)

type conformOptions struct {
	app      bool
	target   string
	url      string
	json     bool
	only     []string
	chromium string
	timeout  time.Duration
	verbose  bool
}

func newConformCmd(io *IO) *cobra.Command {
	o := &conformOptions{}
	c := &cobra.Command{
		Use:   "conform",
		Short: "Check a Snug host against the protocol with the conformance kit, a Snug app",
		Long: `conform runs the Snug conformance kit: a Snug app that runs its cases one
after another inside the host it is opened in (through the host's own sandbox
and relay), each named by the rule it checks (handshake, R1–R7, db, net,
open-url, C1, C2), and leaves a JSON report on its page.

Without flags conform starts its own snuggen serve on a free loopback port
(the offline agent, a temporary data directory, the governed network with no
connections), opens the kit in headless Chromium, answers the host's dialogs
the kit asks for, reads the report, prints one line per case and exits 0
when no case failed, 1 when one did.

--url drives a host that is already running with the kit installed: the URL
of a page that shows the kit (a runner with the kit mounted). --app prints
the kit as one self-contained HTML file to install in any host and open by
hand (--target mcp-app for snuggen mcp). A case is skipped, not failed, when
the host does not advertise the capability it needs, when it needs a user
(a dialog) and no one answers, or when the host's transport cannot carry it;
the reason says which. docs/conformance.md describes every case.

Chromium is $SNUG_CHROMIUM, else chromium, chromium-browser, google-chrome or
chrome on PATH; it runs headless with a fresh profile and reaches only
loopback and the host the URL names.`,
		Example: `  snuggen conform                                            # snuggen's own host
  snuggen conform --json > report.json
  snuggen conform --app > conform.html                       # install it in any Snug host
  snuggen conform --url 'http://127.0.0.1:8080/?app=conform' # drive a running host that has it`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(cmdContext(cmd), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runConform(ctx, io, o)
		},
	}
	f := c.Flags()
	f.BoolVar(&o.app, "app", false, "print the kit as one self-contained HTML app and exit")
	f.StringVar(&o.target, "target", targetSnug, "with --app: the hosts the file is for: snug or mcp-app")
	f.StringVar(&o.url, "url", "", "drive the host at this URL (a page showing the kit) instead of starting snuggen serve")
	f.BoolVar(&o.json, "json", false, "print the report as JSON instead of a table")
	f.StringSliceVar(&o.only, "only", nil, "run only these cases (ids such as r3.cancel); repeatable or comma-separated")
	f.StringVar(&o.chromium, "chromium", "", "the Chromium to drive (default: $SNUG_CHROMIUM, then chromium on PATH)")
	f.DurationVar(&o.timeout, "timeout", conform.DefaultTimeout, "give up after this long")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "say on stderr what the driver does (dialogs answered)")
	return c
}

func runConform(ctx context.Context, io *IO, o *conformOptions) error {
	if o.app {
		if o.url != "" || o.json || len(o.only) > 0 {
			return usageError("conform: --app prints the kit; it takes no --url, --json or --only")
		}
		if _, err := runtimeFor(o.target); err != nil {
			return err
		}
		var build conform.Builder // the Snug runtime
		if o.target == targetMCPApp {
			build = mcpapps.Build
		}
		doc, err := conform.Kit(ctx, build)
		if err != nil {
			return &ExitError{Code: exitFailure, Err: err}
		}
		_, err = io.Out.Write(doc)
		return err
	}
	if o.target != targetSnug {
		return usageError("conform: --target goes with --app")
	}
	exe := o.chromium
	if exe == "" {
		var err error
		if exe, err = conform.FindChromium(); err != nil {
			return &ExitError{Code: exitUsage, Err: fmt.Errorf("conform: %w", err)}
		}
	}
	run := conform.RunOptions{Chromium: exe, Timeout: o.timeout, Only: o.only}
	if o.verbose {
		run.Logf = func(format string, args ...any) { fmt.Fprintf(io.Err, "snuggen conform: "+format+"\n", args...) }
	}
	var report *conform.Report
	var err error
	if o.url != "" {
		run.URL = o.url
		report, err = conform.Run(ctx, run)
	} else {
		report, err = conformOwnHost(ctx, io, run)
	}
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		return &ExitError{Code: exitFailure, Err: err}
	}
	if o.json {
		enc := json.NewEncoder(io.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(report); err != nil {
			return err
		}
	} else if err := conform.WriteTable(io.Out, report); err != nil {
		return err
	}
	if !report.Passed() {
		return silentExit(exitFailure)
	}
	return nil
}

// conformOwnHost runs snuggen serve with the kit installed on a free
// loopback port and a temporary data directory, drives the kit there and
// shuts the host down.
func conformOwnHost(ctx context.Context, io *IO, run conform.RunOptions) (*conform.Report, error) {
	dir, err := os.MkdirTemp("", "snuggen-conform-")
	if err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	defer os.RemoveAll(dir)
	doc, err := conform.Kit(ctx, nil)
	if err != nil {
		return nil, err
	}
	kit := filepath.Join(dir, conform.AppKey+".html")
	if err := os.WriteFile(kit, doc, 0o644); err != nil {
		return nil, fmt.Errorf("conform: %w", err)
	}
	ready := make(chan *hostkit.Host, 1)
	so := &serveOptions{
		addr:   "127.0.0.1:0",
		data:   filepath.Join(dir, "data"),
		agent:  "offline",
		getenv: os.Getenv,
		ready:  func(h *hostkit.Host) { ready <- h },
	}
	sctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() {
		// serve's "app …" lines are not conform's output; its log goes to
		// stderr with the report's failures.
		done <- runServe(sctx, &IO{In: strings.NewReader(""), Out: stdio.Discard, Err: io.Err}, so, []string{kit})
	}()
	var h *hostkit.Host
	select {
	case h = <-ready:
	case err := <-done:
		return nil, fmt.Errorf("conform: snuggen serve did not start: %w", err)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	run.URL = h.AppURL(conform.AppKey)
	report, rerr := conform.Run(ctx, run)
	stop()
	if err := <-done; err != nil && rerr == nil {
		rerr = fmt.Errorf("conform: snuggen serve: %w", err)
	}
	return report, rerr
}
