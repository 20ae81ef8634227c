// Package broker is the heart of hostkit: it owns every app instance's
// session and everything between a frame arriving from an iframe and the
// answer going back. It mints instanceIds, sends host-ready, keeps requestIds
// unique per instance, routes each accepted request to the capability that
// answers it (agent, db, net, open-url, save-file) and guarantees R3: every accepted
// requestId gets exactly one terminal frame and nothing after it.
//
// Its limit: the broker decides, it does not transport. A Session is opened by
// a transport (hostkit/relay) for one iframe it can identify by itself (R4:
// connection and slot, never the announced appId), and every frame for that
// iframe leaves through the Session's Port. What a capability does is the
// capability's business: the broker only calls the handler configured for it
// and turns whatever happens into one terminal frame.
package broker

// Design note: the terminal latch (R3).
//
// Every accepted request is one *request holding a mutex and a done flag.
// The only way to put a frame for a requestId on the wire is through that
// latch: stream() sends a non-terminal frame only while done is false, and
// finish() sets done, sends the terminal frame and removes the request from
// its session, all under the latch's mutex, so the terminal is the last frame
// for that id and no second one can follow. Every ending goes through
// finish(): the handler's return value, a recovered panic, the deadline (a
// timer armed when the request starts), app-cancel, a re-announce
// (SUPERSEDED), a second load or unmount (the instance is dead: the frame is
// latched but not delivered), and Shutdown. Whichever comes first wins; the
// others find the latch closed and do nothing. finish() also
// cancels the handler's context (context.Cause says why), so a handler that
// is still running learns it lost and its late answer is dropped by the
// latch. Handlers run on broker-owned workers that Shutdown waits for (the
// db-requests of one app database one at a time, in the order received: see
// lane.go); the store's answer without waiting (nowDB) runs on the
// goroutine that received the frame, under the same latch, and Shutdown
// waits for it too.
//
// A requestId is recorded as used the moment the broker decides to answer it
// (accepted, or refused with a terminal error), as a 64-bit hash (see
// Session.key). A frame that reuses an id in flight or already answered gets
// no frame on the wire at all: any answer would carry that id and so would
// disturb, or follow, the original's terminal. The refusal is reported to the
// transport's inspector instead. The memory is bounded
// (Options.RequestIDMemory, a fixed window of the most recent ids): an id
// older than the window is forgotten, so host memory stays a few hundred KiB
// per instance however many requests it makes; reusing such an old id is
// the app's own bug and gets an answer as a new request, while an id in
// flight is always refused.
//
// A dead instance gets nothing: Session.send checks the dead flag under a
// read lock that kill() takes for writing, so once kill returns no frame is
// on its way to the port.
//
// Lock order: request.mu, then Session.sendMu (read) or Session.mu; and
// Session.mu, then Broker.mu. Code holding Session.mu never takes a
// request's mutex; it copies what it needs and lets go first. Ports must not
// block (the relay queues), since they are called with the latch held to
// keep a request's frames in order.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/metrics"
)

// Default limits.
const (
	// DefaultMaxInFlight is the per-instance limit on requests in flight:
	// the protocol's INSTANCE_MAX_IN_FLIGHT, the window the runtime keeps,
	// so an honest app never meets it.
	DefaultMaxInFlight = frame.InstanceMaxInFlight
	// BusyRetryAfter is the retryAfterMs of a TOO_MANY_REQUESTS refusal:
	// the host cannot know when a request in flight ends, so it names a
	// short wait.
	BusyRetryAfter = 100 * time.Millisecond
	// DefaultTimeout bounds one request from acceptance to its terminal frame.
	DefaultTimeout = 2 * time.Minute
	// DefaultRequestIDMemory is how many of an instance's most recent
	// requestIds the broker remembers (so that none of them is answered
	// twice): 2¹⁴, at 24 bytes each at most 384 KiB per instance.
	DefaultRequestIDMemory = 1 << 14
	// DefaultShutdownGrace is how long Shutdown lets the db writes
	// running then finish with their own answers.
	DefaultShutdownGrace = 5 * time.Second
)

