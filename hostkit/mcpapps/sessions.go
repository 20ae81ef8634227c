package mcpapps

import (
	"fmt"
	"net/http"
	"sync"
	"time"
)

// MCP sessions over streamable HTTP. A client of protocol 2025-11-25 or
// older opens a session with initialize and names it (Mcp-Session-Id) in
// every request after; most clients never end one (DELETE): a tab closed,
// a host restarted, a network gone. Each open session holds a go-sdk
// session and its goroutine, so sessions that were never closed, or a
// client opening them in a loop, would grow the host's memory without
// bound. So go-sdk closes a session idle for Options.SessionIdle
// (StreamableHTTPOptions.SessionTimeout), and one user (without an
// authenticator, every caller together) holds at most Options.MaxSessions
// at once.

// Session defaults.
const (
	// DefaultSessionIdle is how long an MCP session over streamable HTTP
	// stays open without a request.
	DefaultSessionIdle = 30 * time.Minute
	// DefaultMaxSessions is how many MCP sessions one user may hold open
	// at once.
	DefaultMaxSessions = 64
)

// sessions keeps, for each MCP session the stateful endpoints opened, the
// user who opened it and when it was last used. A session's id is no
// credential: another user who learns it (a log, a shared proxy) must not
// reach the session's server (the install server is its opener's) or its
// state, so a request in a session known here is served only for its
// owner (go-sdk binds a bearer token's sessions itself; this also covers
// Options.Authenticate). It also counts each user's live sessions for the
// cap.
//
// An entry is forgotten when its client ends the session (DELETE), when
// go-sdk answers a request in it 404 (it has closed the session), or when
// it has been idle, with no request in flight, for the session idle time
// plus a margin: go-sdk's timer, reset when a request ends, has closed the
// session by then, so an id is never forgotten here while go-sdk could
// still serve it. Entries are swept as requests come, at most once a
// sweep interval, so the table holds only sessions used within the idle
// time and the margin. It keeps to the real clock (time.Now), as go-sdk's
// timer does, whatever Options.Now says.
type sessions struct {
	idle time.Duration // go-sdk's SessionTimeout
	max  int           // live sessions per user

	mu      sync.Mutex
	ids     map[string]*sessionUse            // session id -> its use
	byUser  map[string]map[string]*sessionUse // user -> session id -> its use
	opening map[string]int                    // user -> sessions being opened
	swept   time.Time                         // the last sweep
}

// sessionUse is what the table knows of one session.
type sessionUse struct {
	user   string
	last   time.Time // the last request began or ended
	active int       // requests in flight
}

func newSessions(idle time.Duration, max int) *sessions {
	return &sessions{
		idle: idle, max: max,
		ids:     map[string]*sessionUse{},
		byUser:  map[string]map[string]*sessionUse{},
		opening: map[string]int{},
		swept:   time.Now(),
	}
}

// forgetAfter is how long an entry outlives its session's last request:
// the idle time and a margin for go-sdk's timer to fire and close it.
func (t *sessions) forgetAfter() time.Duration {
	return t.idle + min(t.idle/2, 5*time.Minute) + time.Second
}

// sweepEvery is the least time between two sweeps.
func (t *sessions) sweepEvery() time.Duration {
	return min(t.idle/4, time.Minute)
}

// track wraps the stateful endpoint h: a request that opens a session is
// refused (429) when its user holds MaxSessions live ones, and the session
// it opens is noted as the user's; a request in a session of another user
// is refused (403); every request in a known session marks it used.
func (t *sessions) track(user func(*http.Request) string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := user(r)
		if id := r.Header.Get(sessionHeader); id != "" {
			t.serveIn(w, r, id, u, h)
			return
		}
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r) // go-sdk answers it: no session, no new one
			return
		}
		t.serveNew(w, r, u, h)
	})
}

