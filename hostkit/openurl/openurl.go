// Package openurl is the host's side of the open-url pair (Part I §4): a
// strict open-url-request, already validated by frame.Parse, becomes a
// question in the host's own confirm dialog showing the full URL, and the
// URL is opened only from the user's click in that dialog, with no opener and
// no referrer. The answer is an open-url-result: opened, declined (the user
// said no) or refused (policy: no UI to ask, the rate limit) with a reason.
//
// Its limit: it never opens anything itself. The Confirmer — the runner page
// behind hostkit/relay — shows the dialog and opens the URL inside the click
// handler, because only a user gesture in the host's own document may open a
// window; the sandbox gains no capability (C2).
package openurl

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/internal/askgate"
)

// MaxReason is open-url-result's reason limit in code points, the schema's
// maxLength as frame generates it.
const MaxReason = frame.OpenURLResultReasonMaxLength

// Answer is the user's decision.
type Answer int

const (
	// Declined: the user said no (or closed the dialog).
	Declined Answer = iota
	// Opened: the user clicked Open and the runner opened the URL from that click.
	Opened
)

// Prompt is what the dialog shows.
type Prompt struct {
	App string // the installed app's name as the host knows it (never the announced appId)
	URL string // the full URL, exactly as it will be opened
}

// Confirmer shows the host's own confirm dialog with the full URL and opens
// it only from the user's click there. It returns when the user decided, or
// with ctx's error when ctx ended first. ErrNoUI means there is no user to ask.
type Confirmer interface {
	ConfirmOpen(ctx context.Context, p Prompt) (Answer, error)
}

// Clicks is what a Confirmer may also tell: whether the request in ctx came
// from the user's own click in the app (a link, a call in a click handler),
// as the page the app runs in saw it. Such a request waits for the app's
// dialog showing, in order, instead of being refused; the one-at-a-time
// and per-minute limits stay for what an app asks on its own.
type Clicks = askgate.Clicks

// ErrNoUI is a Confirmer's "nobody to ask" (a headless host, a closed page),
// the same error as savefile.ErrNoUI.
var ErrNoUI = askgate.ErrNoUI

// Defaults of the per-app rate limit.
const (
	// DefaultPerMinute is how many dialogs an app may raise in a minute.
	DefaultPerMinute = 6
)

