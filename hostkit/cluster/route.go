package cluster

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/store"
)

// errClosing is the failure of a request that arrives while Close runs.
var errClosing = errors.New("the replica is shutting down")

// errElsewhere is an opening given up because another replica holds the
// lease: the request routes again (and is forwarded).
var errElsewhere = errors.New("another replica holds the lease")

// DBRequest answers a db-request for (call.User, call.App) wherever its
// database is: here when this replica owns it (taking the lease when it is
// free or expired), forwarded to the owner otherwise. While an owner is
// unreachable and its lease not yet expired the request waits (up to its
// context), then this or another replica takes the database over.
//
// A write that was forwarded once carries an identity from then on, the
// same in every resend (to the next owner, or served here after a
// takeover), and the owner applies a write with an identity at most once
// (store.ExecOnce): a resend that reaches a copy already holding it
// answers the first run's result.
func (c *Cluster) DBRequest(ctx context.Context, call broker.Call, r *frame.DBRequest) *frame.DBResponse {
	k := dbKey{user: call.User, app: call.App}
	wait := 10 * time.Millisecond
	// ended is the answer once ctx ends: CANCELLED, unless the write went
	// to an owner (forwarded), which may have kept it.
	ended := func() *frame.DBResponse {
		if call.WriteID != "" && broker.IsDBWrite(r) {
			return hostError(r, "the request ended after the write was sent to its database's owner; it may or may not have been kept")
		}
		return cancelled(r)
	}
	l := c.joinChain(k)
	defer c.leaveChain(k, l)
	write := broker.IsDBWrite(r)
	for {
		if ctx.Err() != nil {
			return ended()
		}
		o, lease, err := c.route(ctx, k)
		if err != nil {
			if ctx.Err() != nil {
				return ended()
			}
			c.logf("%s's %q: %v", k.user, k.app, err)
			return hostError(r, "the host could not reach this app's database")
		}
		if o != nil {
			at := place{c.id, o.epochNow()}
			if l.waitAhead(ctx, at) != nil {
				return ended()
			}
			// Served here, a read hands the lane on too: it is never
			// run again once it ran.
			resp, retry := o.serve(ctx, call, r, func() {
				l.ran(at)
				broker.PassLane(ctx)
			})
			if !retry {
				return resp
			}
			l.failed()
			continue
		}
		if call.WriteID == "" && (r.Op == frame.OpExec || r.Op == frame.OpKvSet) {
			call.WriteID = newWriteID()
		}
		at := place{lease.owner, lease.epoch}
		if l.waitAhead(ctx, at) != nil {
			return ended()
		}
		var ran func() // a forwarded read holds its lane until answered
		if write {
			ran = func() {
				l.ran(at)
				broker.PassLane(ctx)
			}
		}
		resp, err := c.forward(ctx, lease, k, call.WriteID, r, ran)
		c.cfg.Metrics.Forwarded(err)
		if err == nil {
			return resp
		}
		l.failed()
		c.forgetRoute(k)
		// The owner is unreachable, paused or no longer the owner: look
		// again soon; its lease expires within the TTL.
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ended()
		case <-t.C:
		}
		wait = min(2*wait, c.ttl/8)
	}
}

// route finds where k's database is served: a ready owned database of this
// replica (taking the lease first when nobody holds it), or the lease of
// the replica that holds it.
func (c *Cluster) route(ctx context.Context, k dbKey) (*owned, leaseRow, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return nil, leaseRow{}, errClosing
		}
		o := c.owned[k]
		if o != nil {
			c.mu.Unlock()
			select {
			case <-o.ready:
			case <-ctx.Done():
				return nil, leaseRow{}, ctx.Err()
			}
			if o.err == nil && !o.lost.Load() {
				return o, leaseRow{}, nil
			}
			select { // a lost one is being torn down; then route anew
			case <-o.gone:
			case <-ctx.Done():
				return nil, leaseRow{}, ctx.Err()
			}
			continue
		}
		if r, ok := c.routes[k]; ok && mono(time.Now()) < r.until {
			c.mu.Unlock()
			return nil, r.lease, nil // another replica's, live when read
		}
		// This goroutine opens k; others of this replica wait for it.
		o = &owned{c: c, key: k, ready: make(chan struct{}), gone: make(chan struct{})}
		c.owned[k] = o
		c.mu.Unlock()
		read := time.Now()
		lease, err := c.take(ctx, o)
		if err == nil {
			return o, leaseRow{}, nil
		}
		if errors.Is(err, errElsewhere) {
			if lease.live {
				c.cacheRoute(k, lease, read)
				return nil, lease, nil
			}
			continue // it changed hands while we looked: look again
		}
		return nil, leaseRow{}, err
	}
}

