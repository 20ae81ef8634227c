package netgate

import (
	"sync"
	"time"
)

// Entry is the audit record of one net request: who asked for what and how
// it ended. It never holds a secret, a header value or a body; the URL is
// reduced to its origin.
type Entry struct {
	Time time.Time `json:"time"`
	// User is the signed-in user the request was made for; empty for the
	// one local user of a host without an authenticator.
	User   string `json:"user,omitempty"`
	App    string `json:"app"`
	Method string `json:"method"`
	// Origin is the canonical origin asked for; empty when the URL did not
	// parse.
	Origin string `json:"origin,omitempty"`
	// Decision is "allowed" (an answer came back), "refused" (a rule said
	// no) or "failed" (the network or the upstream did).
	Decision string `json:"decision"`
	Code     string `json:"code,omitempty"`
	Status   int    `json:"status,omitempty"`
	// Bytes is the length of the body sent back to the app.
	Bytes      int   `json:"bytes"`
	DurationMs int64 `json:"durationMs"`
	// Connection names the connection whose credential was injected.
	Connection string `json:"connection,omitempty"`
	// Grant is how the origin was approved: "granted" (an existing grant),
	// "once", "session" (until the page closes) or "always" (the user's
	// answer).
	Grant string `json:"grant,omitempty"`
	// Redirects is the number of redirect hops followed.
	Redirects int `json:"redirects,omitempty"`
	// Dev marks a request to a development service on loopback
	// (WithDevLoopback).
	Dev bool `json:"dev,omitempty"`
}

// Audit decisions.
const (
	DecisionAllowed = "allowed"
	DecisionRefused = "refused"
	DecisionFailed  = "failed"
)

// DefaultAuditSize is how many entries Audit keeps.
const DefaultAuditSize = 1000

// auditLog is a bounded ring of entries plus an optional sink.
type auditLog struct {
	mu   sync.Mutex
	ring []Entry
	next int
	full bool
	sink func(Entry)
}

func newAuditLog(size int, sink func(Entry)) *auditLog {
	if size <= 0 {
		size = DefaultAuditSize
	}
	return &auditLog{ring: make([]Entry, size), sink: sink}
}

func (l *auditLog) add(e Entry) {
	l.mu.Lock()
	l.ring[l.next] = e
	l.next = (l.next + 1) % len(l.ring)
	if l.next == 0 {
		l.full = true
	}
	sink := l.sink
	l.mu.Unlock()
	if sink != nil {
		sink(e)
	}
}

func (l *auditLog) entries() []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.full {
		return append([]Entry(nil), l.ring[:l.next]...)
	}
	out := make([]Entry, 0, len(l.ring))
	out = append(out, l.ring[l.next:]...)
	return append(out, l.ring[:l.next]...)
}
