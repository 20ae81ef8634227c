package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benbjohnson/litestream"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit/broker"
)

// owned is one database this replica holds the lease of: its local copy
// (the store's file), the Litestream replica of the current epoch, and the
// group commit that makes each acknowledgement wait for one upload and one
// lease check shared by every write that committed before it started.
type owned struct {
	c    *Cluster
	key  dbKey
	path string // the store's file

	ready chan struct{} // closed when opening ended (err says how)
	err   error         // why opening failed; set before ready closes

	// op is held shared by every call on the database and exclusively by
	// an import (which swaps the file and the epoch) and by the teardown.
	op    sync.RWMutex
	epoch int64          // under op (written with op held exclusively)
	ldb   *litestream.DB // under op
	lost  atomic.Bool    // the lease is gone: nothing more is served
	used  atomic.Int64   // monotonic time of the last request (ns since monoStart)
	keep  bool           // an idle release: the teardown keeps the local copy (under op)
	gone  chan struct{}  // closed when the teardown is done

	// The group commit.
	gmu      sync.Mutex
	pending  *round // writes waiting for the next sync; nil when none
	inflight *round // the round being synced; nil when none
	dirty    bool   // the last round failed: what it held is not known to be uploaded
	kick     chan struct{}
	stop     chan struct{} // ends the syncer
	synced   chan struct{} // closed when the syncer ended
}

// round is one sync every write that joined it waits for. A write joins
// before its statement runs, and the syncer syncs a round only once every
// statement of it ended, so a read that saw a write's commit finds the
// write's round pending or syncing (settled).
type round struct {
	done    chan struct{}
	err     error
	n       int           // writes that joined it (under gmu)
	running int           // of them, still running their statement (under gmu)
	taken   bool          // the syncer took it (under gmu)
	ran     chan struct{} // closed once it is taken and no statement of it runs
}

func newRound() *round { return &round{done: make(chan struct{}), ran: make(chan struct{})} }

// gatherWindow bounds how long the syncer lets a round gather writes
// before it uploads, when more than one writer is about: writers answered
// together send their next writes a moment apart, and one upload then
// serves them all instead of the first alone. It waits no longer than the
// last round took, and stops waiting once as many writes joined as were
// about when the last round ended (see writersAbout).
const gatherWindow = time.Millisecond

// mono is the monotonic clock the lease views are kept on.
var monoStart = time.Now()

func mono(t time.Time) int64 { return int64(t.Sub(monoStart)) }

// extend moves this replica's view of its session (which every lease it
// holds lives by) to until.
func (o *owned) extend(until time.Time) { o.c.extendSession(until) }

func (o *owned) valid() bool { return !o.lost.Load() && o.c.sessionValid() }

func (o *owned) isReady() bool {
	select {
	case <-o.ready:
		return o.err == nil
	default:
		return false
	}
}

// open brings the database up after this replica took the lease at epoch:
// the local copy restored from the prefix the last owner published, a new
// replica under this epoch's prefix with its first snapshot uploaded, and
// that prefix published in the lease row.
func (o *owned) open(ctx context.Context, epoch int64, published string) error {
	c := o.c
	o.epoch = epoch
	o.used.Store(mono(time.Now()))
	sk := o.key.storeKey()
	if err := c.local.Release(ctx, sk); err != nil {
		return err
	}
	c.mu.Lock()
	kept, had := c.idle[o.key]
	delete(c.idle, o.key)
	c.mu.Unlock()
	// The copy this replica kept when it gave the database up idle is
	// current when nobody took the lease since (the epoch is the next one)
	// and the prefix published is still the one it uploaded to last.
	reuse := had && kept.epoch == epoch-1 && kept.prefix == published
	if !reuse {
		if err := o.c.removeLocal(o.path); err != nil {
			return fmt.Errorf("clear the local copy: %w", err)
		}
	}
	if published != "" && !reuse {
		client, err := c.obj.client(published)
		if err != nil {
			return err
		}
		r := litestream.NewReplicaWithClient(nil, client)
		opt := litestream.NewRestoreOptions()
		opt.OutputPath = o.path
		opt.IntegrityCheck = litestream.IntegrityCheckQuick
		if err := os.MkdirAll(filepath.Dir(o.path), 0o700); err != nil {
			return err
		}
		// A published prefix always holds a snapshot: any failure here
		// (none found included) stops the takeover rather than starting
		// the user's database empty.
		start := time.Now()
		err = r.Restore(ctx, opt)
		c.cfg.Metrics.Restored(time.Since(start), err)
		if err != nil {
			return fmt.Errorf("restore from %s: %w", published, err)
		}
	}
	if err := c.local.Ensure(ctx, sk); err != nil {
		return err
	}
	prefix := c.obj.dbPrefix(o.key, epoch)
	if err := o.startReplica(ctx, prefix); err != nil {
		return err
	}
	held, err := c.publish(ctx, o.key, epoch, prefix)
	if err != nil {
		return err
	}
	if !held {
		return errLost
	}
	if published != "" && published != prefix {
		c.dropPrefix(published)
	}
	return nil
}

