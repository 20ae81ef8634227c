package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// errAnswered is the cause a handler's context ends with once its request
// has its terminal frame (see context.Cause); a failure's cause is its code
// and message instead.
var errAnswered = errors.New("broker: the request has its answer")

// request is one accepted requestId and its terminal latch (see the design
// note in broker.go).
type request struct {
	s        *Session
	id       string
	respType string // the paired response type: the terminal's type
	call     Call
	handle   func(ctx context.Context, c Call, r *request) frame.Frame
	ordered  bool        // a request of the app's database: it runs in its lane (lane.go)
	write    bool        // a db-request that may write (IsDBWrite): Shutdown lets it finish
	running  atomic.Bool // its handler has begun
	passed   atomic.Bool // its lane went to the next request (nextInLane)

	ctx    context.Context // carries call; ends when the request is finished
	cancel context.CancelCauseFunc

	mu    sync.Mutex
	done  bool
	seq   int
	timer *time.Timer // the deadline; stopped by finish
}

// newRequest makes the request's context. It is no child of the broker's
// (a child would register with that one context's lock on every request of
// every instance, and leave it again: the lock the relay's 16-page benchmark
// found most contended); Shutdown ends every request in flight itself
// (Session.endAll), which cancels each context, before it ends the broker's.
//
// The context is made by arm, for a request that goes to a worker: one
// answered at once (runNow) has no handler that could wait on it.
func newRequest(s *Session, id, respType string, call Call, handle func(context.Context, Call, *request) frame.Frame) *request {
	return &request{s: s, id: id, respType: respType, call: call, handle: handle}
}

// arm makes the handler's context and starts the deadline, for a request
// that goes to a worker. It runs once the request is in its session's
// in-flight set, so that a deadline firing at once still finds it there; a
// request finished before (cancelled, superseded, shut down) gets a
// context that has ended already.
func (r *request) arm() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ctx, r.cancel = context.WithCancelCause(context.WithValue(context.Background(), callKey{}, r))
	if r.done {
		r.cancel(errAnswered)
	} else {
		r.timer = time.AfterFunc(r.s.b.opts.Timeout, func() {
			r.fail(frame.CodeHostError, fmt.Sprintf("no answer within %s", r.s.b.opts.Timeout))
		})
	}
}

// run calls the handler on a broker-owned worker goroutine and finishes the
// request with its answer, or with HOST_ERROR when it panics or answers
// nothing. An answer that comes after the request finished otherwise
// (cancel, supersede, deadline, shutdown) is dropped by the latch.
func (r *request) run() {
	defer r.s.b.wg.Done()
	defer func() {
		if p := recover(); p != nil {
			r.logPanic(p)
			r.fail(frame.CodeHostError, "the host's handler for this request failed")
		}
	}()
	if r.ctx.Err() != nil {
		return // finished while it waited for a worker or its lane
	}
	// Marked running before closing is read, as Shutdown sets closing
	// before it looks for running requests: either it waits for this one or
	// this one sees it closing.
	r.running.Store(true)
	if r.ordered && r.s.b.isClosing() {
		// Shutdown lets the running db-requests finish; one that has not
		// begun does not begin.
		r.fail(frame.CodeCancelled, "the host is shutting down")
		return
	}
	f := r.handle(r.ctx, r.call, r)
	switch {
	case r.ctx.Err() != nil:
		// Finished already (or the broker is gone: Shutdown ended every
		// request before cancelling its context); this is a no-op then.
		r.fail(frame.CodeCancelled, "the host is shutting down")
	case f == nil:
		r.fail(frame.CodeHostError, "the host's handler returned no answer")
	default:
		frame.SetRequestID(f, r.id)
		r.finish(f, errAnswered)
	}
}

// runNow offers the request to now, its handler's answer without waiting,
// on the calling goroutine (the transport's read loop), and finishes the
// request with that answer. It reports false, having done nothing, when now
// has no answer at once (nil): the request then goes to a worker. A panic
// in now finishes the request with HOST_ERROR, as on a worker.
func (r *request) runNow(now func(Call) frame.Frame) (answered bool) {
	defer func() {
		if p := recover(); p != nil {
			r.logPanic(p)
			r.fail(frame.CodeHostError, "the host's handler for this request failed")
			answered = true
		}
		if answered {
			r.s.b.wg.Done()
		}
	}()
	f := now(r.call)
	if f == nil {
		return false
	}
	frame.SetRequestID(f, r.id)
	r.finish(f, errAnswered)
	return true
}

// logPanic logs a handler's panic with its stack.
func (r *request) logPanic(p any) {
	stack := debug.Stack()
	r.s.b.log(slog.LevelError, "handler panic", []any{"app", r.s.app, "request", r.id, "panic", fmt.Sprint(p), "stack", string(stack)},
		"broker: app %s request %s: handler panic: %v\n%s", r.s.app, r.id, p, stack)
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
// the request; every later call reports false and sends nothing. The
// handler's context ends with cause.
func (r *request) finish(f frame.Frame, cause error) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return false
	}
	r.done = true
	if r.timer != nil {
		r.timer.Stop()
	}
	// Leave the in-flight set before the terminal goes out, so the app may
	// send its next request the moment it sees this answer.
	r.s.remove(r)
	r.s.send(f)
	if r.cancel != nil {
		r.cancel(cause)
	}
	return true
}

// fail finishes the request with an error frame of its paired type.
func (r *request) fail(code, msg string) bool {
	return r.finish(errorFrame(r.respType, r.id, frame.NewError(code, msg)), errors.New(code+": "+msg))
}

// ended reports whether the request has its terminal frame.
func (r *request) ended() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.done
}

func (r *request) laneKey() laneKey { return laneKey{r.call.User, r.call.App} }

// nextInLane is the request that owns r's lane now that r is done with it
// (lanes.next), nil when r is not ordered, none waits, or r passed its
// lane on already (PassLane): a lane is handed on once.
func (r *request) nextInLane() *request {
	if !r.ordered || r.passed.Swap(true) {
		return nil
	}
	return r.s.b.lanes.next(r)
}
