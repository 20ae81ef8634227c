// Package maker is the authoring loop: it turns a sentence into a Snug app
// that builds with --strict and runs, by asking a model and feeding back
// what the tools find. The system prompt is the authoring guide (snuggen
// prompt); the user turn is the request (with the current source when an
// app is changed). Each round extracts the reply's HTML document (fenced or
// bare; a reply with none is asked again once), builds it with the
// packager in strict mode, and when it builds runs the caller's smoke test
// (the real runner in headless Chromium); every diagnostic and finding goes
// back to the model with its line, why and fix, and the current source,
// asking for the whole corrected file. It stops at the first round that is
// clean, or with an error once the rounds, bytes or time run out.
//
// Its limit: it writes nothing and installs nothing; the caller does, and
// only with a Result (an error means there is no app). A generated app is
// as untrusted as any: it is built from memory alone (pack.Options.HTML
// without an FS, so it can read no file of the host) and runs sandboxed.
// The prompts carry the guide and the user's words, never a credential: the
// backend's key travels only in its own auth header.
package maker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/internal/bytesize"
	"github.com/snuggen/snuggen/pack"
)

// Defaults of Options' bounds.
const (
	DefaultRounds        = 3
	MaxRounds            = 10
	DefaultMaxReplyBytes = 1 << 20
	DefaultTimeout       = 10 * time.Minute
)

// Options configure Make.
type Options struct {
	// Agent is the model that writes the app.
	Agent agent.Backend
	// Guide is the system prompt's guide (guide.Render's text).
	Guide string
	// Rounds bounds the model's drafts (DefaultRounds when 0, at most
	// MaxRounds). The one retry of a reply with no document is not a round.
	Rounds int
	// MaxReplyBytes bounds each reply (DefaultMaxReplyBytes when 0).
	MaxReplyBytes int
	// Timeout bounds the whole make (DefaultTimeout when 0).
	Timeout time.Duration
	// Smoke, when set, runs a document that built and returns what went
	// wrong; nil skips the smoke run.
	Smoke func(ctx context.Context, doc []byte) ([]Finding, error)
	// Progress, when set, gets each round as it ends, and Streaming the
	// reply's bytes so far while it streams.
	Progress  func(Round)
	Streaming func(round, bytes int)
}

// Request is what to make.
type Request struct {
	// Prompt is the user's sentence.
	Prompt string
	// Source is the app's current HTML when changing it; nil makes a new app.
	Source []byte
	// Name is the file the diagnostics name (default "app.html").
	Name string
}

func (r Request) name() string {
	if r.Name == "" {
		return "app.html"
	}
	return r.Name
}

func (r Request) appID() string { return pack.ReadMeta(r.Source)["appId"] }

// Finding is one problem the smoke run saw.
type Finding struct {
	What string // e.g. "uncaught exception: TypeError: x is undefined"
	Line int    // the app source's line, 0 when unknown
	Fix  string // what to do about it
}

// Detail formats f for the model.
func (f Finding) Detail() string {
	s := "- " + f.What
	if f.Line > 0 {
		s = fmt.Sprintf("- line %d: %s", f.Line, f.What)
	}
	if f.Fix != "" {
		s += "\n  fix: " + f.Fix
	}
	return s + "\n"
}

// Round is one draft's outcome.
type Round struct {
	N           int
	Bytes       int           // reply bytes received (both replies when one was retried)
	Agent       time.Duration // waiting for the model
	Loop        time.Duration // the loop's own time: extract, build, smoke run
	Retried     bool          // the first reply held no document and was asked again
	Diagnostics []pack.Diagnostic
	Findings    []Finding
	Smoked      bool // a smoke run ran
}

// Clean reports whether the round ended with a working app.
func (r Round) Clean() bool { return len(r.Diagnostics) == 0 && len(r.Findings) == 0 }

// Line is the progress line of a round.
func (r Round) Line() string {
	s := fmt.Sprintf("round %d: %s from the agent in %s", r.N, sizeText(r.Bytes), r.Agent.Round(time.Millisecond))
	if r.Retried {
		s += " (asked again: no HTML document)"
	}
	loop := fmt.Sprintf(" (loop %s)", r.Loop.Round(time.Millisecond))
	if n := len(r.Diagnostics); n > 0 {
		return s + fmt.Sprintf("; build: %d %s", n, plural(n, "problem")) + loop
	}
	s += "; build: ok"
	switch {
	case len(r.Findings) > 0:
		s += fmt.Sprintf("; smoke run: %d %s", len(r.Findings), plural(len(r.Findings), "problem"))
	case r.Smoked:
		s += "; smoke run: ok"
	}
	return s + loop
}

// Result is a working app.
type Result struct {
	Source   []byte // the app's HTML as the model wrote it
	Doc      []byte // the built document
	Manifest pack.Manifest
	Rounds   []Round
}

// Errors Make returns (wrapped, with detail).
var (
	ErrNoDocument = errors.New("the agent answered without an HTML document")
	ErrUnfinished = errors.New("the app still has problems")
	ErrTooLarge   = errors.New("the agent's reply passed the size bound")
	ErrTimeout    = errors.New("the make passed its time bound")
)

// UnfinishedError is a make whose rounds ran out with problems left.
type UnfinishedError struct {
	Rounds []Round
	Source []byte // the last draft
}

func (e *UnfinishedError) Error() string {
	last := e.Rounds[len(e.Rounds)-1]
	var b strings.Builder
	fmt.Fprintf(&b, "%v after %d %s:", ErrUnfinished, len(e.Rounds), plural(len(e.Rounds), "round"))
	for _, d := range last.Diagnostics {
		b.WriteString("\n  " + d.String())
	}
	for _, f := range last.Findings {
		b.WriteString("\n  " + strings.TrimSpace(f.Detail()))
	}
	return b.String()
}

func (e *UnfinishedError) Unwrap() error { return ErrUnfinished }

func sizeText(n int) string { return bytesize.Approx(int64(n)) }
