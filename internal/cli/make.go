package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent/anthropic"
	"github.com/snuggen/snuggen/hostkit/agent/offline"
	"github.com/snuggen/snuggen/hostkit/maker"
	"github.com/snuggen/snuggen/hostkit/maker/smoke"
	"github.com/snuggen/snuggen/internal/bytesize"
	"github.com/snuggen/snuggen/internal/guide"
)

type makeOptions struct {
	agent    serveOptions // the agent's flags, as serve takes them
	app      string       // --app: the folder of the app to change
	out      string       // -o: the new app's folder
	rounds   int
	timeout  time.Duration
	maxReply string
	noSmoke  bool
	chromium string
	restore  int
	versions bool
}

func newMakeCmd(io *IO) *cobra.Command {
	o := &makeOptions{agent: serveOptions{getenv: os.Getenv}}
	c := &cobra.Command{
		Use:   `make "a sentence" | make --app DIR "a change"`,
		Short: "Describe an app in a sentence and get it written, built and run by the agent",
		Long: `Asks the agent (--agent openai or anthropic, as serve picks it) to write a
Snug app: the authoring guide (snuggen prompt) is its system prompt, the
sentence its request. The reply's HTML is built with --strict; every
diagnostic goes back to the agent with its line and fix and the current
source, and it answers with the whole corrected file, for at most --rounds
rounds. Where Chromium is found, an app that builds is run once in the real
runner, and a console error, an uncaught exception, a rejection left
unhandled or a navigation away goes back the same way. One line per round
says what came back and what was found. The app is written to a folder of
its own (-o, else its display name) as app.html; serve it with
snuggen serve DIR.

--app DIR changes the app in DIR: its current source goes with the request,
and the new version replaces app.html only once it builds and runs. Earlier
versions are kept in DIR/.versions; --versions lists them, --restore N
brings one back. The folder's name keys the app's database, so its data
survives every version.

Every make is bounded: --rounds (default 3, at most 10), --max-reply bytes a
reply and --timeout in all. A reply with no HTML document (a refusal, a
question) is asked again once, then the make fails; nothing is written.
The offline agent cannot write apps.`,
		Example: `  OPENAI_API_KEY=… snuggen make --agent openai --model gpt-4o "a habit tracker with streaks"
  snuggen make --agent anthropic --model claude-sonnet-4-5 -o habits "a habit tracker with streaks"
  snuggen make --agent openai --app habits/ "add a weekly chart"
  snuggen make --app habits/ --restore 1`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMake(cmd.Context(), io, o, args)
		},
	}
	f := c.Flags()
	f.StringVar(&o.app, "app", "", "change the app in this folder (its app.html) instead of making a new one")
	f.StringVarP(&o.out, "out", "o", "", "the new app's folder (default: from its display name, in the current folder)")
	f.IntVar(&o.rounds, "rounds", maker.DefaultRounds, fmt.Sprintf("the most drafts asked of the agent (1 to %d)", maker.MaxRounds))
	f.DurationVar(&o.timeout, "timeout", maker.DefaultTimeout, "the most time the whole make may take")
	f.StringVar(&o.maxReply, "max-reply", bytesize.Text(maker.DefaultMaxReplyBytes), "the most bytes read of one reply (B, KiB or MiB)")
	f.BoolVar(&o.noSmoke, "no-smoke", false, "skip the smoke run in Chromium")
	f.StringVar(&o.chromium, "chromium", "", "the Chromium to run the smoke run in (default: $SNUG_CHROMIUM, else chromium on PATH)")
	f.IntVar(&o.restore, "restore", 0, "with --app: make version N of the app current again (the current one is kept)")
	f.BoolVar(&o.versions, "versions", false, "with --app: list the versions kept")
	o.agent.agentFlags(c)
	return c
}

func runMake(ctx context.Context, io *IO, o *makeOptions, args []string) error {
	if o.restore != 0 || o.versions {
		return runVersions(io, o, args)
	}
	if len(args) != 1 || strings.TrimSpace(args[0]) == "" {
		return usageError(`snuggen make needs the app described in one argument: snuggen make "a habit tracker with streaks"`)
	}
	if o.rounds < 1 || o.rounds > maker.MaxRounds {
		return usageError("--rounds %d: want 1 to %d", o.rounds, maker.MaxRounds)
	}
	maxReply, err := parseSize(o.maxReply)
	if err != nil || maxReply <= 0 {
		return usageError("--max-reply %q: want a positive size such as 1MiB", o.maxReply)
	}
	req := maker.Request{Prompt: args[0]}
	if o.app != "" {
		if req.Source, err = os.ReadFile(filepath.Join(o.app, maker.Page)); err != nil {
			return usageError("--app %s: %v (give the folder of an app made with snuggen make, or one with an app.html)", o.app, errors.Unwrap(err))
		}
	} else if o.out != "" && hasPage(o.out) {
		return usageError("-o %s already holds an app; change it with --app %s", o.out, o.out)
	}
	opts, done, err := o.makerOptions(ctx, io, maxReply)
	if err != nil {
		return err
	}
	defer done()
	fmt.Fprintf(io.Err, "snuggen make: bounds: %d rounds, %s a reply, %s in all\n", o.rounds, bytesize.Approx(int64(maxReply)), o.timeout)
	res, err := maker.Make(ctx, opts, req)
	if err != nil {
		fmt.Fprintf(io.Err, "snuggen make: %v\nsnuggen make: nothing was written\n", err)
		return silentExit(exitFailure)
	}
	return o.install(io, res)
}

