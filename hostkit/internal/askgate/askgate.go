// Package askgate limits how often one app may put a question in front of
// the user: one dialog of a kind at a time, and a number per minute. The
// open-url and save-file flows each keep one Gate.
package askgate

import (
	"errors"
	"sync"
	"time"
)

var (
	// ErrBusy: the app already has a dialog of this kind showing.
	ErrBusy = errors.New("askgate: a dialog from this app is showing")
	// ErrRate: the app raised its per-minute number of dialogs.
	ErrRate = errors.New("askgate: too many dialogs in the last minute")
)

// Gate is safe for concurrent use.
type Gate struct {
	perMinute int
	now       func() time.Time

	mu   sync.Mutex
	apps map[string]*state
}

type state struct {
	showing bool
	recent  []time.Time // dialog start times within the last minute
}

// New returns a Gate allowing perMinute dialogs a minute per app, timed by
// now (time.Now when nil).
func New(perMinute int, now func() time.Time) *Gate {
	if now == nil {
		now = time.Now
	}
	return &Gate{perMinute: perMinute, now: now, apps: make(map[string]*state)}
}

// Reserve claims app's dialog, or says why not (ErrBusy, ErrRate). A
// successful Reserve is followed by one Release.
func (g *Gate) Reserve(app string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	st := g.apps[app]
	if st == nil {
		st = &state{}
		g.apps[app] = st
	}
	if st.showing {
		return ErrBusy
	}
	now := g.now()
	keep := st.recent[:0]
	for _, t := range st.recent {
		if now.Sub(t) < time.Minute {
			keep = append(keep, t)
		}
	}
	st.recent = keep
	if len(st.recent) >= g.perMinute {
		return ErrRate
	}
	st.recent = append(st.recent, now)
	st.showing = true
	return nil
}

// Release ends app's dialog.
func (g *Gate) Release(app string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if st := g.apps[app]; st != nil {
		st.showing = false
	}
}
