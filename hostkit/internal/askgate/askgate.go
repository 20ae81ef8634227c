// Package askgate limits how often one app may put a question in front of
// the user: one dialog of a kind at a time, and a number per minute. The
// open-url and save-file flows each keep one Gate.
//
// The limits are for what an app asks on its own. A question the user's own
// click raised (a link, an <a download>) waits its turn instead (Wait): a
// person who clicks a second link right after answering the first gets the
// second dialog, whatever the per-minute count.
package askgate

import (
	"context"
	"errors"
	"sync"
	"time"
)

var (
	// ErrBusy: the app already has a dialog of this kind showing (or, for
	// Wait, MaxWaiting questions already waiting).
	ErrBusy = errors.New("askgate: a dialog from this app is showing")
	// ErrRate: the app raised its per-minute number of dialogs.
	ErrRate = errors.New("askgate: too many dialogs in the last minute")
	// ErrNoUI is a confirmer's "nobody to ask" (a headless host, a closed
	// page); openurl.ErrNoUI and savefile.ErrNoUI are this error.
	ErrNoUI = errors.New("no user interface to ask")
)

// Clicks is what a confirmer may also tell: whether the request in ctx came
// from the user's own click in the app (a link, an <a download>, a call in
// a click handler), as the page the app runs in saw it.
type Clicks interface {
	UserClicked(ctx context.Context) bool
}

// Claim takes app's dialog for a question asked through confirmer: in turn
// (Wait) when confirmer is a Clicks that says the user's click raised it,
// else within the app's limits (Reserve). Release ends it.
func (g *Gate) Claim(ctx context.Context, app string, confirmer any) error {
	if k, ok := confirmer.(Clicks); ok && k.UserClicked(ctx) {
		return g.Wait(ctx, app)
	}
	return g.Reserve(app)
}

// MaxWaiting is how many questions from the user's clicks may wait behind
// an app's showing dialog: a person clicks a few links in a row, an app
// that turns one click into many requests gets no more than this.
const MaxWaiting = 4

// Gate is safe for concurrent use.
type Gate struct {
	perMinute int
	now       func() time.Time

	mu   sync.Mutex
	apps map[string]*state
}

type state struct {
	showing bool
	recent  []time.Time     // dialog start times within the last minute
	waiting []chan struct{} // Wait's callers in order; each is closed when its turn comes
}

// New returns a Gate allowing perMinute dialogs a minute per app, timed by
// now (time.Now when nil).
func New(perMinute int, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	return &Gate{perMinute: perMinute, now: now, apps: make(map[string]*state)}
}

func (g *Gate) state(app string) *state {
	st := g.apps[app]
	if st == nil {
		st = &state{}
		g.apps[app] = st
	}
	return st
}

// Reserve claims app's dialog for a question the app asks on its own, or
// says why not (ErrBusy: a dialog shows or a click's question waits;
// ErrRate). A successful Reserve is followed by one Release.
func (g *Gate) Reserve(app string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.state(app)
	if st.showing || len(st.waiting) > 0 {
		return ErrBusy
	}
	now := g.now()
	st.trim(now)
	if len(st.recent) >= g.perMinute {
		return ErrRate
	}
	st.recent = append(st.recent, now)
	st.showing = true
	return nil
}

// trim forgets the dialogs started a minute or more before now.
func (st *state) trim(now time.Time) {
	keep := st.recent[:0]
	for _, t := range st.recent {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	st.recent = keep
}

// start counts a click's dialog starting now: it is not held to the
// per-minute number, but it counts against the app's own questions.
func (st *state) start(now time.Time) {
	st.trim(now)
	st.recent = append(st.recent, now)
}

// Wait claims app's dialog for a question the user's own click raised: it
// waits its turn behind the dialog showing and the clicks before it, in
// order, and is not held to the per-minute number. It returns ErrBusy when
// MaxWaiting questions already wait, or ctx's error when ctx ends first. A
// nil error is followed by one Release.
func (g *Gate) Wait(ctx context.Context, app string) error {
	g.mu.Lock()
	st := g.state(app)
	if !st.showing {
		st.showing = true
		st.start(g.now())
		g.mu.Unlock()
		return nil
	}
	if len(st.waiting) >= MaxWaiting {
		g.mu.Unlock()
		return ErrBusy
	}
	turn := make(chan struct{})
	st.waiting = append(st.waiting, turn)
	g.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, c := range st.waiting {
		if c == turn {
			st.waiting = append(st.waiting[:i], st.waiting[i+1:]...)
			return ctx.Err()
		}
	}
	// The turn came as ctx ended: pass it on.
	g.releaseLocked(st)
	return ctx.Err()
}

// Release ends app's dialog; the next question waiting (Wait) gets it.
func (g *Gate) Release(app string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.apps[app]; st != nil {
		g.releaseLocked(st)
	}
}

func (g *Gate) releaseLocked(st *state) {
	if len(st.waiting) == 0 {
		st.showing = false
		return
	}
	next := st.waiting[0]
	st.waiting = st.waiting[1:]
	st.start(g.now())
	close(next) // showing stays true: the dialog is next's
}