// Options configure a Broker. A nil capability is not offered: host-ready
// advertises it as false and a request for it is answered HOST_ERROR.
type Options struct {
	// Agent answers app-message (see Agent for the agent.Bridge adapter).
	Agent AgentHandler
	// DB answers db-request (see Store for the store adapter).
	DB DBHandler
	// Net answers net-request (see Netgate for the netgate adapter).
	Net NetHandler
	// OpenURL answers open-url-request (see OpenURL for the openurl adapter).
	OpenURL OpenURLHandler
	// SaveFile answers save-file-request (see SaveFile for the savefile
	// adapter).
	SaveFile SaveFileHandler

	// OnAnnounce receives each accepted app-announce, after host-ready went out
	// (metadata for the runner's app list). Called from the transport's
	// goroutine; it must not block.
	OnAnnounce func(s *Session, a *frame.AppAnnounce)
	// OnResize receives an accepted resize app-event with its height.
	OnResize func(s *Session, height int)
	// OnAppEvent receives every other accepted app-event (unknown events
	// included: the host decides; the broker ignores them).
	OnAppEvent func(s *Session, e *frame.AppEvent)

	// Theme is the theme mode host-ready carries until SetTheme changes it:
	// "light" (the default) or "dark".
	Theme string
	// Locale is host-ready's optional locale (BCP 47); empty omits it.
	Locale string

	// MaxInFlight limits requests in flight per instance (DefaultMaxInFlight
	// when zero). One more is answered TOO_MANY_REQUESTS at once, retryable
	// with retryAfterMs (BusyRetryAfter), and nothing of it runs. Below
	// INSTANCE_MAX_IN_FLIGHT an honest app's runtime can meet the refusal.
	MaxInFlight int
	// Timeout bounds each request (DefaultTimeout when zero); a request still
	// running then is answered HOST_ERROR and its handler's context ends.
	Timeout time.Duration
	// ShutdownGrace bounds how long Shutdown waits for the db writes
	// (IsDBWrite) running when it begins (DefaultShutdownGrace when zero, and never past
	// Shutdown's context): a write that ran is answered what happened, not
	// CANCELLED, which an app takes for not done and sends again.
	ShutdownGrace time.Duration
	// RequestIDMemory is how many of an instance's most recent requestIds
	// are remembered (DefaultRequestIDMemory when zero; 24 bytes each): a
	// frame reusing one of them gets no frame on the wire. An id older than
	// that many newer ones is forgotten, and a frame reusing it is answered
	// as a new request (an id in flight is always known: MaxInFlight bounds
	// those).
	RequestIDMemory int

	// Logf receives the host-side facts an app is not told, a handler's
	// panic with its stack, and the refusals an operator wants to see
	// (an open-url or save-file answered refused, with its reason). Nil
	// discards them.
	Logf func(format string, args ...any)
	// Logger, when set, gets what Logf would as structured records
	// (log/slog) instead: a message and the app, instance, frame type,
	// requestId and reason as attributes. It takes precedence over Logf.
	Logger *slog.Logger

	// Tap, when set, wraps the port of every session the broker opens: the
	// wrapper sees each frame after the broker checked it, on its way to
	// the transport (to record, mirror or, in snuggen's conformance tests,
	// alter it). What a wrapper sends is not checked again.
	Tap func(app string, p Port) Port

	// Metrics, when set, counts each request by app and kind, each error
	// answer by its code, and the instances open (hostkit/metrics). A
	// session resolves its app's counters once: a request pays one
	// counter increment.
	Metrics *metrics.Metrics
}

// Port is the broker's line to one iframe, implemented by the transport.
// Send gets the frame and its JSON encoding (already checked against the
// frame's size class); raw is the port's to keep, the broker does not touch
// it again. Send must not block: it is called while the request's
// terminal latch is held, so that a request's frames stay in order.
type Port interface {
	Send(f frame.Frame, raw []byte)
}

// Broker holds the sessions of every app instance a host runs. It is safe for
// concurrent use.
type Broker struct {
	opts Options

	ctx     context.Context // ends on Shutdown (idle workers leave)
	cancel  context.CancelFunc
	wg      sync.WaitGroup // requests whose handler has not returned
	jobs    chan *request  // idle workers wait here
	workers sync.WaitGroup

	lanes lanes // the order of each app database's requests

	mu       sync.Mutex
	sessions map[*Session]struct{}
	// closing is set (under mu) when Shutdown begins; read without mu on
	// every request.
	closing atomic.Bool
	theme   frame.Theme
}

// New returns a Broker with opts. It panics when opts fail Validate: such a
// Broker would send frames every app drops (an invalid host-ready leaves
// snug.ready pending forever). NewChecked returns the error instead.
func New(opts Options) *Broker {
	b, err := NewChecked(opts)
	if err != nil {
		panic(err)
	}
	return b
}

