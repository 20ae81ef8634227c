package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/metrics"
)

// Session is one app instance: one iframe as the transport identifies it
// (R4). Its instanceId is minted by the host; the announced appId is only
// metadata.
type Session struct {
	b          *Broker
	user       string // the signed-in user ("" for the one local user)
	app        string
	port       Port
	instanceID string

	dead atomic.Bool // navigated (second load) or unmounted: nothing more is sent
	why  string      // why the instance died; set under sendMu when dead is
	// sendMu makes "not dead, so send" atomic against kill: once kill holds
	// it and sets dead, no frame is on its way to the port.
	sendMu sync.RWMutex

	mu       sync.Mutex
	loads    int
	announce *frame.AppAnnounce
	inflight map[string]*request
	used     idWindow     // hashes of the most recent requestIds answered or being answered
	seed     maphash.Seed // this session's own: collisions cannot be aimed
	locale   string       // the page's locale (SetLocale); "" for Options.Locale

	m *metrics.App // the app's counters (Options.Metrics), nil without
}

// App is the installed app's host key the session was opened with.
func (s *Session) App() string { return s.app }

// User is the user the session was opened for (OpenUser); "" for the one
// local user.
func (s *Session) User() string { return s.user }

// InstanceID is the host-minted instanceId.
func (s *Session) InstanceID() string { return s.instanceID }

// SetLocale sets the locale this instance's host-ready carries from now on
// (the user's, as the page that shows the app reports it), in place of
// Options.Locale. A tag that is no BCP 47 language tag, or that host-ready
// cannot carry, is refused and changes nothing.
func (s *Session) SetLocale(tag string) error {
	if err := CheckLocale(tag); err != nil {
		return err
	}
	s.mu.Lock()
	s.locale = tag
	s.mu.Unlock()
	return nil
}

// CheckLocale reports whether host-ready can carry tag as its locale: a
// BCP 47 language tag (its shape) within the schema's length.
func CheckLocale(tag string) error {
	if !localeRE().MatchString(tag) {
		return fmt.Errorf("broker: locale %q is not a BCP 47 language tag such as \"en\" or \"pt-BR\"", tag)
	}
	if err := hostReady("instance", Options{}, frame.Theme{Mode: frame.ModeLight}, tag).Validate(); err != nil {
		return fmt.Errorf("broker: locale: %w", err)
	}
	return nil
}