// makerOptions picks the agent, renders the guide and starts the smoke
// browser; done ends the browser.
func (o *makeOptions) makerOptions(ctx context.Context, io *IO, maxReply int) (maker.Options, func(), error) {
	o.agent.getenv = writerEnv(o.agent.getenv)
	b, err := o.agent.backend()
	if err != nil {
		return maker.Options{}, nil, err
	}
	if _, ok := b.(*offline.Backend); ok {
		return maker.Options{}, nil, usageError("the offline agent cannot write apps: pass --agent openai or --agent anthropic with its key (OPENAI_API_KEY, ANTHROPIC_API_KEY) and --model")
	}
	g, err := guide.Render(ctx)
	if err != nil {
		return maker.Options{}, nil, err
	}
	opts := maker.Options{Agent: b, Guide: g, Rounds: o.rounds, Timeout: o.timeout, MaxReplyBytes: maxReply,
		Progress: func(r maker.Round) { fmt.Fprintf(io.Err, "snuggen make: %s\n", r.Line()) }}
	done := func() {}
	if !o.noSmoke {
		br, err := smoke.Start(ctx, o.chromium)
		if err != nil {
			fmt.Fprintf(io.Err, "snuggen make: no smoke run: %v\n", err)
		} else {
			opts.Smoke, done = br.Run, br.Close
		}
	}
	return opts, done, nil
}

// writerEnv is getenv for an agent that writes apps: a whole app is a long
// reply, and the Anthropic API's default max_tokens would cut it.
func writerEnv(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v := getenv(k); v != "" || k != anthropic.EnvMaxTokens {
			return v
		}
		return "32000"
	}
}

// install writes the made app into its folder.
func (o *makeOptions) install(io *IO, res *maker.Result) error {
	dir := o.app
	if dir == "" {
		dir = o.out
	}
	if dir == "" {
		dir = freeFolder(hostkit.KeyFromPath(res.Manifest.DisplayName + ".html"))
	}
	kept, err := maker.Install(dir, res.Source)
	if err != nil {
		return err
	}
	n := len(res.Rounds)
	fmt.Fprintf(io.Out, "made %s (%s, %d %s, %s built)\n", filepath.Join(dir, maker.Page), res.Manifest.DisplayName, n, plural(n, "round"), bytesize.Approx(int64(len(res.Doc))))
	if kept > 0 {
		fmt.Fprintf(io.Out, "the version it replaced is kept: snuggen make --app %s --restore %d\n", dir, kept)
	}
	fmt.Fprintf(io.Out, "run it: snuggen serve %s\n", dir)
	return nil
}

func runVersions(io *IO, o *makeOptions, args []string) error {
	if o.app == "" || len(args) > 0 {
		return usageError("--restore and --versions take --app DIR and no sentence")
	}
	if o.versions {
		vs, err := maker.Versions(o.app)
		if err != nil {
			return err
		}
		for _, v := range vs {
			fmt.Fprintf(io.Out, "%d\t%s\t%s\n", v.N, v.Time.Format(time.DateTime), v.Path)
		}
		if len(vs) == 0 {
			fmt.Fprintf(io.Err, "%s keeps no earlier versions\n", o.app)
		}
		return nil
	}
	kept, err := maker.Restore(o.app, o.restore)
	if err != nil {
		return &ExitError{Code: exitFailure, Err: err}
	}
	fmt.Fprintf(io.Out, "restored version %d of %s; the version it replaced is %d (snuggen make --app %s --restore %d)\n", o.restore, o.app, kept, o.app, kept)
	return nil
}

// hasPage reports whether dir holds an app page.
func hasPage(dir string) bool { return appPage(dir) != "" }

// freeFolder is base, or base-2, base-3, … the first that holds no app.
func freeFolder(base string) string {
	name := base
	for n := 2; hasPage(name); n++ {
		name = fmt.Sprintf("%s-%d", base, n)
	}
	return name
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