// NewChecked returns a Broker with opts, or Validate's error naming the
// option to fix.
func NewChecked(opts Options) (*Broker, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.RequestIDMemory <= 0 {
		opts.RequestIDMemory = DefaultRequestIDMemory
	}
	if opts.Theme == "" {
		opts.Theme = frame.ModeLight
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Broker{
		opts:     opts,
		ctx:      ctx,
		cancel:   cancel,
		sessions: make(map[*Session]struct{}),
		theme:    frame.Theme{Mode: opts.Theme},
		jobs:     make(chan *request),
	}, nil
}

// OptionError is an option a Broker cannot use: its field in Options, its
// value, what is wrong with it and how to fix it.
type OptionError struct {
	Option  string // the Options field, e.g. "Theme"
	Value   string // its value, as given
	Problem string
	Fix     string
}

func (e *OptionError) Error() string {
	return fmt.Sprintf("broker: Options.%s %q: %s; %s", e.Option, e.Value, e.Problem, e.Fix)
}

// Validate reports the first option a Broker cannot use as an *OptionError:
// a Theme or Locale that would make host-ready invalid (the runtime drops an
// invalid host-ready, so snug.ready would never resolve), or a limit below
// zero. Theme and Locale are held to the generated validator of the
// host-ready they go into; empty means the default (light) and none.
func (o Options) Validate() error {
	theme := o.Theme
	if theme == "" {
		theme = frame.ModeLight
	}
	if err := hostReady("instance", o, frame.Theme{Mode: theme}, "").Validate(); err != nil {
		var rej *frame.RejectError
		if !errors.As(err, &rej) {
			return fmt.Errorf("broker: the options make an invalid host-ready: %w", err)
		}
		for _, v := range rej.Violations {
			switch {
			case strings.HasPrefix(v.Path, "/theme"):
				return &OptionError{Option: "Theme", Value: o.Theme, Problem: v.Message,
					Fix: fmt.Sprintf("use frame.ModeLight (%q) or frame.ModeDark (%q), or leave it empty for light", frame.ModeLight, frame.ModeDark)}
			case strings.HasPrefix(v.Path, "/locale"):
				return &OptionError{Option: "Locale", Value: o.Locale, Problem: v.Message,
					Fix: `use a BCP 47 language tag such as "en" or "pt-BR", or leave it empty to send none`}
			}
		}
		return fmt.Errorf("broker: the options make an invalid host-ready: %w", err)
	}
	for _, n := range []struct {
		name string
		v    int64
	}{{"MaxInFlight", int64(o.MaxInFlight)}, {"Timeout", int64(o.Timeout)}, {"RequestIDMemory", int64(o.RequestIDMemory)}} {
		if n.v < 0 {
			return &OptionError{Option: n.name, Value: fmt.Sprint(n.v), Problem: "below zero", Fix: "use 0 for the default or a positive value"}
		}
	}
	return nil
}

// workerIdle is how long a worker waits for the next request before it ends.
const workerIdle = 10 * time.Second

// dispatch runs r's handler on an idle worker, or on a new one. Workers
// outlive a request so their grown stacks are reused (a handler's call chain
// into SQLite is deep); they end after workerIdle or on Shutdown.
func (b *Broker) dispatch(r *request) {
	select {
	case b.jobs <- r:
	default:
		b.workers.Add(1)
		go b.worker(r)
	}
}

// launch runs an accepted request: answered at once when now (nil for
// none) has its answer, else on a worker with the handler run makes. An
// ordered request (a db-request) first joins its database's lane (see
// lane.go) and runs only once the lane is its own.
func (b *Broker) launch(r *request, now func(Call) frame.Frame, run func() handlerFunc) {
	// The handler is made only for a request that goes to a worker (a
	// closure over the frame, an allocation a request answered now skips);
	// only the worker reads it, after dispatch or after the lane's queue.
	prepare := func() {
		r.handle = run()
		r.arm()
	}
	if r.ordered && !b.lanes.join(r, prepare) {
		return // queued: it runs once the requests ahead of it are done
	}
	if now != nil && r.runNow(now) {
		if n := r.nextInLane(); n != nil {
			b.dispatch(n)
		}
		return
	}
	prepare()
	b.dispatch(r)
}

func (b *Broker) worker(r *request) {
	defer b.workers.Done()
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		for ; r != nil; r = r.nextInLane() {
			r.run()
		}
		idle.Reset(workerIdle)
		select {
		case r = <-b.jobs:
		case <-idle.C:
			return
		case <-b.ctx.Done():
			return
		}
	}
}

