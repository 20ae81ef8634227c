package maker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/pack"
)

// Make runs the loop for req and returns the working app, or an error and
// no app: ErrNoDocument (a refusal or prose, asked again once), an
// *UnfinishedError (the rounds ran out), ErrTooLarge, ErrTimeout, or the
// backend's own error.
func Make(ctx context.Context, opts Options, req Request) (*Result, error) {
	if opts.Agent == nil {
		return nil, errors.New("maker: no agent")
	}
	if opts.Guide == "" {
		return nil, errors.New("maker: no guide")
	}
	rounds := opts.Rounds
	if rounds <= 0 {
		rounds = DefaultRounds
	}
	rounds = min(rounds, MaxRounds)
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("%w (%s)", ErrTimeout, timeout))
	defer cancel()

	l := &loop{opts: opts, req: req, system: systemPrompt(opts.Guide)}
	user := firstTurn(req)
	var done []Round
	for n := 1; n <= rounds; n++ {
		r, src, err := l.round(ctx, n, user)
		if err != nil {
			return nil, err
		}
		done = append(done, r)
		if opts.Progress != nil {
			opts.Progress(r)
		}
		if r.Clean() {
			return &Result{Source: src, Doc: l.doc, Manifest: l.manifest, Rounds: done}, nil
		}
		if n == rounds {
			return nil, &UnfinishedError{Rounds: done, Source: src}
		}
		user = fixTurn(req, src, r.Diagnostics, r.Findings)
	}
	panic("unreachable")
}

// loop holds one make's state between rounds.
type loop struct {
	opts    Options
	req     Request
	system  string
	retried bool // the one retry of a reply without a document is spent

	doc      []byte // the last round's built document
	manifest pack.Manifest
}

// round asks for one draft and checks it.
func (l *loop) round(ctx context.Context, n int, user string) (Round, []byte, error) {
	r := Round{N: n}
	reply, err := l.ask(ctx, &r, user)
	if err != nil {
		return r, nil, err
	}
	src, ok := Extract(reply)
	if !ok {
		if l.retried {
			return r, nil, fmt.Errorf("%w in round %d: it began %q", ErrNoDocument, n, clip(reply, 200))
		}
		l.retried, r.Retried = true, true
		if reply, err = l.ask(ctx, &r, noDocumentTurn(l.req, reply)); err != nil {
			return r, nil, err
		}
		if src, ok = Extract(reply); !ok {
			return r, nil, fmt.Errorf("%w, asked twice in round %d: it began %q", ErrNoDocument, n, clip(reply, 200))
		}
	}
	start := time.Now()
	if err := l.check(ctx, &r, []byte(src)); err != nil {
		return r, nil, err
	}
	r.Loop = time.Since(start)
	return r, []byte(src), nil
}

// ask sends one turn and adds its bytes and time to r.
func (l *loop) ask(ctx context.Context, r *Round, user string) (string, error) {
	limit := l.opts.MaxReplyBytes
	if limit <= 0 {
		limit = DefaultMaxReplyBytes
	}
	start := time.Now()
	var onText func(string)
	if l.opts.Streaming != nil {
		onText = func(s string) { l.opts.Streaming(r.N, r.Bytes+len(s)) }
	}
	reply, err := l.opts.Agent.Complete(ctx, agent.Completion{System: l.system, User: user, MaxReplyBytes: limit}, onText)
	r.Agent += time.Since(start)
	r.Bytes += len(reply)
	switch {
	case ctx.Err() != nil:
		return "", fmt.Errorf("round %d: %w", r.N, context.Cause(ctx))
	case errors.Is(err, agent.ErrReplyTooLarge):
		return "", fmt.Errorf("round %d: %w (%s): %v", r.N, ErrTooLarge, sizeText(limit), err)
	case err != nil:
		return "", fmt.Errorf("round %d: the agent: %w", r.N, err)
	}
	return reply, nil
}

// check builds src with --strict and, when it builds, runs the smoke test;
// what they find goes into r. An error is one of the tools failing, not a
// finding.
func (l *loop) check(ctx context.Context, r *Round, src []byte) error {
	l.doc = nil
	res, err := pack.Build(ctx, pack.Options{Path: l.req.name(), HTML: src, Strict: true})
	if res == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("round %d: %w", r.N, context.Cause(ctx))
		}
		return fmt.Errorf("round %d: build: %w", r.N, err)
	}
	for _, d := range res.Diagnostics {
		if d.Severity == pack.SeverityError {
			r.Diagnostics = append(r.Diagnostics, d)
		}
	}
	if id := l.req.appID(); len(l.req.Source) > 0 && id != "" && err == nil && res.Manifest.AppID != id {
		r.Findings = append(r.Findings, Finding{
			What: fmt.Sprintf("the new version's snug:app-id is %q, the app's is %q", res.Manifest.AppID, id),
			Fix:  fmt.Sprintf(`keep <meta name="snug:app-id" content=%q>: the app's database belongs to it`, id),
		})
	}
	if err != nil || len(r.Findings) > 0 || l.opts.Smoke == nil {
		l.doc, l.manifest = res.HTML, res.Manifest
		return nil
	}
	found, err := l.opts.Smoke(ctx, res.HTML)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("round %d: %w", r.N, context.Cause(ctx))
		}
		return fmt.Errorf("round %d: smoke run: %w", r.N, err)
	}
	r.Smoked, r.Findings = true, found
	l.doc, l.manifest = res.HTML, res.Manifest
	return nil
}