// serveIn serves a request in session id for user.
func (t *sessions) serveIn(w http.ResponseWriter, r *http.Request, id, user string, h http.Handler) {
	if !t.enter(id, user) {
		http.Error(w, "forbidden: this MCP session belongs to another user", http.StatusForbidden)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	defer func() { t.leave(id, r.Method == http.MethodDelete || sw.status == http.StatusNotFound) }()
	h.ServeHTTP(sw, r)
}

// serveNew serves a request that opens a session, if user may open one.
func (t *sessions) serveNew(w http.ResponseWriter, r *http.Request, user string, h http.Handler) {
	if !t.reserve(user) {
		msg := fmt.Sprintf("too many MCP sessions: this user holds %d, the most one may hold at once; end one (DELETE), or wait: a session closes after %s without a request", t.max, t.idle)
		http.Error(w, msg, http.StatusTooManyRequests)
		return
	}
	n := &sessionNoter{ResponseWriter: w, t: t, user: user}
	defer n.done()
	h.ServeHTTP(n, r)
}

// enter begins a request of user in session id: false when the session is
// another user's. A session not known here (ended, expired, or never
// opened) is go-sdk's to answer (404).
func (t *sessions) enter(id, user string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.sweep(now)
	s, ok := t.ids[id]
	if !ok {
		return true
	}
	if s.user != user {
		return false
	}
	s.active++
	s.last = now
	return true
}

// leave ends a request in session id; ended says the session is gone (a
// DELETE ended it, or go-sdk answered 404: on the stateful path, before
// protocol 2026-07-28, it does so only for a session it no longer holds
// or is closing, and it never opens one of that id again).
func (t *sessions) leave(id string, ended bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.ids[id]
	if !ok {
		return
	}
	s.active--
	s.last = time.Now()
	if ended {
		t.forget(id, s)
	}
}

// reserve holds a place for a new session of user: false when the user
// holds the most live sessions one may.
func (t *sessions) reserve(user string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	t.sweep(now)
	if t.live(user, now)+t.opening[user] >= t.max {
		return false
	}
	t.opening[user]++
	return true
}

// live counts user's sessions go-sdk still holds: those with a request in
// flight or used within the idle time.
func (t *sessions) live(user string, now time.Time) int {
	n := 0
	for _, s := range t.byUser[user] {
		if s.active > 0 || now.Sub(s.last) < t.idle {
			n++
		}
	}
	return n
}

// opened ends a reservation of user's: id is the session the response
// opens, "" for none. The request that opens it is in flight. It reports
// whether it noted id.
func (t *sessions) opened(user, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.opening[user]--; t.opening[user] <= 0 {
		delete(t.opening, user)
	}
	if id == "" {
		return false
	}
	if _, taken := t.ids[id]; taken {
		return false
	}
	s := &sessionUse{user: user, last: time.Now(), active: 1}
	t.ids[id] = s
	if t.byUser[user] == nil {
		t.byUser[user] = map[string]*sessionUse{}
	}
	t.byUser[user][id] = s
	return true
}

// sweep forgets, at most once a sweep interval, every session idle for
// longer than forgetAfter with no request in flight. t.mu is held.
func (t *sessions) sweep(now time.Time) {
	if now.Sub(t.swept) < t.sweepEvery() {
		return
	}
	t.swept = now
	for id, s := range t.ids {
		if s.active == 0 && now.Sub(s.last) > t.forgetAfter() {
			t.forget(id, s)
		}
	}
}

// forget drops session id's entry s. t.mu is held.
func (t *sessions) forget(id string, s *sessionUse) {
	delete(t.ids, id)
	if byID := t.byUser[s.user]; byID != nil {
		delete(byID, id)
		if len(byID) == 0 {
			delete(t.byUser, s.user)
		}
	}
}

// holds reports whether the table has a session of user.
func (t *sessions) holds(user string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.byUser[user]) > 0
}

// size is how many sessions the table holds.
func (t *sessions) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ids)
}

// sessionNoter notes the session a response opens as its user's, before
// its header goes out, and ends the reservation.
type sessionNoter struct {
	http.ResponseWriter
	t       *sessions
	user    string
	id      string // the session opened
	started bool   // the header went out, the reservation ended
}

func (n *sessionNoter) WriteHeader(code int) {
	if !n.started {
		n.started = true
		if id := n.Header().Get(sessionHeader); n.t.opened(n.user, id) {
			n.id = id
		}
	}
	n.ResponseWriter.WriteHeader(code)
}

func (n *sessionNoter) Write(b []byte) (int, error) {
	if !n.started {
		n.WriteHeader(http.StatusOK)
	}
	return n.ResponseWriter.Write(b)
}

// done ends the request: the reservation of a response that wrote
// nothing, the request in the session it opened.
func (n *sessionNoter) done() {
	if !n.started {
		n.started = true
		n.t.opened(n.user, "")
	}
	if n.id != "" {
		n.t.leave(n.id, false)
	}
}

// Flush lets a streamed response through the noter.
func (n *sessionNoter) Flush() {
	if f, ok := n.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (n *sessionNoter) Unwrap() http.ResponseWriter { return n.ResponseWriter }

// statusWriter notes the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Flush lets a streamed response through.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the writer beneath.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
