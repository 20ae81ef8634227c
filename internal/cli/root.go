// Package cli holds snuggen's cobra commands. Each verb lives in its own file,
// parses flags into an options struct and runs with injected IO; commands
// return errors and never exit. Exit codes are decided in Main alone:
// 0 success, 1 failure (including a rejected input), 2 usage or unusable input.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// IO is the input and output a command runs with, injected so tests can drive
// commands without a process.
type IO struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// ExitError carries an exit code out of a command. A nil Err means the command
// has already printed what it had to say.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit codes, the only ones snuggen returns.
const (
	exitOK      = 0 // success
	exitFailure = 1 // a failure, a rejected input included
	exitUsage   = 2 // a usage error, or input that cannot be used at all
)

// FlagError is a usage error: a bad flag, flag value, argument or command.
// Main prints it and exits exitUsage. Commands and cobra's hooks return it
// (SetFlagErrorFunc, the Args validators below, unknown subcommands), so no
// code matches cobra's message text.
type FlagError struct{ Err error }

func (e *FlagError) Error() string { return e.Err.Error() }
func (e *FlagError) Unwrap() error { return e.Err }

// usageError is a FlagError with a formatted message.
func usageError(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// silentExit ends a command with code after it has printed its own output.
func silentExit(code int) error { return &ExitError{Code: code} }

// Args validators that fail with a FlagError naming the command.
func noArgs(c *cobra.Command, args []string) error { return rangeArgs(0, 0)(c, args) }
func exactArgs(n int) cobra.PositionalArgs         { return rangeArgs(n, n) }
func maxArgs(n int) cobra.PositionalArgs           { return rangeArgs(0, n) }
func minArgs(n int) cobra.PositionalArgs           { return rangeArgs(n, -1) }

// rangeArgs accepts lo to hi arguments (hi -1: no limit).
func rangeArgs(lo, hi int) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		n, name := len(args), c.CommandPath()
		switch {
		case n >= lo && (hi < 0 || n <= hi):
			return nil
		case hi == 0:
			return usageError("%s takes no arguments, got %q (see '%s --help')", name, args, name)
		case lo == hi:
			return usageError("%s takes %d argument(s), got %d (see '%s --help')", name, lo, n, name)
		case n < lo:
			return usageError("%s needs at least %d argument(s), got %d (see '%s --help')", name, lo, n, name)
		}
		return usageError("%s takes at most %d argument(s), got %d (see '%s --help')", name, hi, n, name)
	}
}

// group makes c a command of subcommands: run alone it prints its help, and
// an unknown subcommand is a FlagError with cobra's suggestions.
func group(c *cobra.Command, subs ...*cobra.Command) *cobra.Command {
	c.AddCommand(subs...)
	c.Args = cobra.ArbitraryArgs
	c.SuggestionsMinimumDistance = 2
	c.RunE = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return c.Help()
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return usageError("%s (see '%s --help')", msg, c.CommandPath())
	}
	return c
}

// verbs are snuggen's commands in the order help lists them (not sorted);
// gen is hidden (it works only in a snuggen source tree). Each name is its
// command's Use (TestVerbNamesAreTheCommands).
var verbs = []struct {
	name  string
	build func(*IO) *cobra.Command
}{
	{"new", newNewCmd},
	{"make", newMakeCmd},
	{"build", newBuildCmd},
	{"serve", newServeCmd},
	{"mcp", newMCPCmd},
	{"check", newCheckCmd},
	{"conform", newConformCmd},
	{"prompt", newPromptCmd},
	{"net", newNetCmd},
	{"version", newVersionCmd},
	{"gen", newGenCmd},
}

// NewRoot builds the root command wired to io, with every verb.
func NewRoot(io *IO) *cobra.Command { return newRoot(io, "") }

// newRoot builds the root command with every verb, or with only the verb
// named only when that is not empty: a process runs one verb, and building
// the others' commands and flag sets was a third of `snuggen version`'s own
// instructions. Help for the root, suggestions and completion scripts need
// every verb; verbFor leaves only empty for them.
func newRoot(io *IO, only string) *cobra.Command {
	root := &cobra.Command{
		Use:   "snuggen",
		Short: "The Go toolchain for Snug: build micro-apps, serve them, check frames",
		Long: `snuggen is the toolchain for Snug, the wire protocol that connects agents to
sandboxed single-file HTML micro-apps.

  snuggen new app NAME       start an app from a scaffold
  snuggen build app.html     bundle an app and the runtime into one HTML file
  snuggen serve app.html     run it in a local host with an offline agent`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &FlagError{Err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	cobra.EnableCommandSorting = false
	// cobra adds its completion command (with a subcommand per shell) on
	// every run; a run of one named verb never shows or reaches it.
	root.CompletionOptions.DisableDefaultCmd = only != ""
	var subs []*cobra.Command
	for _, v := range verbs {
		if only == "" || v.name == only {
			subs = append(subs, v.build(io))
		}
	}
	return group(root, subs...)
}

// verbFor returns the verb args run when their first word names one, also
// after help or a completion request (`help build`, `__complete build
// --`); "" for anything else: the root's help, a completion script, a
// misspelt verb's suggestions and a flag before the verb (cobra may take
// the next word as the flag's value: `-h new` is the root's help).
func verbFor(args []string) string {
	if len(args) > 1 && (args[0] == "help" || args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd) {
		args = args[1:]
	}
	if len(args) > 0 {
		for _, v := range verbs {
			if v.name == args[0] {
				return args[0]
			}
		}
	}
	return ""
}

// Main runs snuggen with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainContext(context.Background(), args, stdin, stdout, stderr)
}

// MainContext is Main with a context whose end stops a serving command as
// Ctrl-C does (a test runs snuggen mcp --http in its own process this way).
func MainContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	io := &IO{In: stdin, Out: stdout, Err: stderr}
	root := newRoot(io, verbFor(args))
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(stderr, "snuggen: %v\n", ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "snuggen: %v\n", err)
	var fe *FlagError
	if errors.As(err, &fe) {
		return exitUsage
	}
	return exitFailure
}