// Options configure an Opener.
type Options struct {
	// PerMinute limits the dialogs one app may raise per minute
	// (DefaultPerMinute when zero). One app has at most one dialog showing.
	PerMinute int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Opener answers open-url-requests through a Confirmer. It is safe for
// concurrent use.
type Opener struct {
	c    Confirmer
	gate *askgate.Gate

	mu     sync.Mutex
	asking map[string]*shared // app + "\x00" + URL -> the question in front of the user or waiting
}

// shared is one open-url question; requests for the same URL of the same
// app that come while it is asked get its answer (a link whose click both
// the app's handler and the runtime's link route take, say).
type shared struct {
	done   chan struct{}
	joined int // requests waiting on it (o.mu)
	status string
	reason string
}

// New returns an Opener asking c; a nil c means no UI: every request is
// refused.
func New(c Confirmer, opts Options) *Opener {
	if opts.PerMinute <= 0 {
		opts.PerMinute = DefaultPerMinute
	}
	return &Opener{c: c, gate: askgate.New(opts.PerMinute, opts.Now)}
}

// Open asks the user whether to open f's URL for app (the host's own key of
// the installed app) and returns the result frame; a URL the strict frame
// refuses is refused without asking. A cancelled ctx is the
// broker's business (it has already answered); the frame returned then is
// refused and is dropped by the broker's latch.
func (o *Opener) Open(ctx context.Context, app string, f *frame.OpenURLRequest) *frame.OpenURLResult {
	// frame.Parse has checked the frame; a host calling Open with a frame of
	// its own gets the same checks (https, no userinfo, one reading of the
	// URL) before anything is shown.
	if err := f.Validate(); err != nil {
		return Result(f.RequestID, frame.StatusRefused, frame.CodeMalformed+": "+err.Error())
	}
	if o.c == nil {
		return Result(f.RequestID, frame.StatusRefused, "this host has no dialog to ask the user")
	}
	key := app + "\x00" + f.URL
	o.mu.Lock()
	if q := o.asking[key]; q != nil {
		q.joined++
		o.mu.Unlock()
		select {
		case <-q.done:
			return Result(f.RequestID, q.status, q.reason)
		case <-ctx.Done():
			return Result(f.RequestID, frame.StatusRefused, "the request ended before its answer")
		}
	}
	q := &shared{done: make(chan struct{})}
	if o.asking == nil {
		o.asking = map[string]*shared{}
	}
	o.asking[key] = q
	o.mu.Unlock()
	r := o.ask(ctx, app, f)
	q.status, q.reason = r.Status, deref(r.Reason)
	o.mu.Lock()
	delete(o.asking, key)
	o.mu.Unlock()
	close(q.done)
	return r
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ask claims app's dialog and asks the user about f's URL.
func (o *Opener) ask(ctx context.Context, app string, f *frame.OpenURLRequest) *frame.OpenURLResult {
	switch err := o.gate.Claim(ctx, app, o.c); {
	case errors.Is(err, askgate.ErrBusy):
		return Result(f.RequestID, frame.StatusRefused, "another link from this app is waiting for the user")
	case errors.Is(err, askgate.ErrRate):
		return Result(f.RequestID, frame.StatusRefused, "rate limit: too many links asked for in the last minute")
	case err != nil:
		return Result(f.RequestID, frame.StatusRefused, "the request ended before its turn")
	}
	defer o.gate.Release(app)
	ans, err := o.c.ConfirmOpen(ctx, Prompt{App: app, URL: f.URL})
	switch {
	case errors.Is(err, ErrNoUI):
		return Result(f.RequestID, frame.StatusRefused, "no user interface to ask: the link was not opened")
	case err != nil:
		return Result(f.RequestID, frame.StatusRefused, "the confirm dialog ended without an answer")
	case ans == Opened:
		return Result(f.RequestID, frame.StatusOpened, "")
	}
	return Result(f.RequestID, frame.StatusDeclined, "the user declined")
}

// Result builds an open-url-result (status frame.StatusOpened,
// frame.StatusDeclined or frame.StatusRefused); reason is cut to the frame's limit and
// omitted when empty.
func Result(requestID, status, reason string) *frame.OpenURLResult {
	r := &frame.OpenURLResult{RequestID: requestID, Status: status}
	if reason != "" {
		reason = frame.Truncate(reason, MaxReason)
		r.Reason = &reason
	}
	return r
}

// Readable is u as a person reads it, for a dialog to show beside u itself:
// each xn-- label of the host as Unicode, and each percent-escaped run of
// UTF-8 in the path, query and fragment as its characters. What could be
// mistaken for something else stays escaped: ASCII escapes (%2F is not a
// /), invisible and format characters (a right-to-left override), spaces
// and controls, and a label that is no valid Punycode. Readable(u) differs
// from u exactly when the ASCII form hides Unicode, so showing both makes a
// look-alike host (аpple.com with a Cyrillic а) visible.
func Readable(u string) string {
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return u
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, tail := rest[:end], rest[end:]
	host, port := authority, ""
	if i := strings.LastIndexByte(authority, ':'); i >= 0 && !strings.Contains(authority[i:], "]") {
		host, port = authority[:i], authority[i:]
	}
	labels := strings.Split(host, ".")
	for i, l := range labels {
		if len(l) > 4 && strings.EqualFold(l[:4], "xn--") {
			if d, err := idna.ToUnicode(l); err == nil && printable(d) {
				labels[i] = d
			}
		}
	}
	return scheme + "://" + strings.Join(labels, ".") + port + unescapeUnicode(tail)
}

// unescapeUnicode decodes the %XX runs of s that spell printable non-ASCII
// characters; everything else is left as it is.
func unescapeUnicode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '%' || hexByte(s, i) < 0x80 {
			b.WriteByte(s[i])
			i++
			continue
		}
		// A run of escaped bytes >= 0x80.
		var raw []byte
		j := i
		for j < len(s) && s[j] == '%' && hexByte(s, j) >= 0x80 {
			raw = append(raw, byte(hexByte(s, j)))
			j += 3
		}
		for k := 0; k < len(raw); {
			r, n := utf8.DecodeRune(raw[k:])
			if r != utf8.RuneError && printable(string(r)) {
				b.WriteRune(r)
			} else {
				for _, c := range raw[k : k+n] {
					fmt.Fprintf(&b, "%%%02X", c)
				}
			}
			k += n
		}
		i = j
	}
	return b.String()
}

// hexByte is the byte %XX at s[i] spells, -1 when s[i:] is no escape.
func hexByte(s string, i int) int {
	if i+2 >= len(s) {
		return -1
	}
	v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
	if err != nil {
		return -1
	}
	return int(v)
}

// printable reports whether s holds only characters that show as
// themselves: graphic, and no format character or space.
func printable(s string) bool {
	for _, r := range s {
		if !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) {
			return false
		}
	}
	return true
}