// startReplica starts Litestream on the local copy under prefix (an empty
// prefix of this epoch) and waits until its first snapshot is uploaded.
func (o *owned) startReplica(ctx context.Context, prefix string) error {
	c := o.c
	client, err := c.obj.client(prefix)
	if err != nil {
		return err
	}
	if err := client.Init(ctx); err != nil {
		return fmt.Errorf("object store: %w", err)
	}
	// What an earlier epoch left beside the file is for another prefix.
	ldb := litestream.NewDB(o.path)
	ldb.SetMetaPath(c.metaPath(o.path))
	if err := os.RemoveAll(ldb.MetaPath()); err != nil {
		return err
	}
	ldb.Replica = litestream.NewReplicaWithClient(ldb, client)
	if err := c.ls.RegisterDB(ldb); err != nil {
		return fmt.Errorf("litestream: %w", err)
	}
	o.ldb = ldb
	if err := ldb.SyncAndWait(ctx); err != nil {
		return fmt.Errorf("first upload to %s: %w", prefix, err)
	}
	return nil
}

// stopReplica closes the current Litestream replica (its last sync goes to
// the current prefix).
func (o *owned) stopReplica(ctx context.Context) error {
	if o.ldb == nil {
		return nil
	}
	err := o.c.ls.UnregisterDB(ctx, o.path)
	o.ldb = nil
	return err
}

var errLost = errors.New("the lease moved to another replica")

// startSyncer starts the group commit's goroutine (ended by stopSyncer).
func (o *owned) startSyncer() {
	o.kick = make(chan struct{}, 1)
	o.stop = make(chan struct{})
	o.synced = make(chan struct{})
	go func() {
		defer close(o.synced)
		last, took := 0, time.Duration(0) // the last round's writes and time
		for {
			select {
			case <-o.stop:
				o.failPending(errLost)
				return
			case <-o.kick:
			}
			if last > 1 && !o.gather(last, min(o.c.cfg.gatherWindow, took)) {
				o.failPending(errLost)
				return
			}
			o.gmu.Lock()
			r := o.pending
			o.pending, o.inflight = nil, r
			if r != nil {
				r.taken = true
				if r.running == 0 {
					close(r.ran)
				}
			}
			o.gmu.Unlock()
			if r == nil {
				continue
			}
			select {
			case <-r.ran: // every statement of the round ended
			case <-o.stop:
				o.answer(r, errLost)
				o.failPending(errLost)
				return
			}
			began := time.Now()
			err := o.syncRound()
			took = time.Since(began)
			last = o.writersAbout(r)
			o.answer(r, err)
		}
	}()
}

// writersAbout is how many writes the next round can expect as round r
// ends: r's own, whose writers it is about to answer, and those that
// joined the pending round while r synced. Counting only r's, writers
// whose answers take longer to come back (forwarded from other replicas)
// fell into a round of their own, and rounds alternated between the two
// groups, each write waiting for the other group's round and then its own.
func (o *owned) writersAbout(r *round) int {
	o.gmu.Lock()
	defer o.gmu.Unlock()
	n := r.n
	if o.pending != nil {
		n += o.pending.n
	}
	return n
}

