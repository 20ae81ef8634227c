package broker

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/snuggen/snuggen/hostkit/frame"
)

// errTimeout is the cause of a request context that ran out of time.
var errTimeout = errors.New("request timed out")

// request is one accepted requestId and its terminal latch (see the design
// note in broker.go).
type request struct {
	s        *Session
	id       string
	respType string // the paired response type: the terminal's type

	ctx    context.Context
	cancel context.CancelFunc
	stop   func() bool // unregisters the deadline watcher

	mu   sync.Mutex
	done bool
	seq  int
}

func newRequest(s *Session, id, respType string) *request {
	parent, cancelParent := context.WithCancel(s.b.ctx)
	ctx, cancelTimeout := context.WithTimeoutCause(parent, s.b.opts.Timeout, errTimeout)
	r := &request{s: s, id: id, respType: respType, ctx: ctx}
	r.cancel = func() { cancelTimeout(); cancelParent() }
	return r
}

// arm registers the watcher that turns a context that ended on its own
// (deadline, broker shutdown) into the terminal frame; finish() unregisters
// it. It runs once the request is in its session's in-flight set.
func (r *request) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stop = context.AfterFunc(r.ctx, r.expire)
}

func (r *request) expire() {
	if errors.Is(context.Cause(r.ctx), errTimeout) {
		r.fail(frame.CodeHostError, fmt.Sprintf("no answer within %s", r.s.b.opts.Timeout))
		return
	}
	r.fail(frame.CodeCancelled, "the host is shutting down")
}

// run calls the handler on the broker-owned goroutine and finishes the
// request with its answer, or with HOST_ERROR when it panics or answers
// nothing. The handler's context carries the Call (see CallFrom).
func (r *request) run(c Call, fn func(ctx context.Context, c Call, r *request) frame.Frame) {
	defer r.s.b.wg.Done()
	r.arm()
	defer func() {
		if p := recover(); p != nil {
			r.s.b.logf("broker: app %s request %s: handler panic: %v\n%s", r.s.app, r.id, p, debug.Stack())
			r.fail(frame.CodeHostError, "the host's handler for this request failed")
		}
	}()
	f := fn(context.WithValue(r.ctx, callKey{}, c), c, r)
	if r.ctx.Err() != nil {
		// The context ended first (deadline, shutdown): whatever the handler
		// made of that, the cause decides the terminal.
		r.expire()
		return
	}
	if f == nil {
		r.fail(frame.CodeHostError, "the host's handler returned no answer")
		return
	}
	setRequestID(f, r.id)
	r.finish(f)
}

// stream sends cumulative text (a non-terminal app-response) while the
// latch is open.
func (r *request) stream(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	r.s.send(streamingFrame(r.id, text, r.seq))
	r.seq++
}

// finish is the latch: the first terminal frame wins, goes out, and closes
// the request; every later call reports false and sends nothing.
func (r *request) finish(f frame.Frame) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.done = true
	if r.stop != nil {
		r.stop()
	}
	// Leave the in-flight set before the terminal goes out, so the app may
	// send its next request the moment it sees this answer.
	r.s.remove(r)
	r.s.send(f)
	r.cancel()
	return true
}

// fail finishes the request with an error frame of its paired type.
func (r *request) fail(code, msg string) bool {
	return r.finish(errorFrame(r.respType, r.id, frame.NewError(code, msg)))
}