// cachedRoute is another replica's lease as this one read it: forwards go
// there without reading it again until the lease would have expired
// unrenewed (until, on the monotonic clock), or a forward there fails.
type cachedRoute struct {
	lease leaseRow
	until int64
}

// cacheRoute keeps lease, read at read, for k's next forwards.
func (c *Cluster) cacheRoute(k dbKey, lease leaseRow, read time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.routes) >= maxRoutes {
		clear(c.routes) // a bound, not an eviction policy: each is one read away
	}
	c.routes[k] = cachedRoute{lease: lease, until: mono(read.Add(min(lease.left, c.ttl)))}
}

// forgetRoute drops k's cached lease (a forward to it failed).
func (c *Cluster) forgetRoute(k dbKey) {
	c.mu.Lock()
	delete(c.routes, k)
	c.mu.Unlock()
}

// maxRoutes bounds the cached leases of other replicas' databases.
const maxRoutes = 100000

// take opens o: reads the lease, takes it when it is free, expired or
// this replica's, restores and starts replicating. Whatever happens, o's
// ready is closed; on failure o is forgotten and its lease let go.
func (c *Cluster) take(ctx context.Context, o *owned) (leaseRow, error) {
	k := o.key
	failed := func(err error) error {
		o.err = err
		c.mu.Lock()
		if c.owned[k] == o {
			delete(c.owned, k)
		}
		c.mu.Unlock()
		close(o.ready)
		close(o.gone)
		return err
	}
	lease, found, err := c.readLease(ctx, k)
	if err != nil {
		return leaseRow{}, failed(err)
	}
	if found && lease.live && lease.owner != "" && lease.session != c.sessionID() {
		return lease, failed(errElsewhere)
	}
	epoch, published, ok, err := c.acquire(ctx, k)
	if err != nil {
		return leaseRow{}, failed(err)
	}
	if !ok {
		return leaseRow{}, failed(errElsewhere)
	}
	// Taken: over from another replica whose lease expired, or free.
	c.cfg.Metrics.LeaseTaken(found && lease.owner != "" && lease.owner != c.id)
	if o.path, err = c.local.Path(k.storeKey()); err != nil {
		_ = c.free(context.Background(), k, epoch)
		return leaseRow{}, failed(err)
	}
	// The takeover is not the request's: a request that ends while the
	// database is restored leaves it for the next one.
	octx, cancel := context.WithTimeout(c.ctx, 2*time.Minute)
	defer cancel()
	if err := o.open(octx, epoch, published); err != nil {
		_ = o.stopReplica(context.Background())
		_ = c.local.Release(context.Background(), k.storeKey())
		_ = c.removeLocal(o.path)
		if !errors.Is(err, errLost) {
			_ = c.free(context.Background(), k, epoch)
		}
		return leaseRow{}, failed(fmt.Errorf("take over %s: %w", filepath.Base(o.path), err))
	}
	o.startSyncer()
	close(o.ready)
	return leaseRow{}, nil
}

// tryTake takes k's lease over when it is still expired, as route would;
// it reports whether this replica now owns k (or is opening it).
func (c *Cluster) tryTake(ctx context.Context, k dbKey) bool {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return false
	}
	if o := c.owned[k]; o != nil {
		c.mu.Unlock()
		select {
		case <-o.ready:
		case <-ctx.Done():
			return false
		}
		return o.err == nil && !o.lost.Load()
	}
	o := &owned{c: c, key: k, ready: make(chan struct{}), gone: make(chan struct{})}
	c.owned[k] = o
	c.mu.Unlock()
	_, err := c.take(ctx, o)
	return err == nil
}