// gather waits until want writes joined the pending round or window
// passed; false when the syncer is stopped meanwhile.
func (o *owned) gather(want int, window time.Duration) bool {
	t := time.NewTimer(window)
	defer t.Stop()
	for {
		o.gmu.Lock()
		n := 0
		if o.pending != nil {
			n = o.pending.n
		}
		o.gmu.Unlock()
		if n >= want {
			return true
		}
		select {
		case <-o.stop:
			return false
		case <-t.C:
			return true
		case <-o.kick:
		}
	}
}

func (o *owned) stopSyncer() {
	if o.stop == nil {
		return
	}
	close(o.stop)
	<-o.synced
	o.stop = nil
}

// answer ends round r with err, and remembers whether what it held may not
// be uploaded (settled then asks for a round of its own).
func (o *owned) answer(r *round, err error) {
	o.gmu.Lock()
	if o.inflight == r {
		o.inflight = nil
	}
	o.dirty = err != nil
	o.gmu.Unlock()
	r.err = err
	close(r.done)
}

// failPending ends the pending round, if any, with err.
func (o *owned) failPending(err error) {
	o.gmu.Lock()
	r := o.pending
	o.pending = nil
	o.gmu.Unlock()
	if r != nil {
		o.answer(r, err)
	}
}

// syncRound uploads everything committed so far and checks that the lease
// is still this replica's at the epoch that uploads it. The caller of
// durable holds op shared, so the epoch and replica do not change under
// it.
//
// The check (the fence) runs beside the upload rather than after it: it
// reads how long this replica's session has left, so no other replica can
// take the lease until that long after the fence was sent, and an upload
// that ended before then (this replica's view of the session, valid) is in
// the object store before any successor restores from the published
// prefix. An upload that ended
// later is checked again after it, as a fence after the upload would be.
func (o *owned) syncRound() error {
	ctx, cancel := context.WithTimeout(o.c.ctx, 4*o.c.ttl)
	defer cancel()
	if o.ldb == nil {
		return errLost // never while the syncer runs; a guard, not a path
	}
	type fenced struct {
		held  bool
		until time.Time // the session is live until then at least
		err   error
	}
	fc := make(chan fenced, 1)
	go func() {
		held, until, err := o.c.fence(ctx, o.key, o.epoch)
		fc <- fenced{held, until, err}
	}()
	uerr := o.ldb.SyncAndWait(ctx)
	uploaded := time.Now()
	f := <-fc
	if uerr != nil {
		return fmt.Errorf("upload: %w", uerr)
	}
	if f.err == nil && f.held && mono(uploaded) < mono(f.until) {
		o.extend(f.until)
		return nil
	}
	if f.err == nil && f.held {
		// The upload outlasted the session the fence saw live: fence again.
		f.held, f.until, f.err = o.c.fence(ctx, o.key, o.epoch)
	}
	if f.err != nil {
		return f.err
	}
	if !f.held {
		o.lose()
		return errLost
	}
	o.extend(f.until)
	return nil
}

// begin joins a write to the pending round before its statement runs;
// ended says the statement ended (committed or not), and wait waits for
// the round's upload and fence. Writes that begin while a round syncs join
// the next one: one upload serves them all.
func (o *owned) begin() *round {
	o.gmu.Lock()
	defer o.gmu.Unlock()
	if o.pending == nil {
		o.pending = newRound()
	}
	r := o.pending
	r.n++
	r.running++
	return r
}

func (o *owned) ended(r *round) {
	o.gmu.Lock()
	r.running--
	if r.running == 0 && r.taken {
		close(r.ran)
	}
	o.gmu.Unlock()
	o.wake()
}

