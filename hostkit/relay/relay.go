// Package relay is the runner page's WebSocket endpoint (GET /ws): it speaks
// the relay protocol of docs/architecture.md ("The relay") between the page
// that owns the app iframes and the broker that owns every decision. It opens
// one broker session per (connection, slot) — the host's own iframe identity
// (R4) — relays frames both ways, feeds the page's inspector with every frame
// and its verdict, forwards net audit entries, and carries the host's confirm
// dialogs (net and open-url) to the page and the user's answers back.
//
// Its limit: it trusts only the page it was built for. An upgrade whose
// Origin is not the runner's own origin, or whose Host is not the address the
// server is bound to (DNS rebinding), is refused before the handshake; the
// frames it relays are judged again by the broker, never here.
//
// The WebSocket library is github.com/coder/websocket: maintained, small,
// context-aware on every read and write, and it does the handshake checks we
// need without a dependency tree.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// Defaults.
const (
	// DefaultMaxQueueBytes bounds the messages waiting to be written to one
	// connection. Past it the slot with the most waiting is ended; the page
	// is disconnected only when its own messages alone are past it.
	DefaultMaxQueueBytes = 64 << 20
	// DefaultMaxSlotQueueBytes bounds the messages waiting for one slot
	// (an app instance); a slot past it is ended alone. Streaming frames of
	// a request are coalesced while they wait, so a fast stream takes about
	// one frame of it.
	DefaultMaxSlotQueueBytes = 16 << 20
	// writeTimeout bounds one WebSocket write.
	writeTimeout = 10 * time.Second
	// maxSlotLen bounds a slot id (the page's own short names).
	maxSlotLen = 64
)

// Options configure a Relay.
type Options struct {
	// Origin is the runner page's own origin, scheme://host[:port], exactly as
	// a browser sends it in the Origin header. Required.
	Origin string
	// Host is the address the server is bound to, as the Host header carries
	// it (host:port). Required.
	Host string
	// Installed reports whether app is an installed app's key; a mount of any
	// other key is refused. Nil accepts every key.
	Installed func(app string) bool
	// NoInspect turns off the inspect entries (each frame costs one more
	// message per direction).
	NoInspect bool
	// MaxQueueBytes bounds one connection's outbound queue
	// (DefaultMaxQueueBytes when zero).
	MaxQueueBytes int64
	// MaxSlotQueueBytes bounds one slot's share of it
	// (DefaultMaxSlotQueueBytes when zero, at most MaxQueueBytes).
	MaxSlotQueueBytes int64
	// Now is the clock for inspect entries (time.Now when nil).
	Now func() time.Time
	// Authenticate, when set, names the signed-in user of an upgrade
	// request (from the embedding product's session cookie or header): every
	// session of the connection is opened for that user (broker.OpenUser),
	// and the connection gets only that user's audit entries. An error, an
	// empty user or one longer than MaxUserBytes refuses the upgrade (401),
	// after the Origin and Host checks. Nil: one local user, "".
	Authenticate func(r *http.Request) (user string, err error)
	// Maker, when set, runs the page's make messages (the runner's "New
	// app" and "Change this app" boxes); nil answers that this host makes
	// no apps.
	Maker Maker
}

// MaxUserBytes bounds the user Options.Authenticate may name.
const MaxUserBytes = 256

// Relay is the /ws handler. It is safe for concurrent use.
type Relay struct {
	b          *broker.Broker
	opts       Options
	originHost string

	ctx    context.Context // ends on Close: every connection's reads stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // connections

	confirmSeq atomic.Uint64

	sw sweeper

	// writerOnly turns off flush's fast route (TestFlushRoutesWriteTheSameBytes).
	writerOnly bool

	mu     sync.Mutex
	conns  map[*conn]struct{}
	closed bool
}