// forwardPath is the internal listener's one route.
const forwardPath = "/snug/db"

// forwarded is the body of a forwarded request.
type forwarded struct {
	User    string          `json:"user"`
	App     string          `json:"app"`
	Epoch   int64           `json:"epoch"`             // the lease's epoch the forwarder read: the owner answers only at it
	WriteID string          `json:"writeId,omitempty"` // a write's identity, kept across resends
	Notice  bool            `json:"notice,omitempty"`  // say when it ran, ahead of the answer (a write)
	Frame   json.RawMessage `json:"frame"`
}

// newWriteID is a forwarded write's identity: the time in milliseconds
// (48 bits) and then 80 random bits, in hex. Identities that sort by time
// land on the last pages of the owner's record (_snug_once), where random
// ones would each dirty a page anywhere in it (BenchmarkExecOnce: 71–72
// against 90–100 µs a write).
func newWriteID() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	_, _ = rand.Read(b[6:]) // crypto/rand does not fail (Go 1.24)
	return hex.EncodeToString(b[:])
}

// errMoved is a forward given up because the lease changed hands while it
// waited: the old owner can no longer acknowledge it (its fence fails), so
// the request may go to the new one.
var errMoved = errors.New("the lease moved while the owner was asked")

// forward sends r to the owner named by lease and returns its answer; ran,
// when not nil, is called once the owner says r ran, ahead of its answer
// (order.go). It
// gives up, to route again, when the owner cannot be reached, answers that
// it is not the owner, or the lease changes hands while the answer is
// awaited (a paused owner: once its lease expired this replica takes it
// over); never while the owner may still acknowledge.
func (c *Cluster) forward(ctx context.Context, lease leaseRow, k dbKey, writeID string, r *frame.DBRequest, ran func()) (*frame.DBResponse, error) {
	raw, err := frame.Marshal(r)
	if err != nil {
		return nil, err
	}
	body, err := json.Marshal(forwarded{User: k.user, App: k.app, Epoch: lease.epoch, WriteID: writeID, Notice: ran != nil, Frame: raw})
	if err != nil {
		return nil, err
	}
	type result struct {
		resp *frame.DBResponse
		err  error
	}
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		resp, err := c.post(fctx, lease, body, ran)
		done <- result{resp, err}
	}()
	check := time.NewTimer(c.recheckAfter(lease))
	defer check.Stop()
	for {
		select {
		case res := <-done:
			return res.resp, res.err
		case <-check.C:
			now, found, err := c.readLease(ctx, k)
			if err != nil {
				check.Reset(c.ttl / 8)
			} else {
				check.Reset(c.recheckAfter(now))
			}
			moved := err == nil && (!found || now.owner != lease.owner || now.epoch != lease.epoch)
			// An owner silent past its lease (paused, partitioned) is
			// fenced by taking the lease over: once this replica holds it
			// at a new epoch the old owner cannot acknowledge.
			if !moved && err == nil && !now.live {
				moved = c.tryTake(ctx, k)
			}
			if moved {
				cancel()
				<-done
				return nil, errMoved
			}
		}
	}
}

// recheckAfter is when a forward waiting for an answer looks at the lease
// again: just after it would expire unrenewed (a stalled owner is taken
// over at once then, so a failover costs the TTL and the restore), and at
// least every half TTL (a lease that changed hands sooner).
func (c *Cluster) recheckAfter(l leaseRow) time.Duration {
	const past = 10 * time.Millisecond // after the expiry, on PostgreSQL's clock
	return min(max(l.left+past, past), c.ttl/2)
}