func (o *owned) wait(ctx context.Context, r *round) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wake tells the syncer a round may be ready.
func (o *owned) wake() {
	select {
	case o.kick <- struct{}{}:
	default:
	}
}

// settled waits until every write committed before it was called is
// durable (the round syncing it ended), without joining a round: what a
// read saw is then never undone by a failover. It returns at once when no
// write waits and the last round succeeded; after a failed round it asks
// for one more.
func (o *owned) settled(ctx context.Context) error {
	o.gmu.Lock()
	r := o.pending
	if r == nil {
		r = o.inflight
	}
	if r == nil && o.dirty {
		r = newRound()
		o.pending = r
	}
	o.gmu.Unlock()
	if r == nil {
		return nil
	}
	o.wake()
	return o.wait(ctx, r)
}

// lose marks the lease gone and tears the database down in the background
// (nothing here is served from it again; the next request routes anew).
func (o *owned) lose() {
	if o.lost.Swap(true) {
		return
	}
	c := o.c
	c.cfg.Metrics.LeaseLost()
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		o.teardown(context.Background(), false)
	}()
}

// release hands the database over: a last upload, then the lease is freed
// so the next replica takes it without waiting (Close).
func (o *owned) release(ctx context.Context) error {
	select {
	case <-o.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	if o.err != nil {
		return nil
	}
	o.lost.Store(true)
	return o.teardown(ctx, true)
}

// teardown waits for the calls in flight, stops the replica and the group
// commit, closes and removes the local copy and forgets the database. With
// free the lease is let go (this replica still held it).
func (o *owned) teardown(ctx context.Context, free bool) error {
	c := o.c
	o.op.Lock()
	defer o.op.Unlock()
	select {
	case <-o.gone:
		return nil
	default:
	}
	defer close(o.gone)
	// The syncer first: a round whose waiters gave up may still be running
	// on the replica.
	o.stopSyncer()
	var errs []error
	errs = append(errs, o.stopReplica(ctx))
	errs = append(errs, c.local.Release(ctx, o.key.storeKey()))
	if free {
		errs = append(errs, c.free(ctx, o.key, o.epoch))
	} else if o.epoch > 0 {
		c.dropFenced(o.key, o.epoch)
	}
	kept := o.keep && errors.Join(errs...) == nil
	if !kept {
		errs = append(errs, o.c.removeLocal(o.path))
	}
	c.mu.Lock()
	if c.owned[o.key] == o {
		delete(c.owned, o.key)
	}
	if kept && !c.closed {
		c.idle[o.key] = idleCopy{epoch: o.epoch, prefix: c.obj.dbPrefix(o.key, o.epoch)}
	}
	c.mu.Unlock()
	return errors.Join(errs...)
}

// metaPath is where Litestream stages the uploads of the database at path:
// beside it, or under Config.StagingDir.
func (c *Cluster) metaPath(path string) string {
	meta := litestream.NewDB(path).MetaPath()
	if c.stageDir == "" {
		return meta
	}
	rel, err := filepath.Rel(c.dbDir, meta)
	if err != nil || strings.HasPrefix(rel, "..") {
		return meta // never: every database is under dbDir
	}
	return filepath.Join(c.stageDir, rel)
}

// removeLocal removes a database file and everything beside it (WAL,
// shared memory, Litestream's directory).
func (c *Cluster) removeLocal(path string) error {
	var errs []error
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, os.RemoveAll(c.metaPath(path)))
	return errors.Join(errs...)
}

