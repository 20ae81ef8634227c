package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/internal/askgate"
	"github.com/snuggen/snuggen/hostkit/netgate"
	"github.com/snuggen/snuggen/hostkit/openurl"
	"github.com/snuggen/snuggen/hostkit/savefile"
)

// Kinds of question.
const (
	KindNet      = "net"
	KindOpenURL  = "open-url"
	KindSaveFile = "save-file"
)

// Decisions a page answers a confirm with. DecisionSession (net only) is
// "allow until the page closes".
const (
	DecisionOnce    = "once"
	DecisionSession = "session"
	DecisionAlways  = "always"
	DecisionDeny    = "deny"
)

// Prompt is one question for the user, shown in the runner's own dialog.
type Prompt struct {
	Kind   string // "net", "open-url" or "save-file"
	App    string // the app's name as the host knows it
	Method string // the HTTP method (net)
	URL    string // the full URL (net, open-url)

	// save-file: the file the page saves from the user's click.
	Name     string
	MimeType string
	Data     []byte
}

// Confirm asks the user on the page that owns the iframe the request in ctx
// came from (broker.CallFrom: a broker handler's context), and waits for the
// answer: DecisionOnce, DecisionAlways or DecisionDeny. An answer that is
// none of those is a deny. When ctx ends first the page is told to drop the
// question ({"t":"confirm-cancel","id":…}) and ctx's error is returned. A
// request that did not come through a relay is openurl.ErrNoUI (the same
// error as savefile.ErrNoUI).
func Confirm(ctx context.Context, p Prompt) (string, error) {
	port, ok := portOf(ctx)
	if !ok {
		return "", askgate.ErrNoUI
	}
	c := port.c
	id := "c" + strconv.FormatUint(c.rl.confirmSeq.Add(1), 10)
	ch := make(chan string, 1)
	c.mu.Lock()
	if c.slots[port.slot] != port {
		c.mu.Unlock()
		return "", askgate.ErrNoUI
	}
	c.pending[id] = ch
	c.mu.Unlock()
	msg := struct {
		T        string `json:"t"`
		ID       string `json:"id"`
		Slot     string `json:"slot"`
		Kind     string `json:"kind"`
		App      string `json:"app"`
		Method   string `json:"method,omitempty"`
		URL      string `json:"url,omitempty"`
		Readable string `json:"readable,omitempty"` // the URL's Unicode form, when it differs
		Name     string `json:"name,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
		Size     *int   `json:"size,omitempty"`
		Data     []byte `json:"data,omitempty"` // base64
	}{T: "confirm", ID: id, Slot: port.slot, Kind: p.Kind, App: p.App, Method: p.Method, URL: p.URL}
	if r := openurl.Readable(p.URL); p.URL != "" && r != p.URL {
		msg.Readable = r
	}
	if p.Kind == KindSaveFile {
		n := len(p.Data)
		msg.Name, msg.MimeType, msg.Size, msg.Data = p.Name, p.MimeType, &n, p.Data
	}
	raw, err := json.Marshal(msg)
	if err != nil {
		return "", fmt.Errorf("relay: confirm: %w", err)
	}
	if !c.q.push(raw) {
		c.dropPending(id)
		return "", askgate.ErrNoUI
	}
	select {
	case d, open := <-ch:
		if !open {
			return "", askgate.ErrNoUI // the connection ended
		}
		switch d {
		case DecisionOnce, DecisionAlways:
			return d, nil
		case DecisionSession:
			if p.Kind == KindNet {
				return d, nil
			}
		}
		return DecisionDeny, nil
	case <-ctx.Done():
		c.dropPending(id)
		c.q.push(message(struct {
			T  string `json:"t"`
			ID string `json:"id"`
		}{"confirm-cancel", id}))
		return "", ctx.Err()
	}
}

// portOf is the slot of the iframe the request in ctx came from (a broker
// handler's context), while it lives.
func portOf(ctx context.Context) (*slotPort, bool) {
	call, ok := broker.CallFrom(ctx)
	if !ok || call.Session == nil {
		return nil, false
	}
	port, ok := call.Session.Port().(*slotPort)
	if !ok || call.Session.Dead() {
		return nil, false
	}
	return port, true
}

func (c *conn) dropPending(id string) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// Dialogs is the runner page's confirm dialogs as the capabilities ask for
// them: an openurl.Confirmer, a savefile.Confirmer and a netgate.Confirmer. It needs no wiring:
// each question goes to the page of the iframe the request came from (see
// Confirm), so a host can build its gate and opener before its relay.
type Dialogs struct{}

var (
	_ openurl.Confirmer  = Dialogs{}
	_ netgate.Confirmer  = Dialogs{}
	_ savefile.Confirmer = Dialogs{}
	_ openurl.Clicks     = Dialogs{}
	_ savefile.Clicks    = Dialogs{}
)

// maxClicks is how many requestIds a slot keeps marked as the user's click
// until their request is handled: a page marks at most one request per
// frame it relays, so only requests the host has not reached yet count.
const maxClicks = 8

// UserClicked reports whether the page marked the request in ctx as raised
// by the user's own click in the app's frame (the page's transient user
// activation as the request arrived: a click in a frame activates the
// page around it, and an app cannot make one), and forgets the mark.
func (Dialogs) UserClicked(ctx context.Context) bool {
	port, ok := portOf(ctx)
	if !ok {
		return false
	}
	call, _ := broker.CallFrom(ctx)
	c := port.c
	c.mu.Lock()
	defer c.mu.Unlock()
	i := slices.Index(port.clicks, call.RequestID)
	if i < 0 {
		return false
	}
	port.clicks = slices.Delete(port.clicks, i, i+1)
	return true
}

// clicked marks requestId rid of the slot's app as raised by the user's
// click (the page's {"t":"click"} message, sent just before the frame).
func (c *conn) clicked(slot, rid string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.slots[slot]
	if p == nil || rid == "" {
		return
	}
	if len(p.clicks) == maxClicks {
		p.clicks = slices.Delete(p.clicks, 0, 1)
	}
	p.clicks = append(p.clicks, rid)
}

// ConfirmNet asks whether the app may make a request to an origin it has no
// grant for: the page shows the app's name, the method and the full URL.
//
// Requests of one app on one page that wait on the same origin share one
// question and its answer: an app that fetches three things from a new
// origin as it loads raises one dialog. An answer of "until the page
// closes" (DecisionSession) is kept by the page's connection and answers
// that app's later requests to the origin without asking, until the page
// closes or reloads.
func (Dialogs) ConfirmNet(ctx context.Context, r netgate.ConfirmRequest) (netgate.Decision, error) {
	port, ok := portOf(ctx)
	if !ok {
		return netgate.Deny, askgate.ErrNoUI
	}
	c, key := port.c, r.AppKey+"\x00"+r.Origin
	for {
		c.mu.Lock()
		if c.netSession[key] {
			c.mu.Unlock()
			return netgate.Session, nil
		}
		q := c.netAsks[key]
		if q == nil {
			q = &netAsk{done: make(chan struct{})}
			if c.netAsks == nil {
				c.netAsks, c.netSession = map[string]*netAsk{}, map[string]bool{}
			}
			c.netAsks[key] = q
			c.mu.Unlock()
			return c.askNet(ctx, key, q, r)
		}
		c.mu.Unlock()
		select {
		case <-q.done:
			if q.err == nil || errors.Is(q.err, askgate.ErrNoUI) {
				return q.d, q.err
			}
			// The request that asked ended before the answer: ask anew.
		case <-ctx.Done():
			return netgate.Deny, ctx.Err()
		}
	}
}

// netAsk is one net question in front of the user; every request waiting
// on it gets its answer.
type netAsk struct {
	done chan struct{}
	d    netgate.Decision
	err  error
}

// askNet asks question q (key's) on behalf of every request waiting on it.
func (c *conn) askNet(ctx context.Context, key string, q *netAsk, r netgate.ConfirmRequest) (netgate.Decision, error) {
	name := r.AppName
	if name == "" {
		name = r.AppKey
	}
	d, err := Confirm(ctx, Prompt{Kind: KindNet, App: name, Method: r.Method, URL: r.URL})
	q.d, q.err = netgate.Decision(d), err
	if err != nil {
		q.d = netgate.Deny
	}
	c.mu.Lock()
	delete(c.netAsks, key)
	if q.d == netgate.Session {
		c.netSession[key] = true
	}
	c.mu.Unlock()
	close(q.done)
	return q.d, q.err
}

// ConfirmOpen asks whether to open a link: the page shows the full URL and
// opens it itself inside the click on "Open" (the user gesture), then
// answers once.
func (Dialogs) ConfirmOpen(ctx context.Context, p openurl.Prompt) (openurl.Answer, error) {
	d, err := Confirm(ctx, Prompt{Kind: KindOpenURL, App: p.App, URL: p.URL})
	switch {
	case err != nil:
		return openurl.Declined, err
	case d == DecisionDeny:
		return openurl.Declined, nil
	}
	return openurl.Opened, nil
}

// ConfirmSave asks whether to save a file: the page shows the app, the file
// name and its size, and saves it itself inside the click on "Save" (the
// user gesture: a blob URL and an <a download> in the runner's own
// document), then answers once.
func (Dialogs) ConfirmSave(ctx context.Context, p savefile.Prompt) (savefile.Answer, error) {
	d, err := Confirm(ctx, Prompt{Kind: KindSaveFile, App: p.App, Name: p.Name, MimeType: p.MimeType, Data: p.Data})
	switch {
	case err != nil:
		return savefile.Declined, err
	case d == DecisionDeny:
		return savefile.Declined, nil
	}
	return savefile.Saved, nil
}
