package store

import (
	"context"
	"errors"
	"io"
	"reflect"
	"sync"
	"time"
	"unsafe"

	"github.com/ncruces/go-sqlite3"
)

// Stopping a statement inside one call.
//
// SQLite checks its interrupt between VM steps (the driver's progress
// handler, every 1000 of them). One step can be one call of a builtin whose
// work is quadratic in its arguments (instr, replace, LIKE, trim over
// megabyte strings: minutes), one sort, or one CHECK constraint evaluated
// by integrity_check; nothing inside such a call looks at the interrupt, and
// the driver runs the engine as Go code translated from Wasm, which no
// goroutine can preempt from outside.
//
// What it does have is memory of its own: each connection's engine lives in
// one address range the driver reserves with mmap and makes accessible with
// mprotect as it grows. The hard stop removes access to that whole range
// (mprotect PROT_NONE). The engine faults on its next load or store, within
// a few instructions; the goroutine running it has runtime/debug's
// SetPanicOnFault set, so the fault is a panic that unwinds out of the engine
// (a read or write system call from that memory fails with EFAULT instead,
// so nothing is written from it). The connection is then abandoned without
// running any more of its code: its files are closed (releasing their locks)
// and its memory unmapped. To the database file this is the same as the
// process dying mid-statement, which SQLite's WAL is built to survive: frames
// without a commit record are ignored when the next connection opens it, so
// the stopped statement leaves nothing and every acknowledged write stays
// (TestCrashSafety proves the kill -9 case, TestFunctionCallStopsAtTheLimit
// this one). The store's own COMMIT runs outside the stoppable window, so a
// stop never lands between a commit being written and being acknowledged.
//
// The driver does not export its memory or the closer of its files: they are
// reached through its Conn's unexported wrp field (engineOf). The go.mod
// pins the driver's version, and the tests above fail if its layout changes.

// hardStopGrace is how long after a call's deadline (or its caller leaving,
// or Close) the soft interrupt has to end it before the hard stop does.
const hardStopGrace = 250 * time.Millisecond

// engine is what the hard stop needs of one connection.
type engine struct {
	mem    []byte    // the engine's whole address reservation; nil: it cannot be stopped
	closer io.Closer // closes the engine's files and frees its memory without running it
}

// engineOf finds conn's engine memory and closer.
func engineOf(conn *sqlite3.Conn) (*engine, error) {
	f := reflect.ValueOf(conn).Elem().FieldByName("wrp")
	if !f.IsValid() || f.Kind() != reflect.Pointer || f.IsNil() {
		return nil, errors.New("the SQLite driver's Conn has no engine wrapper (driver layout changed)")
	}
	// Why unsafe: reflect reads an unexported field only through its
	// address, and the hard stop needs the engine's memory, which the
	// driver exports nothing to reach (the tests fail if its layout moves).
	w := reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Interface()
	parts, ok := w.(interface {
		Slice() *[]byte
		Close() error
	})
	if !ok {
		return nil, errors.New("the SQLite driver's engine wrapper has no memory slice or Close (driver layout changed)")
	}
	e := &engine{closer: parts}
	if canProtect {
		// The reservation is made once, at open, and never moves: its
		// start and capacity stay valid while len grows.
		buf := *parts.Slice()
		if cap(buf) > 0 {
			e.mem = buf[:cap(buf)]
		}
	}
	return e, nil
}

// release closes the engine's files and frees its memory. Nothing of the
// connection may be used afterwards.
func (e *engine) release() error {
	return e.closer.Close()
}

// watch is one call's hard stop. It is armed with the engine that runs the
// call's app-controlled work (the app's statement, the checks of an import
// file) and disarmed around the store's own COMMIT.
type watch struct {
	mu      sync.Mutex
	target  *engine
	stopped *engine // the engine made inaccessible, once stopped
	done    bool
	timer   *time.Timer
	unhook  func() bool
}

// newWatch returns a watch that stops its armed engine hardStopGrace after
// ctx ends.
func newWatch(ctx context.Context) *watch {
	w := &watch{}
	w.unhook = context.AfterFunc(ctx, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if !w.done {
			w.timer = time.AfterFunc(hardStopGrace, w.stop)
		}
	})
	return w
}

func (w *watch) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done || w.target == nil || w.stopped != nil || w.target.mem == nil {
		return
	}
	if protect(w.target.mem) == nil {
		w.stopped = w.target
	}
}

// arm makes e the engine a stop acts on.
func (w *watch) arm(e *engine) {
	w.mu.Lock()
	w.target = e
	w.mu.Unlock()
}

// disarm ends the window and reports the engine stopped in it, if any: that
// engine must be abandoned, whatever its call returned.
func (w *watch) disarm() *engine {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.target = nil
	return w.stopped
}

// end retires the watch and reports the engine it stopped, if any.
func (w *watch) end() *engine {
	w.unhook()
	w.mu.Lock()
	defer w.mu.Unlock()
	w.done = true
	w.target = nil
	if w.timer != nil {
		w.timer.Stop()
	}
	return w.stopped
}

// errStopped is a call whose engine the hard stop ended.
var errStopped = errors.New("the statement was stopped inside a call")