// serve answers r from the local copy. retry is true when the lease turned
// out to be gone before anything was done: the caller routes again. ran is
// called once r ran (its write committed, its read taken), before the
// wait for the upload: from then on the next request of the database may
// run (broker.PassLane), after this one.
func (o *owned) serve(ctx context.Context, call broker.Call, r *frame.DBRequest, ran func()) (resp *frame.DBResponse, retry bool) {
	if r.Op == frame.OpImport {
		return o.importDB(ctx, call, r)
	}
	o.op.RLock()
	defer o.op.RUnlock()
	if o.lost.Load() {
		return nil, true
	}
	o.used.Store(mono(time.Now()))
	if !o.valid() {
		// This replica's view of the lease ran out (it was paused, or
		// renewals failed): ask PostgreSQL before serving anything.
		held, until, err := o.c.fence(ctx, o.key, o.epoch)
		if err != nil {
			return hostError(r, "the host could not check who holds this database"), false
		}
		if !held {
			o.lose()
			return nil, true
		}
		o.extend(until)
	}
	write := broker.IsDBWrite(r)
	var rd *round
	if write {
		rd = o.begin()
	}
	resp = o.c.localDB.DBRequest(ctx, call, r)
	if write {
		o.ended(rd)
	}
	// Committed (or read): the next request of this database may run
	// while this one waits for its upload, which keeps their order.
	ran()
	if !resp.OK {
		return resp, false
	}
	if !write {
		// A read answers only once the writes it may have seen are
		// durable: a failover never takes back what an app was shown.
		if err := o.settled(ctx); err != nil {
			return hostError(r, "the host could not confirm the writes this read saw were kept"), false
		}
		return resp, false
	}
	start := time.Now()
	if err := o.wait(ctx, rd); err != nil {
		if ctx.Err() != nil {
			// Committed here and perhaps uploaded: not CANCELLED, which
			// an app takes for not done.
			return hostError(r, "the request ended before the write was made durable; it may or may not have been kept"), false
		}
		o.c.logf("%s's %q: a write was not acknowledged: %v", o.key.user, o.key.app, err)
		return hostError(r, "the write could not be made durable; it may or may not have been kept"), false
	}
	o.c.cfg.Metrics.Acknowledged(time.Since(start))
	return resp, false
}

// importDB swaps the whole file, which starts a new epoch: the old replica
// stops, the store checks and swaps the file, the lease moves to epoch+1,
// a new replica uploads the imported database under the new epoch's
// prefix, and only when that prefix is published is the import answered.
// A failure before the swap leaves the database as it was; after it, the
// database is given up (the next owner restores the last published state,
// without the import, which was not acknowledged).
func (o *owned) importDB(ctx context.Context, call broker.Call, r *frame.DBRequest) (*frame.DBResponse, bool) {
	c := o.c
	o.op.Lock()
	if o.lost.Load() {
		o.op.Unlock()
		return nil, true
	}
	held, until, err := c.fence(ctx, o.key, o.epoch)
	if err != nil {
		o.op.Unlock()
		return hostError(r, "the host could not check who holds this database"), false
	}
	if !held {
		o.op.Unlock()
		o.lose()
		return nil, true
	}
	o.extend(until)
	// Everything acknowledged is uploaded already; stop the old replica so
	// the swap does not happen under it.
	o.stopSyncer()
	oldPrefix := c.obj.dbPrefix(o.key, o.epoch)
	if err := o.stopReplica(ctx); err != nil {
		c.logf("%s's %q: stop the replica for an import: %v", o.key.user, o.key.app, err)
	}
	// Whatever the store answers (a refused file leaves the old one
	// intact), the replica goes on under a new epoch: a fresh prefix never
	// mixes two files' histories.
	resp := c.localDB.DBRequest(ctx, call, r)
	fail := func(err error) (*frame.DBResponse, bool) {
		c.logf("%s's %q: import not acknowledged: %v", o.key.user, o.key.app, err)
		o.lost.Store(true)
		o.op.Unlock()
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			o.teardown(context.Background(), true)
		}()
		if !resp.OK {
			return resp, false
		}
		return hostError(r, "the import could not be made durable; the database is as it was before it"), false
	}
	next, held, err := c.bump(ctx, o.key, o.epoch)
	if err != nil {
		return fail(err)
	}
	if !held {
		return fail(errLost)
	}
	o.epoch = next
	prefix := c.obj.dbPrefix(o.key, next)
	if err := o.startReplica(ctx, prefix); err != nil {
		return fail(err)
	}
	held, err = c.publish(ctx, o.key, next, prefix)
	if err != nil {
		return fail(err)
	}
	if !held {
		return fail(errLost)
	}
	o.startSyncer()
	o.op.Unlock()
	c.dropPrefix(oldPrefix)
	return resp, false
}