// post sends a forward's body to the owner lease names, signed for it, and
// returns its answer once its signature holds. The owner may first say
// the request ran (a signed line; then ran is called) and answer once it
// is durable, its signature then in a trailer.
func (c *Cluster) post(ctx context.Context, lease leaseRow, body []byte, ran func()) (*frame.DBResponse, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(lease.ownerURL, "/")+forwardPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	nonce, err := c.signer.sign(req, lease.owner, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	br := bufio.NewReader(io.LimitReader(res.Body, maxForwardBytes))
	if res.StatusCode == http.StatusOK {
		if b, err := br.Peek(len(ranPrefix)); err == nil && string(b) == ranPrefix {
			line, err := br.ReadString('\n')
			if err != nil {
				return nil, err
			}
			if err := c.signer.checkRan(nonce, line); err != nil {
				return nil, fmt.Errorf("the owner's notice that the request ran: %w", err)
			}
			if ran != nil {
				ran()
			}
		}
	}
	data, err := io.ReadAll(br)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the owner answered HTTP %d: %s", res.StatusCode, bytes.TrimSpace(data))
	}
	signed := res.Header
	if res.Trailer.Get(hdrSignature) != "" {
		signed = res.Trailer
	}
	if err := c.signer.checkAnswer(signed, nonce, data); err != nil {
		return nil, fmt.Errorf("the owner's answer: %w", err)
	}
	f, err := frame.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("the owner's answer: %w", err)
	}
	resp, ok := f.(*frame.DBResponse)
	if !ok {
		return nil, fmt.Errorf("the owner's answer is %T", f)
	}
	return resp, nil
}

// maxForwardBytes bounds a forwarded request or answer: one db frame and
// the envelope.
const maxForwardBytes = 2*frame.MaxDBFrameBytes + 64<<10

// serveInternal is the internal listener: forwarded db-requests from other
// replicas, each answered only if this replica owns the database.
func (c *Cluster) serveInternal(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != forwardPath {
		http.NotFound(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxForwardBytes))
	if err != nil {
		http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
		return
	}
	nonce, err := c.signer.verify(r, body)
	if err != nil {
		c.logf("forwarded request from %s refused: %v", r.RemoteAddr, err)
		http.Error(w, "not a replica of this cluster", http.StatusUnauthorized)
		return
	}
	var fw forwarded
	if err := json.Unmarshal(body, &fw); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f, err := frame.Parse(fw.Frame)
	req, ok := f.(*frame.DBRequest)
	if err != nil || !ok {
		http.Error(w, "not a db-request", http.StatusBadRequest)
		return
	}
	if !c.isInstalled(fw.App) {
		http.Error(w, "no such app here", http.StatusNotFound)
		return
	}
	k := dbKey{user: fw.User, app: fw.App}
	c.mu.Lock()
	o := c.owned[k]
	c.mu.Unlock()
	if o == nil {
		http.Error(w, "not the owner", http.StatusConflict)
		return
	}
	select {
	case <-o.ready:
	case <-r.Context().Done():
		return
	}
	if o.err != nil || o.epochNow() != fw.Epoch {
		// Not the owner, or not at the epoch the forwarder read (its
		// cached lease is old): it reads the lease again.
		http.Error(w, "not the owner", http.StatusConflict)
		return
	}
	if len(fw.WriteID) > store.MaxOnceIDBytes {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	// Once the request ran, the forwarder hears it at once (it hands its
	// lane on), and the answer follows once it is durable, signed in a
	// trailer.
	noticed := false
	ran := func() {
		if !fw.Notice {
			return
		}
		noticed = true
		w.Header().Set("Trailer", hdrSignature)
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, c.signer.ranLine(nonce))
		http.NewResponseController(w).Flush()
	}
	resp, retry := o.serve(r.Context(), broker.Call{User: fw.User, App: fw.App, RequestID: req.RequestID, WriteID: fw.WriteID}, req, ran)
	if retry && !noticed { // nothing ran: retry never follows ran
		http.Error(w, "not the owner", http.StatusConflict)
		return
	}
	out, err := frame.Marshal(resp)
	if err != nil || retry {
		if !noticed {
			http.Error(w, "answer", http.StatusInternalServerError)
		}
		return // noticed: the answer is cut short, and the forwarder sends again
	}
	if noticed {
		w.Write(out)
		c.signer.signAnswer(w.Header(), nonce, out) // sent as the trailer
		return
	}
	c.signer.signAnswer(w.Header(), nonce, out)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}