// ErrClosed is returned by Open after Shutdown began.
var ErrClosed = errors.New("broker: shut down")

// Open starts a session for one iframe of the installed app app (the host's
// own key, from the app's URL, never from a frame) whose frames leave through
// port. The session's instanceId is minted now; host-ready goes out on Load
// and as the answer to every app-announce.
func (b *Broker) Open(app string, port Port) (*Session, error) {
	return b.OpenUser("", app, port)
}

// OpenUser is Open for a signed-in user of a host that serves many (the
// user its authenticator named at the page's connection, never anything a
// frame says). Every capability gets the user in Call.User and keys what it
// keeps by (user, app): two users of one app share nothing. The empty user
// is the one local user of a host without an authenticator.
func (b *Broker) OpenUser(user, app string, port Port) (*Session, error) {
	id, err := mintInstanceID()
	if err != nil {
		return nil, err
	}
	return b.openInstance(user, app, id, port)
}

// OpenInstance is Open with an instanceId the host minted itself, for a
// transport whose instances outlive one connection: hostkit/mcpapps signs
// the instanceId into the handle an MCP Apps view presents on every call and
// opens the session again after a restart. The id must be as unguessable as
// Open's (128 random bits) and is never taken from an app.
func (b *Broker) OpenInstance(app, instanceID string, port Port) (*Session, error) {
	return b.openInstance("", app, instanceID, port)
}

// OpenUserInstance is OpenInstance for a signed-in user of a host that
// serves many (OpenUser): hostkit/mcpapps opens each view's session for the
// user its authenticator named on the call, so that everything the
// capabilities keep is keyed by (user, app).
func (b *Broker) OpenUserInstance(user, app, instanceID string, port Port) (*Session, error) {
	return b.openInstance(user, app, instanceID, port)
}

