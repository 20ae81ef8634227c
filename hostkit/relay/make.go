package relay

import (
	"context"
	"encoding/json"
	"unicode/utf8"
)

// MaxMakePromptBytes bounds the sentence a page's make message carries: a
// description of an app, not a document.
const MaxMakePromptBytes = 4000

// Maker runs the runner's make boxes ("New app", "Change this app"; hostkit's
// WithMake) for the relay. The relay gives it only what reached it over the
// runner's own WebSocket: an upgrade from the runner's origin and address,
// of the user Options.Authenticate named. A cross-site page cannot open that
// socket, so it cannot start a make (the Origin check is the CSRF defence).
type Maker interface {
	// Info is the host's answer to the page's {"t":"make-info"}: whether
	// user may make apps here and, when not, why and the fix. It is sent
	// as it is, its "t" set to "make-info".
	Info(user string) map[string]any
	// Make runs one make for user and returns when it is over; ctx ends
	// when the page's connection does. send queues a message to the page
	// ({"t":"make-round",…}, {"t":"make-end",…}); the last one Make sends
	// is its make-end.
	Make(ctx context.Context, user string, req MakeRequest, send func(msg any))
	// Restore makes the version before req.App's current one current
	// again (req.Prompt is unused) and sends its make-end.
	Restore(ctx context.Context, user string, req MakeRequest, send func(msg any))
}

// MakeRequest is one make the page asked for.
type MakeRequest struct {
	ID     string // the page's id for the make, echoed in every message about it
	Prompt string // the user's sentence
	App    string // the installed app to change; "" makes a new one
}

// makeEnd is the relay's own make-end: a make it did not start.
type makeEnd struct {
	T     string `json:"t"`
	ID    string `json:"id"`
	Error string `json:"error"`
}

// send queues msg for the page.
func (c *conn) send(msg any) {
	if raw, err := json.Marshal(msg); err == nil {
		c.q.push(raw)
	}
}

// makeInfo answers {"t":"make-info"}.
func (c *conn) makeInfo() {
	info := map[string]any{"ready": false} // no why: the page shows no box
	if m := c.rl.opts.Maker; m != nil {
		info = m.Info(c.user)
	}
	info["t"] = "make-info"
	c.send(info)
}

// startMake runs {"t":"make",…} (or, restore set, {"t":"make-restore",…})
// on a goroutine of the relay's (Close waits for it), one at a time per
// connection; it ends with the connection.
func (c *conn) startMake(m inMsg, restore bool) {
	if !validSlot(m.ID) {
		return // no id to answer with; the page never sends one
	}
	refuse := func(why string) { c.send(makeEnd{T: "make-end", ID: m.ID, Error: why}) }
	switch {
	case c.rl.opts.Maker == nil:
		refuse("this host does not make apps")
		return
	case restore && m.App == "":
		refuse("name the app to restore")
		return
	case !restore && (len(m.Prompt) == 0 || len(m.Prompt) > MaxMakePromptBytes || !utf8.ValidString(m.Prompt)):
		refuse("describe the app in 1 to 4000 bytes of text")
		return
	}
	c.mu.Lock()
	busy := c.making
	c.making = !busy
	c.mu.Unlock()
	if busy {
		refuse("this page is already making an app: wait for it to end")
		return
	}
	rl := c.rl
	rl.mu.Lock()
	if rl.closed {
		rl.mu.Unlock()
		return
	}
	rl.wg.Add(1)
	rl.mu.Unlock()
	go func() {
		defer rl.wg.Done()
		defer func() {
			c.mu.Lock()
			c.making = false
			c.mu.Unlock()
		}()
		req := MakeRequest{ID: m.ID, Prompt: m.Prompt, App: m.App}
		if restore {
			rl.opts.Maker.Restore(c.ctx, c.user, req, c.send)
		} else {
			rl.opts.Maker.Make(c.ctx, c.user, req, c.send)
		}
	}()
}