// dropPrefix deletes what an earlier epoch left in object storage, in the
// background: nothing reads an unpublished prefix again. A fenced owner's
// late upload may land there afterwards; it is never read either, and the
// fenced owner deletes it once it knows it lost the lease (dropFenced).
func (c *Cluster) dropPrefix(prefix string) {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.deletePrefix(prefix)
	}()
}

// epochNow is the epoch o serves at now.
func (o *owned) epochNow() int64 {
	o.op.RLock()
	defer o.op.RUnlock()
	return o.epoch
}

// idleCopy is the local copy of a database this replica gave up when idle:
// the epoch it last replicated and that epoch's prefix, which it published.
type idleCopy struct {
	epoch  int64
	prefix string
}

// releaseIdle gives up the databases that had no request for IdleRelease
// (in the background, one at a time): a last upload, the lease freed, the
// files closed, the local copy kept for the next taking.
func (c *Cluster) releaseIdle() {
	if c.cfg.IdleRelease < 0 {
		return
	}
	limit := mono(time.Now().Add(-c.cfg.IdleRelease))
	c.mu.Lock()
	var idle []*owned
	for _, o := range c.owned {
		if o.isReady() && !o.lost.Load() && o.used.Load() < limit {
			idle = append(idle, o)
		}
	}
	c.mu.Unlock()
	for _, o := range idle {
		if c.ctx.Err() != nil {
			return
		}
		o.op.Lock()
		if o.lost.Load() || o.used.Load() >= limit {
			o.op.Unlock()
			continue // a request came meanwhile
		}
		o.lost.Store(true) // from now on requests route anew
		o.keep = true
		o.op.Unlock()
		ctx, cancel := context.WithTimeout(c.ctx, 2*c.ttl)
		if err := o.teardown(ctx, true); err != nil {
			c.logf("%s's %q: give up the idle database: %v", o.key.user, o.key.app, err)
		}
		cancel()
	}
}

// dropFenced deletes this replica's prefix of k at epoch, in the
// background, once the lease row names a newer one: this replica lost the
// lease, its replica is stopped, and what it uploaded after it was fenced
// is never read. Until the next owner publishes its own prefix it restores
// from the one published, which may be this one: so the deletion waits for
// that (checked every quarter TTL, for up to ten minutes).
func (c *Cluster) dropFenced(k dbKey, epoch int64) {
	prefix := c.obj.dbPrefix(k, epoch)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); {
			ctx, cancel := context.WithTimeout(c.ctx, c.ttl)
			l, found, err := c.readLease(ctx, k)
			cancel()
			if err == nil && (!found || l.prefix != prefix && l.epoch > epoch) {
				c.deletePrefix(prefix)
				return
			}
			t := time.NewTimer(c.ttl / 4)
			select {
			case <-c.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		c.logf("%s's %q: the fenced replica %s was not deleted: no newer one was published", k.user, k.app, prefix)
	}()
}

// deletePrefix deletes everything under prefix (a minute at most).
func (c *Cluster) deletePrefix(prefix string) {
	ctx, cancel := context.WithTimeout(c.ctx, time.Minute)
	defer cancel()
	client, err := c.obj.client(prefix)
	if err == nil {
		err = client.DeleteAll(ctx)
	}
	if err != nil && c.ctx.Err() == nil {
		c.logf("delete the old replica %s: %v", prefix, err)
	}
}

func hostError(r *frame.DBRequest, msg string) *frame.DBResponse {
	return &frame.DBResponse{RequestID: r.RequestID, OK: false, Error: frame.NewError(frame.CodeHostError, msg)}
}

func cancelled(r *frame.DBRequest) *frame.DBResponse {
	return &frame.DBResponse{RequestID: r.RequestID, OK: false, Error: frame.NewError(frame.CodeCancelled, "the request ended")}
}
