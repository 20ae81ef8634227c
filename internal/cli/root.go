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

// usageError marks an error as a usage problem (exit 2).
func usageError(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

// silentExit ends a command with code after it has printed its own output.
func silentExit(code int) error { return &ExitError{Code: code} }

// commands lists every verb's constructor, in the order help shows them.
var commands []func(*IO) *cobra.Command

// register adds a verb to the root command. Each verb's file calls it from
// init, so adding a verb touches only its own file.
func register(f func(*IO) *cobra.Command) { commands = append(commands, f) }

// NewRoot builds the root command wired to io.
func NewRoot(io *IO) *cobra.Command {
	root := &cobra.Command{
		Use:   "snuggen",
		Short: "The Go toolchain for Snug: generate frame code, build micro-apps, serve them",
		Long: `snuggen is the toolchain for Snug, the wire protocol that connects agents to
sandboxed single-file HTML micro-apps.

  snuggen build app.html     bundle an app and the runtime into one HTML file
  snuggen serve app.html     run it in a local host with an offline agent
  snuggen gen                regenerate Go and JS code from schemas/`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &ExitError{Code: 2, Err: fmt.Errorf("%w (see '%s --help')", err, c.CommandPath())}
	})
	for _, f := range commands {
		root.AddCommand(f(io))
	}
	return root
}

// Main runs snuggen with args and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return MainContext(context.Background(), args, stdin, stdout, stderr)
}

// MainContext is Main with a context whose end stops a serving command as
// Ctrl-C does (a test runs snuggen mcp --http in its own process this way).
func MainContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	io := &IO{In: stdin, Out: stdout, Err: stderr}
	root := NewRoot(io)
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
	// cobra reports unknown commands and bad arguments as plain errors.
	if isCobraUsage(err) {
		return 2
	}
	return 1
}