// New returns the relay for b.
func New(b *broker.Broker, opts Options) (*Relay, error) {
	u, err := url.Parse(opts.Origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return nil, fmt.Errorf("relay: Origin %q is not an origin like http://127.0.0.1:8080", opts.Origin)
	}
	if opts.Host == "" {
		return nil, errors.New("relay: Host (the bound address, host:port) is required")
	}
	if opts.MaxQueueBytes <= 0 {
		opts.MaxQueueBytes = DefaultMaxQueueBytes
	}
	if opts.MaxSlotQueueBytes <= 0 {
		opts.MaxSlotQueueBytes = DefaultMaxSlotQueueBytes
	}
	opts.MaxSlotQueueBytes = min(opts.MaxSlotQueueBytes, opts.MaxQueueBytes)
	if opts.Now == nil {
		opts.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Relay{b: b, opts: opts, originHost: u.Host, ctx: ctx, cancel: cancel, conns: make(map[*conn]struct{})}, nil
}

// ServeHTTP upgrades a request from the runner page to the relay WebSocket
// and serves it until either side closes.
func (rl *Relay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "relay: GET only", http.StatusMethodNotAllowed)
		return
	}
	if r.Host != rl.opts.Host {
		http.Error(w, "relay: Host "+strconv.Quote(r.Host)+" is not this server's address", http.StatusForbidden)
		return
	}
	if origin := r.Header.Get("Origin"); origin != rl.opts.Origin {
		http.Error(w, "relay: Origin "+strconv.Quote(origin)+" is not the runner's own origin", http.StatusForbidden)
		return
	}
	user := ""
	if rl.opts.Authenticate != nil {
		u, err := rl.opts.Authenticate(r)
		if err != nil || u == "" || len(u) > MaxUserBytes {
			// The product's own reason stays on the host: it may say
			// more about its sessions than a stranger should learn.
			http.Error(w, "relay: not signed in", http.StatusUnauthorized)
			return
		}
		user = u
	}
	rl.mu.Lock()
	if rl.closed {
		rl.mu.Unlock()
		http.Error(w, "relay: shutting down", http.StatusServiceUnavailable)
		return
	}
	rl.wg.Add(1)
	rl.mu.Unlock()

	cw := &corkWriter{ResponseWriter: w}
	ws, err := websocket.Accept(cw, r, &websocket.AcceptOptions{
		// The Origin was checked above, exactly; this keeps the library's own
		// check consistent with it when the origin's host differs from Host.
		OriginPatterns: []string{rl.originHost},
	})
	if err != nil {
		rl.wg.Done()
		return // Accept wrote the HTTP error
	}
	// Twice the largest frame class: a frame somewhat over its class reaches
	// frame.Parse and is answered (R6) instead of cutting off the page and
	// every other app on it. The page should not relay more than that.
	ws.SetReadLimit(2 * int64(frame.MaxDBFrameBytes))
	if cw.cc == nil {
		ws.CloseNow()
		rl.wg.Done()
		return
	}
	c := newConn(rl, user, ws, cw.cc, cw.pr)
	rl.mu.Lock()
	rl.conns[c] = struct{}{}
	closing := rl.closed
	rl.mu.Unlock()
	if closing {
		c.q.close() // Close has listed the connections already
	}
	// The connection is served on a goroutine of its own and this handler
	// returns: net/http then lets go of everything it kept for the request
	// (its response buffers, the request, a stack grown by the handshake),
	// which a connection would otherwise hold for its whole life.
	go func() {
		defer rl.wg.Done()
		c.serve()
		rl.mu.Lock()
		delete(rl.conns, c)
		rl.mu.Unlock()
	}()
}

// Broadcast sends one relay message (an object with a "t" member, such as
// {"t":"apps",...} or {"t":"reload",...}) to every connected page.
func (rl *Relay) Broadcast(msg any) error {
	raw, err := json.Marshal(msg)
	if err != nil {
		return fmt.Errorf("relay: broadcast: %w", err)
	}
	for _, c := range rl.connList() {
		c.q.push(raw)
	}
	return nil
}

// Audit sends a net audit entry to every connected page's inspector (the
// one local user's pages; see AuditUser).
func (rl *Relay) Audit(entry any) { rl.AuditUser("", entry) }