// localeRE is the shape of a BCP 47 language tag: a 2-8 letter language,
// then subtags of 1-8 letters or digits (RFC 5646 §2.1, without checking
// the registry).
var localeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*$`) })

// Announced returns the last accepted app-announce, nil before the first.
func (s *Session) Announced() *frame.AppAnnounce {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.announce
}

// Dead reports whether the instance navigated away or was unmounted.
func (s *Session) Dead() bool { return s.dead.Load() }

// InFlight reports how many requests are in flight.
func (s *Session) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.inflight)
}

// Load reports that the iframe fired its load event. The first load sends
// host-ready. A later load means the document navigated: the instance is
// dead, its requests in flight end (their terminals are latched but not
// delivered) and it is sent nothing more.
func (s *Session) Load() {
	s.mu.Lock()
	s.loads++
	first := s.loads == 1
	s.mu.Unlock()
	if first {
		s.sendHostReady()
		return
	}
	s.kill("the app instance navigated away")
}

// Close reports that the iframe was removed (unmount) or its transport went
// away: like a navigation, the instance is dead.
func (s *Session) Close() {
	s.kill("the app instance was closed")
	s.b.forget(s)
}

func (s *Session) kill(reason string) {
	s.sendMu.Lock()
	was := s.dead.Swap(true)
	if !was {
		s.why = reason
	}
	s.sendMu.Unlock()
	if was {
		return
	}
	s.endAll(frame.CodeCancelled, reason)
	if f, ok := s.b.opts.Agent.(interface{ Forget(instanceKey string) }); ok {
		f.Forget(s.instanceID)
	}
}

// ResetAgent is the user's explicit reset of the instance's parse-failure
// budget (after frame.ParseFailureBudget consecutive PARSE_FAILED answers
// the agent bridge refuses the instance until then). An agent handler
// without the budget (no Reset(instanceKey string) error or ResetCall(Call)
// error method) has nothing to reset. It fails, and the transport answers RESET_FAILED, when there is
// nothing it could reset: the instance is dead (navigated, closed or ended),
// the host is shutting down or offers no agent; or when the agent handler's
// own Reset fails.
func (s *Session) ResetAgent() error {
	s.sendMu.RLock()
	dead, why := s.dead.Load(), s.why
	s.sendMu.RUnlock()
	switch {
	case dead:
		return fmt.Errorf("broker: reset: %s; open the app again to start over", why)
	case s.b.isClosing():
		return errors.New("broker: reset: the host is shutting down")
	case s.b.opts.Agent == nil:
		return errors.New("broker: reset: this host offers no agent, so there is no retry budget to reset")
	}
	if r, ok := s.b.opts.Agent.(interface {
		ResetCall(c Call) error
	}); ok {
		// A budget kept beyond the instance (per user and app) is reset
		// by who asks, not by the instance key alone.
		if err := r.ResetCall(Call{User: s.user, App: s.app, InstanceID: s.instanceID, Session: s}); err != nil {
			return fmt.Errorf("broker: reset: %w", err)
		}
		return nil
	}
	if r, ok := s.b.opts.Agent.(interface {
		Reset(instanceKey string) error
	}); ok {
		if err := r.Reset(s.instanceID); err != nil {
			return fmt.Errorf("broker: reset: %w", err)
		}
	}
	return nil
}

// Event sends a host-event to the instance unless it is dead. Build events
// with hostkit/events (R7): one that fails events.Check (an event the table
// does not know, or data beyond its fields) is not sent, and the error says
// why.
func (s *Session) Event(ev *frame.HostEvent) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	s.send(ev)
	return nil
}

// Verdict is what the broker did with one inbound frame, for a transport's
// inspector.
type Verdict struct {
	Type      string // the frame's type when it had a string one
	RequestID string // the frame's requestId when it had one
	Verdict   string // "accept", "ignore" or "reject"
	Code      string // the error code of a rejection
	Message   string // why, for a rejection or an ignored frame
}

// Receive handles one raw frame that came from this session's iframe. It
// never waits on a capability: accepted requests run on the broker's
// workers, except what the store answers without waiting (nowDB: its
// kvGet on a free database), which is answered before Receive returns.
// Call it from one goroutine per session (the transport's reader), so that
// the iframe's frames are handled in the order it sent them.
func (s *Session) Receive(ctx context.Context, raw []byte) Verdict {
	if s.dead.Load() {
		v := peek(raw)
		v.Verdict, v.Message = "ignore", "the app instance is dead (it navigated or was closed)"
		return v
	}
	d := dispatchers.Get().(*dispatcher)
	defer func() { *d = dispatcher{}; dispatchers.Put(d) }()
	d.s = s
	fr, err := frame.Parse(raw)
	err = frame.Handle(ctx, fr, err, d, d.reply)
	switch rej := rejectOf(err); {
	case rej != nil:
		v := Verdict{Type: rej.Type, RequestID: rej.RequestID, Verdict: "reject", Code: rej.Code, Message: rej.Error()}
		if d.v.Message != "" { // the answer was withheld
			v.Message += "; " + d.v.Message
		}
		return v
	case err != nil:
		v := peek(raw)
		v.Verdict, v.Code, v.Message = "reject", frame.CodeMalformed, err.Error()
		return v
	case !d.called:
		v := peek(raw)
		v.Verdict = "ignore"
		if v.Message == "" {
			v.Message = "not a known app-to-host frame (R2)"
		}
		return v
	}
	return d.v
}

// peek reads type and requestId for the inspector only; the frame itself was
// judged by frame.Parse.
func peek(raw []byte) Verdict {
	var p struct {
		Type      any `json:"type"`
		RequestID any `json:"requestId"`
	}
	_ = json.Unmarshal(raw, &p)
	var v Verdict
	v.Type, _ = p.Type.(string)
	v.RequestID, _ = p.RequestID.(string)
	return v
}

// dispatcher implements the generated frame.Handlers for one Receive call:
// frame.Dispatch parses, answers parse failures (R1) through reply, ignores
// what R2 says to ignore, and calls one method per app→host frame.
var _ frame.Handlers = (*dispatcher)(nil)

type dispatcher struct {
	s      *Session
	called bool
	v      Verdict
}

// dispatchers holds the dispatchers of Receive calls in progress: handed to
// frame.Handle as Handlers, one would be allocated per frame. Nothing keeps
// a dispatcher past its call (the handlers' closures take the frame and
// the session, never it).
var dispatchers = sync.Pool{New: func() any { return new(dispatcher) }}

// reply sends Dispatch's R1 answer to a frame that failed parsing, unless
// its recovered requestId is in flight or used: the answer would carry that
// id and disturb the original.
func (d *dispatcher) reply(f frame.Frame) {
	rid := frame.RequestIDOf(f)
	s := d.s
	s.mu.Lock()
	_, busy := s.inflight[rid]
	k := s.key(rid)
	if busy || s.used.has(k) {
		s.mu.Unlock()
		d.v.Message = fmt.Sprintf("no answer sent: requestId %q is already in use on this instance", rid)
		return
	}
	s.used.add(k)
	s.mu.Unlock()
	s.send(f)
}

func (d *dispatcher) accept(typ, rid string) {
	d.called = true
	d.v = Verdict{Type: typ, RequestID: rid, Verdict: "accept"}
}

func (d *dispatcher) refuse(code, msg string) {
	d.v.Verdict, d.v.Code, d.v.Message = "reject", code, msg
}

func (d *dispatcher) ignore(msg string) {
	d.v.Verdict, d.v.Message = "ignore", msg
}

// AppAnnounce answers with host-ready after superseding in-flight work (R4).
func (d *dispatcher) AppAnnounce(ctx context.Context, f *frame.AppAnnounce) {
	d.accept(f.FrameType(), "")
	s := d.s
	s.endAll(frame.CodeSuperseded, "a new app-announce from the same iframe superseded this request")
	s.mu.Lock()
	s.announce = f
	s.mu.Unlock()
	s.sendHostReady()
	if cb := s.b.opts.OnAnnounce; cb != nil {
		cb(s, f)
	}
}

// AppCancel ends the named request with CANCELLED. A cancel for an id not in
// flight, or carrying another instanceId, does nothing.
func (d *dispatcher) AppCancel(ctx context.Context, f *frame.AppCancel) {
	d.accept(f.FrameType(), f.RequestID)
	s := d.s
	if f.InstanceID != s.instanceID {
		d.refuse(frame.CodeMalformed, "instanceId does not match this iframe's instance; nothing cancelled")
		return
	}
	s.mu.Lock()
	r := s.inflight[f.RequestID]
	s.mu.Unlock()
	if r == nil {
		d.ignore("no request in flight with this requestId")
		return
	}
	r.fail(frame.CodeCancelled, "cancelled by the app")
}

// AppMessage sends the request to the agent.
func (d *dispatcher) AppMessage(ctx context.Context, f *frame.AppMessage) {
	h := d.s.b.opts.Agent
	d.start(f, f.InstanceID, h != nil, "the agent", func(ctx context.Context, c Call, r *request) frame.Frame {
		resp := h.AppMessage(ctx, c, f, r.stream)
		if resp == nil {
			return nil
		}
		if resp.OK && isStreaming(resp) {
			return hostError(frame.TypeAppResponse, "the agent handler returned a streaming frame as its answer")
		}
		return resp
	})
}

// DBRequest sends the request to the app's database.
func (d *dispatcher) DBRequest(ctx context.Context, f *frame.DBRequest) {
	h := d.s.b.opts.DB
	var now func(Call) frame.Frame
	if n, ok := h.(nowDB); ok {
		now = func(c Call) frame.Frame { return answer(n.dbRequestNow(c, f)) }
	}
	d.startNow(f, f.InstanceID, h != nil, "db", true, now, func() handlerFunc {
		return func(ctx context.Context, c Call, r *request) frame.Frame {
			return answer(h.DBRequest(ctx, c, f))
		}
	})
}

// NetRequest sends the request to the governed network.
func (d *dispatcher) NetRequest(ctx context.Context, f *frame.NetRequest) {
	h := d.s.b.opts.Net
	d.start(f, f.InstanceID, h != nil, "net", func(ctx context.Context, c Call, r *request) frame.Frame {
		return answer(h.NetRequest(ctx, c, f))
	})
}

// OpenURLRequest sends the request to the open-url flow.
func (d *dispatcher) OpenURLRequest(ctx context.Context, f *frame.OpenURLRequest) {
	h := d.s.b.opts.OpenURL
	d.start(f, f.InstanceID, h != nil, "open-url", func(ctx context.Context, c Call, r *request) frame.Frame {
		return answer(h.OpenURLRequest(ctx, c, f))
	})
}

// SaveFileRequest sends the request to the save-file flow.
func (d *dispatcher) SaveFileRequest(ctx context.Context, f *frame.SaveFileRequest) {
	h := d.s.b.opts.SaveFile
	d.start(f, f.InstanceID, h != nil, "save-file", func(ctx context.Context, c Call, r *request) frame.Frame {
		return answer(h.SaveFileRequest(ctx, c, f))
	})
}

// AppEvent delivers resize (and any other event) to the host's callbacks.
func (d *dispatcher) AppEvent(ctx context.Context, f *frame.AppEvent) {
	d.accept(f.FrameType(), "")
	s := d.s
	if f.InstanceID != s.instanceID {
		d.refuse(frame.CodeMalformed, "instanceId does not match this iframe's instance; event dropped")
		return
	}
	if f.Event == frame.EventResize {
		h, err := resizeHeight(f)
		if err != nil {
			d.refuse(frame.CodeMalformed, err.Error())
			return
		}
		if cb := s.b.opts.OnResize; cb != nil {
			cb(s, h)
		}
		return
	}
	if cb := s.b.opts.OnAppEvent; cb != nil {
		cb(s, f)
		return
	}
	d.ignore("unknown app-event " + f.Event + " (ignored)")
}

// start accepts or refuses a request. Every refusal that is answered on the
// wire marks the requestId used, like an accepted request, so no later frame
// can carry that id again.
func (d *dispatcher) start(req frame.Frame, iid string, offered bool, what string, run func(ctx context.Context, c Call, r *request) frame.Frame) {
	d.startNow(req, iid, offered, what, false, nil, func() handlerFunc { return run })
}

// handlerFunc is a request's handler as a worker runs it.
type handlerFunc = func(ctx context.Context, c Call, r *request) frame.Frame

// startNow is start with now, the handler's answer without waiting (nil
// when it has none), and ordered for a request of the app's database, which
// takes effect in its lane's order (see lane.go): an accepted request is
// offered to now first, on this goroutine, and goes to a worker (with the
// handler run makes) only when now has no answer at once. Either way it is
// in flight, under its latch, until its terminal.
func (d *dispatcher) startNow(req frame.Frame, iid string, offered bool, what string, ordered bool, now func(Call) frame.Frame, run func() handlerFunc) {
	if r := d.admit(req, iid, offered, what, ordered); r != nil {
		d.s.b.launch(r, now, run)
	}
}

// admit accepts req as a request in flight, or refuses it (and returns nil).
// The request is whole (ordered, and whether it writes) before it is in
// flight: Shutdown reads those of every request in flight.
func (d *dispatcher) admit(req frame.Frame, iid string, offered bool, what string, ordered bool) *request {
	respType, typ, rid := frame.AnswerType(req.FrameType()), req.FrameType(), frame.RequestIDOf(req)
	d.accept(typ, rid)
	d.s.m.Request(typ)
	s := d.s
	s.mu.Lock()
	if _, busy := s.inflight[rid]; busy {
		s.mu.Unlock()
		d.refuse(frame.CodeMalformed, fmt.Sprintf("duplicate requestId %q: a request with this id is in flight; no answer sent, the original is untouched", rid))
		return nil
	}
	k := s.key(rid)
	if s.used.has(k) {
		s.mu.Unlock()
		d.refuse(frame.CodeMalformed, fmt.Sprintf("duplicate requestId %q: this id was already answered; requestIds must be unique per instance (R4); no answer sent", rid))
		return nil
	}
	s.used.add(k)
	var refusal *frame.Error
	switch {
	case iid != s.instanceID:
		refusal = frame.NewError(frame.CodeMalformed, "instanceId does not match the instance the host minted for this iframe (R4)")
	case s.b.isClosing():
		refusal = frame.NewError(frame.CodeCancelled, "the host is shutting down")
	case !offered:
		refusal = frame.NewError(frame.CodeCapabilityAbsent, "this host does not offer "+what)
	case len(s.inflight) >= s.b.opts.MaxInFlight:
		refusal = frame.NewError(frame.CodeTooManyRequests, fmt.Sprintf("too many requests in flight on this instance (limit %d); nothing ran: send it again after an answer", s.b.opts.MaxInFlight))
		refusal.RetryAfterMs = new(int(BusyRetryAfter / time.Millisecond))
	}
	if refusal != nil {
		s.mu.Unlock()
		d.refuse(refusal.Code, refusal.Message)
		s.send(errorFrame(respType, rid, refusal))
		return nil
	}
	r := newRequest(s, rid, respType, Call{User: s.user, App: s.app, InstanceID: s.instanceID, RequestID: rid, Session: s}, nil)
	r.ordered = ordered
	if dr, ok := req.(*frame.DBRequest); ok && ordered {
		r.write = IsDBWrite(dr)
	}
	s.inflight[rid] = r
	s.b.wg.Add(1)
	s.mu.Unlock()
	return r
}

// endAll ends every request in flight with code. On a dead session the
// terminals are latched but not delivered.
func (s *Session) endAll(code, msg string) { s.endAllBut(code, msg, nil) }

// endAllBut is endAll sparing the requests keep reports (nil: none).
func (s *Session) endAllBut(code, msg string, keep func(*request) bool) {
	s.mu.Lock()
	rs := make([]*request, 0, len(s.inflight))
	for _, r := range s.inflight {
		if keep == nil || !keep(r) {
			rs = append(rs, r)
		}
	}
	s.mu.Unlock()
	for _, r := range rs {
		r.fail(code, msg)
	}
}

// runningWrite reports a db write whose handler has begun.
func runningWrite(r *request) bool { return r.write && r.running.Load() }

// runningDB appends the db writes in flight whose handlers have begun.
func (s *Session) runningDB(out []*request) []*request {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.inflight {
		if runningWrite(r) {
			out = append(out, r)
		}
	}
	return out
}

// key is the requestId's entry in the used window: a 64-bit hash with the
// session's own seed. It keeps the window small; a collision — odds about
// n·w/2⁶⁴ for n ids checked against a window of w, some 10⁻⁶ at a billion
// ids — would make a fresh id look used, costing that one request its
// answer, never another instance anything.
func (s *Session) key(rid string) uint64 { return maphash.String(s.seed, rid) }

func (s *Session) remove(r *request) {
	s.mu.Lock()
	if s.inflight[r.id] == r {
		delete(s.inflight, r.id)
	}
	s.mu.Unlock()
}

func (s *Session) sendHostReady() {
	s.mu.Lock()
	locale := s.locale
	s.mu.Unlock()
	s.send(hostReady(s.instanceID, s.b.opts, s.b.CurrentTheme(), locale))
}

// send encodes f, enforces its size class and makes sure the generated
// parser accepts it (and a host-event passes events.Check) before it hands
// it to the port, unless the instance is dead: the app never receives a frame its
// runtime would reject. A terminal frame that fails (a host's own handler
// may build a wrong one: ok:true without data, an over-long message) is
// replaced by the pair's error answer; any other (host-ready, a host-event,
// streaming text) is not sent, and Options.Logf says why. It reports whether
// a frame went out. An answer that refuses is logged too (Options.Logf).
func (s *Session) send(f frame.Frame) bool {
	s.sendMu.RLock()
	defer s.sendMu.RUnlock()
	if s.dead.Load() {
		return false
	}
	// The generated encoder writes what it is sure of (Marshal's bytes, a
	// frame Parse accepts: frame.Encode), so it needs no parse-back;
	// anything else is Marshal's and is parsed back.
	raw, sure := frame.Encode(f)
	var err error
	if !sure {
		raw, err = frame.Marshal(f)
	}
	if err == nil && len(raw) > frame.SizeClass(f.FrameType()) {
		err = errTooLarge
	}
	if err == nil && !sure {
		// Streaming text is checked on the struct (the generated Validate,
		// no second pass over text that grows with every frame); every other
		// frame is parsed back from its wire form.
		var perr error
		if isStreamingFrame(f) {
			perr = f.(*frame.AppResponse).Validate()
		} else {
			_, perr = frame.Parse(raw)
		}
		if perr != nil {
			err = fmt.Errorf("%w: %v", errInvalid, perr)
		}
	}
	if ev, ok := f.(*frame.HostEvent); ok && err == nil {
		err = checkEvent(ev)
	}
	if err != nil {
		rid := frame.RequestIDOf(f)
		if rid == "" || isStreamingFrame(f) {
			// Nothing to answer, or display-provisional text: not sent.
			s.b.log(slog.LevelWarn, "frame not sent", []any{"app", s.app, "instance", s.instanceID, "frame", f.FrameType(), "err", err.Error()},
				"broker: app %s instance %s: a %s was not sent: %v", s.app, s.instanceID, f.FrameType(), err)
			return false
		}
		f = sizeError(f.FrameType(), rid, err)
		if raw, err = frame.Marshal(f); err != nil {
			return false
		}
	}
	s.port.Send(f, raw)
	if e := frame.ErrorOf(f); e != nil {
		s.m.Error(f.FrameType(), e.Code)
	}
	if reason, refused := frame.RefusalOf(f); refused {
		s.m.Refused(f.FrameType())
		// The app is told (its runtime rejects with the reason); the
		// operator sees it too.
		s.b.log(slog.LevelInfo, "request refused", []any{"app", s.app, "frame", f.FrameType(), "request", frame.RequestIDOf(f), "reason", reason},
			"app %s: %s %s refused: %s", s.app, f.FrameType(), frame.RequestIDOf(f), reason)
	}
	return true
}

// rejectOf is err's *frame.RejectError, if it is or wraps one. errors.As
// is reached only for an error that is not one itself: its target would be
// allocated for every frame, accepted ones included.
func rejectOf(err error) *frame.RejectError {
	if err == nil {
		return nil
	}
	if rej, ok := err.(*frame.RejectError); ok {
		return rej
	}
	return asReject(err)
}

func asReject(err error) *frame.RejectError {
	var rej *frame.RejectError
	if errors.As(err, &rej) {
		return rej
	}
	return nil
}

// Port is the transport's line to this instance, as given to Open.
func (s *Session) Port() Port { return s.port }