func (b *Broker) openInstance(user, app, instanceID string, port Port) (*Session, error) {
	if instanceID == "" {
		return nil, errors.New("broker: empty instanceId")
	}
	if b.opts.Tap != nil {
		port = b.opts.Tap(app, port)
	}
	s := &Session{
		b:          b,
		user:       user,
		app:        app,
		port:       port,
		instanceID: instanceID,
		inflight:   make(map[string]*request),
		used:       idWindow{max: b.opts.RequestIDMemory},
		seed:       maphash.MakeSeed(),
		m:          b.opts.Metrics.App(app),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closing.Load() {
		return nil, ErrClosed
	}
	b.sessions[s] = struct{}{}
	b.opts.Metrics.SessionOpened()
	return s, nil
}

// mintInstanceID returns 128 random bits, URL-safe base64 (22 characters).
func mintInstanceID() (string, error) {
	var buf [16]byte
	if _, err := rand.Read(buf[:]); err != nil {
		return "", fmt.Errorf("broker: mint instanceId: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(buf[:]), nil
}

// Capabilities is what host-ready advertises: what is configured.
func (b *Broker) Capabilities() frame.Capabilities {
	return capabilities(b.opts)
}

// Theme returns the current theme mode.
func (b *Broker) Theme() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.theme.Mode
}

// CurrentTheme returns the current theme: its mode and its tokens.
func (b *Broker) CurrentTheme() frame.Theme {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.theme
}

// SetTheme changes the theme mode ("light" or "dark") that host-ready
// carries, without tokens, and sends a theme-change host-event to every
// live instance.
func (b *Broker) SetTheme(mode string) error {
	return b.UpdateTheme(frame.Theme{Mode: mode})
}

// UpdateTheme changes the whole theme host-ready carries, its mode and its
// CSS custom-property tokens (the runner sends frame.ThemeTokens), and
// sends it as a theme-change host-event to every live instance. A theme
// host-ready cannot carry (a mode other than light or dark, more tokens than
// the schema allows) or with a token apps may not get (events.ThemeToken:
// a name outside the set, a value that is no plain CSS value) is refused
// and changes nothing.
func (b *Broker) UpdateTheme(t frame.Theme) error {
	if err := hostReady("instance", b.opts, t, "").Validate(); err != nil {
		return fmt.Errorf("broker: theme: %w", err)
	}
	ev, err := themeEvent(t)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.theme = t
	live := b.liveLocked()
	b.mu.Unlock()
	for _, s := range live {
		s.send(ev)
	}
	return nil
}

// Broadcast sends a host-event to every live instance. An event that fails
// events.Check (one the event table does not know, or data beyond its
// fields, R7) is sent to none, and the error says why. Build events with
// hostkit/events.
func (b *Broker) Broadcast(ev *frame.HostEvent) error {
	return b.sendTo(func(*Session) bool { return true }, ev)
}

// SendToApp sends a host-event to every live instance of the installed app
// (the host's key): a connection-event when a grant changes, a hint when
// the app's data changed elsewhere. Build it with hostkit/events (R7); an
// event that fails events.Check is sent to none, and the error says why.
func (b *Broker) SendToApp(app string, ev *frame.HostEvent) error {
	return b.sendTo(func(s *Session) bool { return s.app == app }, ev)
}

// SendToUserApp is SendToApp for the instances of app that user runs only
// (a grant is one user's: its connection-event goes to that user's
// instances).
func (b *Broker) SendToUserApp(user, app string, ev *frame.HostEvent) error {
	return b.sendTo(func(s *Session) bool { return s.user == user && s.app == app }, ev)
}

func (b *Broker) sendTo(match func(*Session) bool, ev *frame.HostEvent) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	b.mu.Lock()
	live := b.liveLocked()
	b.mu.Unlock()
	for _, s := range live {
		if match(s) {
			s.send(ev)
		}
	}
	return nil
}

func (b *Broker) liveLocked() []*Session {
	out := make([]*Session, 0, len(b.sessions))
	for s := range b.sessions {
		out = append(out, s)
	}
	return out
}

func (b *Broker) forget(s *Session) {
	b.mu.Lock()
	if _, ok := b.sessions[s]; ok {
		delete(b.sessions, s)
		b.opts.Metrics.SessionClosed()
	}
	b.mu.Unlock()
}

// Shutdown sends every request in flight its terminal frame (CANCELLED, "the
// host is shutting down") first, refuses new sessions and requests, ends every
// handler's context, and then waits for the handlers to return or ctx to end.
// Sessions stay open so that the transport can deliver the terminals; the
// transport closes its connections after Shutdown returns.
func (b *Broker) Shutdown(ctx context.Context) error {
	b.mu.Lock()
	b.closing.Store(true)
	live := b.liveLocked()
	b.mu.Unlock()
	for _, s := range live {
		s.endAllBut(frame.CodeCancelled, "the host is shutting down", runningWrite)
	}
	b.drainDB(ctx, live)
	for _, s := range live {
		s.endAll(frame.CodeCancelled, "the host is shutting down")
	}
	b.cancel()
	done := make(chan struct{})
	go func() { b.wg.Wait(); b.workers.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("broker: shutdown: handlers still running: %w", ctx.Err())
	}
}

// drainDB waits, up to ShutdownGrace and ctx, for the db writes whose
// handlers are running to finish with their own answers (nothing new
// starts: run cancels what had not begun, and Shutdown ended every other
// request CANCELLED before, as it always did). A write still running then is
// answered HOST_ERROR, which says what the host knows: it may or may not
// have been kept.
func (b *Broker) drainDB(ctx context.Context, live []*Session) {
	deadline := time.Now().Add(b.opts.ShutdownGrace)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	for {
		var running []*request
		for _, s := range live {
			running = s.runningDB(running)
		}
		if len(running) == 0 {
			return
		}
		if !time.Now().Before(deadline) || ctx.Err() != nil {
			for _, r := range running {
				r.fail(frame.CodeHostError, "the host shut down before this write finished; it may or may not have been kept")
			}
			return
		}
		t := time.NewTimer(min(10*time.Millisecond, time.Until(deadline)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

func (b *Broker) logf(format string, args ...any) {
	if b.opts.Logf != nil {
		b.opts.Logf(format, args...)
	}
}

// log is one entry of the host-side log: a structured record with attrs
// on Options.Logger, else the line format and args make on Options.Logf.
func (b *Broker) log(level slog.Level, msg string, attrs []any, format string, args ...any) {
	if l := b.opts.Logger; l != nil {
		l.Log(context.Background(), level, msg, attrs...)
		return
	}
	b.logf(format, args...)
}

func (b *Broker) isClosing() bool { return b.closing.Load() }

// Closing reports whether Shutdown has begun: the host's readiness fails
// from then on.
func (b *Broker) Closing() bool { return b.closing.Load() }