// AuditUser sends a net audit entry to the inspector of every page user is
// connected with, and to no other user's.
func (rl *Relay) AuditUser(user string, entry any) {
	raw, err := json.Marshal(struct {
		T     string `json:"t"`
		Entry any    `json:"entry"`
	}{"audit", entry})
	if err != nil {
		return
	}
	for _, c := range rl.connList() {
		if c.user == user {
			c.q.push(raw)
		}
	}
}

func (rl *Relay) isClosed() bool {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	return rl.closed
}

func (rl *Relay) connList() []*conn {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	out := make([]*conn, 0, len(rl.conns))
	for c := range rl.conns {
		out = append(out, c)
	}
	return out
}

// Close stops accepting connections and closes every one after its queued
// messages are written (call broker.Shutdown first, so the terminals of the
// requests in flight are among them), then waits for the connections to end
// or ctx to expire.
func (rl *Relay) Close(ctx context.Context) error {
	rl.mu.Lock()
	rl.closed = true
	rl.mu.Unlock()
	for _, c := range rl.connList() {
		c.q.close() // the writer drains, then closes the socket
	}
	done := make(chan struct{})
	go func() { rl.wg.Wait(); close(done) }()
	select {
	case <-done:
		rl.cancel()
		return nil
	case <-ctx.Done():
		rl.cancel()
		for _, c := range rl.connList() {
			c.ws.CloseNow() // stops its read loop and its writer: it ends now
		}
		<-done
		return fmt.Errorf("relay: close: %w", ctx.Err())
	}
}

// sweepPeriod is how long an accepted request's inspector row waits for the
// request's answer to ride with before it is written alone: between one and
// two periods (conn.handle, Relay.sweep).
const sweepPeriod = 2 * time.Millisecond

// sweeper is the relay's list of connections with an inspector row waiting
// for an answer to ride with, and the goroutine that writes those rows once
// they have waited a sweep period. It runs only while the list is not empty.
type sweeper struct {
	// gen counts the sweep's ticks. A row left waiting while it is g has
	// queue.late = g+1 (never 0), and is due at the tick that makes gen
	// g+2: the second tick after, a whole period later at least.
	gen     atomic.Uint64
	mu      sync.Mutex
	list    []*conn
	running bool
}

// later puts c on the sweep's list (c's queue said it was not on it), and
// starts the sweep when it is not running. The sweep is one of the relay's
// goroutines (rl.wg): Close waits for it, and it ends when the list is
// empty, at most two periods after the last connection's rows went out.
func (rl *Relay) later(c *conn) {
	sw := &rl.sw
	sw.mu.Lock()
	sw.list = append(sw.list, c)
	start := !sw.running
	sw.running = true
	if start {
		rl.wg.Add(1) // c's read loop holds a count: Close's Wait has not returned
	}
	sw.mu.Unlock()
	if start {
		go rl.sweep()
	}
}

// sweep writes, every sweepPeriod, the rows that have waited a whole period
// for their answer (on this goroutine when no writer runs, as flush does),
// and keeps the connections whose rows are younger on its list.
func (rl *Relay) sweep() {
	defer rl.wg.Done()
	sw := &rl.sw
	t := time.NewTimer(sweepPeriod)
	defer t.Stop()
	var list []*conn
	for {
		<-t.C
		gen := sw.gen.Add(1)
		sw.mu.Lock()
		list, sw.list = sw.list, list[:0]
		sw.mu.Unlock()
		keep := list[:0]
		for _, c := range list {
			due, k := c.q.due(gen)
			if due {
				c.flush()
			}
			if k {
				keep = append(keep, c)
			}
		}
		clear(list[len(keep):])
		sw.mu.Lock()
		sw.list = append(sw.list, keep...)
		if len(sw.list) == 0 {
			sw.running = false
			sw.mu.Unlock()
			return
		}
		sw.mu.Unlock()
		clear(keep)
		list = keep[:0]
		t.Reset(sweepPeriod)
	}
}
