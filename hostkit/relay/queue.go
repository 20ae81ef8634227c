package relay

import (
	"bytes"
	"slices"
	"strconv"
	"sync"
)

// queue is one connection's outbound messages. push never blocks (the
// broker calls ports with a request's latch held); when the page reads
// slower than the host writes, the queue keeps its size down in three steps:
//
//  1. Coalescing: a streaming app-response carries the whole text so far, so
//     while the page is behind — the writer is still writing what it took,
//     or the slot has coalesceAfter bytes waiting — a newer one for the
//     same slot and requestId replaces the one still waiting here, in its
//     place (and so does its inspect entry). The terminal frame is pushed
//     after every streaming frame of its request (the broker's latch) and
//     is never replaced, so it is never reordered or dropped.
//  2. A per-slot budget (maxSlot bytes waiting): a slot past it is ended,
//     alone. Its waiting messages are dropped, the page is told
//     {"t":"ended","slot":…,"reason":…} and the writer closes its session;
//     the page's other apps go on.
//  3. The connection's budget (max bytes waiting): the slot with the most
//     bytes waiting is ended until the message fits. Only when no slot has
//     anything waiting, so that the page's own messages (app lists, audit
//     entries, dialogs) alone are past it, is the connection cut off.
type queue struct {
	mu      sync.Mutex
	items   []qitem
	bytes   int64
	max     int64
	maxSlot int64
	slots   map[string]*slotQueue
	ended   []string // slots ended since the writer last took
	busy    bool     // the writer is writing what it took
	// spare is the slice the writer wrote last, given back for the next
	// messages while a writer runs; an idle connection keeps none, it goes
	// back to itemBufs (in box, the holder it came in) for the next drain.
	spare  []qitem
	box    *[]qitem
	closed bool
	wake   chan struct{}

	// start runs a writer (conn.write) on a goroutine of its own. A writer
	// runs only while there is something to write: an idle connection has
	// no writer goroutine (nor its stack). running says one is started;
	// finished that the last one has written everything of a closed queue.
	// start is called with mu held, so whatever it counts (conn.writers)
	// is counted before any later signal or close returns: a connection
	// that closes its queue and then waits for its writers cannot miss one
	// started by a concurrent close (Relay.Close). It must not block.
	start    func()
	running  bool
	finished bool

	// held says the read loop is between a frame's arrival and the queueing
	// of its inspector row (hold … unhold): nothing is taken meanwhile, so
	// that the row goes before whatever the frame caused (its answer, when
	// the broker answers at once). heldAt is where in items the messages
	// pushed during the hold begin, where the row goes.
	held   bool
	heldAt int
	// late is the sweep generation (Relay.sweep) in which the oldest row
	// still waiting for its request's answer was left to ride with it (0:
	// none waits); listed says the connection is on the sweep's list.
	late   uint64
	listed bool
}

// qitem is one waiting message. slot is "" for a message of the whole
// connection; key.rid is set on a message a newer one may replace. An
// inspector row waits as its entry (ent) and is encoded only when the
// writer takes it: a row replaced while it waits is never encoded. The
// entry is held by pointer so that an item stays small: a drain's slice
// grows by copying them.
type qitem struct {
	msg  []byte
	slot string
	key  coalesceKey
	size int64         // the message's length, or entrySize's bound for an entry
	ent  *inspectEntry // non-nil: msg is nil and the message is this row
	// framed says msg is a frame of slot, whose message (frameMessage)
	// is spliced when written.
	framed bool
}

// coalesceKey names a replaceable message of a slot: the streaming frame of
// a request, or that frame's inspect entry.
type coalesceKey struct {
	rid     string
	inspect bool
}

// slotQueue is one slot's share of the queue.
type slotQueue struct {
	bytes   int64
	ended   bool
	pending map[coalesceKey]int // index in items of the waiting replaceable message
}

// coalesceAfter is how much a slot may have waiting, while the writer is
// idle, before its streaming frames are coalesced anyway (the largest
// ordinary frame).
const coalesceAfter = 256 << 10

func newQueue(max, maxSlot int64) *queue {
	return &queue{max: max, maxSlot: maxSlot, slots: make(map[string]*slotQueue), wake: make(chan struct{}, 1)}
}

// push appends a message of the whole connection; it reports false when the
// queue is closed or full (and then closes it: the writer ends and so does
// the connection).
func (q *queue) push(msg []byte) bool { return q.pushSlot("", coalesceKey{}, msg) }

// pushSlot appends a message for slot. With key.rid set (a streaming frame,
// or its inspect entry) it replaces the slot's waiting message of the same
// key instead, in its place. It reports false when the message was not
// queued: the queue is closed, or the slot is ended.
func (q *queue) pushSlot(slot string, key coalesceKey, msg []byte) bool {
	return q.pushItem(qitem{msg: msg, slot: slot, key: key, size: int64(len(msg))}, true)
}

// pushFrame queues the frame message of raw for slot (the message
// frameMessage writes, spliced when the writer takes it) as pushSlot would,
// without starting a writer: the caller pushes more and then calls claim
// (or signal) itself.
func (q *queue) pushFrame(slot string, key coalesceKey, raw []byte) bool {
	return q.pushItem(qitem{msg: raw, framed: true, slot: slot, key: key, size: int64(frameMessageLen(slot, raw))}, false)
}

// pushEntry is pushSlot for the inspector row of e (slot e.Slot), encoded
// when the writer takes it; until then it counts as entrySize's bound.
func (q *queue) pushEntry(key coalesceKey, e inspectEntry, kick bool) bool {
	return q.pushItem(qitem{slot: e.Slot, key: key, size: entrySize(&e), ent: &e}, kick)
}

// pushItem queues it; kick false leaves the writer's start to the caller
// (a refusal still signals: the ended notice or the close must go out).
func (q *queue) pushItem(it qitem, kick bool) bool {
	q.mu.Lock()
	ok := q.pushLocked(it, false)
	q.mu.Unlock()
	if kick || !ok {
		q.signal()
	}
	return ok
}

// pushLocked queues it at the end of items, or with atHold where the
// messages pushed during the hold begin, with the budgets and coalescing
// pushItem describes; the caller holds mu and signals after unlocking when
// it reports false (the ended notice or the close must go out).
func (q *queue) pushLocked(it qitem, atHold bool) bool {
	slot, key, size := it.slot, it.key, it.size
	if q.closed {
		return false
	}
	var sq *slotQueue
	if slot != "" {
		sq = q.slots[slot]
		if sq == nil {
			sq = slotQueues.Get().(*slotQueue)
			q.slots[slot] = sq
		}
		if sq.ended {
			return false
		}
		if i, ok := sq.pending[key]; ok && key.rid != "" && (q.busy || sq.bytes >= coalesceAfter) {
			n := size - q.items[i].size
			q.items[i] = it
			sq.bytes += n
			q.bytes += n
			return true
		}
		if sq.bytes+size > q.maxSlot {
			q.endLocked(slot, "this app's messages to the page fell more than "+sizeText(q.maxSlot)+" behind, so it was stopped; the page's other apps go on")
			return false
		}
	}
	for q.bytes+size > q.max {
		victim := q.largestLocked()
		if victim == "" {
			q.closed = true
			q.items, q.heldAt = nil, 0
			return false
		}
		q.endLocked(victim, "the page fell more than "+sizeText(q.max)+" behind and this app had the most waiting, so it was stopped")
		if victim == slot {
			return false
		}
	}
	at := len(q.items)
	if atHold && q.held {
		at = q.heldAt // kept up to date by endLocked
	}
	if at < len(q.items) {
		// What waits from at on moves one place on.
		for _, other := range q.slots {
			for k, i := range other.pending {
				if i >= at {
					other.pending[k] = i + 1
				}
			}
		}
	}
	if sq != nil {
		if key.rid != "" {
			if sq.pending == nil {
				sq.pending = make(map[coalesceKey]int)
			}
			sq.pending[key] = at
		}
		sq.bytes += size
	}
	if q.items == nil {
		q.items, q.spare = q.spare, nil
		if q.items == nil {
			bp := itemBufs.Get().(*[]qitem)
			q.items, *bp, q.box = *bp, nil, bp
		}
	}
	q.items = slices.Insert(q.items, at, it)
	q.bytes += size
	return true
}

// largestLocked names the live slot with the most bytes waiting, "" when no
// slot has any.
func (q *queue) largestLocked() string {
	var name string
	var most int64
	for s, sq := range q.slots {
		if !sq.ended && sq.bytes > most {
			name, most = s, sq.bytes
		}
	}
	return name
}

// endLocked ends slot: its waiting messages are dropped, the page is told,
// and the writer closes its session (take returns it).
func (q *queue) endLocked(slot, reason string) {
	sq := q.slots[slot]
	sq.ended = true
	kept := q.items[:0]
	before := 0 // kept items before heldAt
	for i, it := range q.items {
		if it.slot == slot {
			q.bytes -= it.size
			continue
		}
		if i < q.heldAt {
			before++
		}
		kept = append(kept, it)
	}
	if q.held {
		q.heldAt = before
	}
	clear(q.items[len(kept):])
	q.items = kept
	sq.bytes = 0
	// The other slots' replaceable messages may have moved.
	for _, other := range q.slots {
		clear(other.pending)
	}
	for i, it := range q.items {
		if it.key.rid != "" {
			q.slots[it.slot].pending[it.key] = i
		}
	}
	msg := message(struct {
		T      string `json:"t"`
		Slot   string `json:"slot"`
		Reason string `json:"reason"`
	}{"ended", slot, reason})
	// The notice is not counted: there is at most one per slot, and it must
	// not push the next slot out.
	q.items = append(q.items, qitem{msg: msg, size: int64(len(msg))})
	q.ended = append(q.ended, slot)
}

// revive lets slot be used again (a new mount of that slot id).
func (q *queue) revive(slot string) {
	q.mu.Lock()
	delete(q.slots, slot)
	q.mu.Unlock()
}

// signal wakes take, and starts a writer when there is something to write
// and none is running.
func (q *queue) signal() {
	q.mu.Lock()
	if q.start != nil && !q.running && !q.finished && !q.held && (len(q.items) > 0 || len(q.ended) > 0 || q.closed) {
		q.running = true
		q.start() // under mu: see start
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// claim makes the calling goroutine the writer when no writer runs and
// what waits is only messages (no ended slot, the queue open) that fit in
// the cork (so that writing them into it never touches the socket): it takes
// them as next does (busy until written), and the caller writes them, then
// hands over with release. ok false: nothing was taken, and signal has
// started a writer if one is needed, as after a push.
func (q *queue) claim() (items []qitem, ok bool) {
	q.mu.Lock()
	if q.start == nil || q.running || q.finished || q.held || q.closed || len(q.ended) > 0 || len(q.items) == 0 ||
		q.bytes+int64(len(q.items))*wsHeaderMax > corkMax {
		q.mu.Unlock()
		q.signal()
		return nil, false
	}
	q.running = true
	items, _ = q.takeLocked()
	q.mu.Unlock()
	return items, true
}

// release ends a claim: with messages waiting (pushed meanwhile), or more to
// do (more: the claimant's bytes are not all out), a writer goroutine takes
// over, as signal would start it; otherwise no writer runs.
func (q *queue) release(more bool) {
	q.mu.Lock()
	if more || !q.held && (len(q.items) > 0 || len(q.ended) > 0 || q.closed) {
		q.start() // running stays true: the writer is now that goroutine
	} else {
		q.running = false
		q.dropSpare() // as next: an idle connection keeps none
	}
	q.mu.Unlock()
}

// hold makes the queue keep what is pushed from now on until unhold, which
// puts the arriving frame's inspector row before it.
func (q *queue) hold() {
	q.mu.Lock()
	q.held, q.heldAt = true, len(q.items)
	q.mu.Unlock()
}

// unhold queues the row e before what was pushed since hold, and ends the
// hold. With answer set (e is an accepted request's row: its answer is on
// its way) and nothing else waiting to go out, the row waits to ride with
// that answer: late is set (to gen, unless an older row waits already) and
// unhold reports list: the connection is to go on the sweep's list, which
// writes the row should the answer not come within a sweep. Otherwise
// flush reports that the caller is to write what waits now.
func (q *queue) unhold(e inspectEntry, answer bool, gen uint64) (flush, list bool) {
	q.mu.Lock()
	pushed := len(q.items) > q.heldAt
	ok := q.pushLocked(qitem{slot: e.Slot, size: entrySize(&e), ent: &e}, true)
	q.held, q.heldAt = false, 0
	if !ok || pushed || !answer || len(q.ended) > 0 || q.closed || q.running {
		q.mu.Unlock()
		return true, false
	}
	if q.late == 0 {
		q.late = gen
	}
	list = !q.listed
	q.listed = true
	q.mu.Unlock()
	return false, list
}

// due is the sweep's look at a listed connection at the tick that makes
// its count gen: a row left to ride with an answer before the previous
// tick (late < gen: it has waited a whole sweep period) is due (write what
// waits); keep says a younger one waits (stay listed). Neither: nothing waits, and the
// connection leaves the list.
func (q *queue) due(gen uint64) (due, keep bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.late == 0 || len(q.items) == 0:
		q.late, q.listed = 0, false
		return false, false
	case q.late < gen:
		q.listed = false
		return true, false
	}
	return false, true
}

// wsHeaderMax is the most a WebSocket frame header adds to a message.
const wsHeaderMax = 14

// close lets the writer drain what is queued and then stop.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take waits for messages and returns them all, inspector rows encoded,
// with the slots ended since the last take (their sessions are to be
// closed); ok is false once the queue is closed and drained.
func (q *queue) take() (msgs [][]byte, ended []string, ok bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 || len(q.ended) > 0 {
			items, ended := q.takeLocked()
			q.mu.Unlock()
			var enc entryEncoder
			for i := range items {
				msgs = append(msgs, bytes.Clone(enc.message(&items[i])))
			}
			enc.release()
			return msgs, ended, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, nil, false
		}
		<-q.wake
	}
}

// next is take for a writer started by signal: it does not wait. With
// nothing to write, the writer is done (the next signal starts another);
// final says the queue is closed too, and no writer will be started again.
func (q *queue) next() (items []qitem, ended []string, done, final bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.held && (len(q.items) > 0 || len(q.ended) > 0) {
		items, ended = q.takeLocked()
		return items, ended, false, false
	}
	// Held: unhold starts the next writer.
	q.busy, q.running = false, false
	q.dropSpare()
	if q.closed && !q.held {
		q.finished = true
	}
	return nil, nil, true, q.closed
}

// stop is a writer's end after a failed write: no writer is started again.
func (q *queue) stop() {
	q.mu.Lock()
	q.closed, q.finished, q.items, q.heldAt = true, true, nil, 0
	q.mu.Unlock()
}

// takeLocked hands the waiting items over (the queue starts a new slice).
func (q *queue) takeLocked() (items []qitem, ended []string) {
	items, ended = q.items, q.ended
	q.items, q.ended, q.bytes = nil, nil, 0
	q.busy, q.late = true, 0
	// Nothing waits now: only the ended marks are kept.
	for s, sq := range q.slots {
		if !sq.ended {
			delete(q.slots, s)
			*sq = slotQueue{}
			slotQueues.Put(sq)
		}
	}
	return items, ended
}

// itemBufs and slotQueues hold the items' slices and the slots' shares of
// drains in progress, so that a round trip allocates neither while an idle
// connection keeps none.
var (
	itemBufs   = sync.Pool{New: func() any { b := make([]qitem, 0, firstItems); return &b }}
	slotQueues = sync.Pool{New: func() any { return new(slotQueue) }}
)

// dropSpare gives the spare slice back to itemBufs (the caller holds mu).
func (q *queue) dropSpare() {
	if q.spare == nil {
		return
	}
	bp := q.box
	if bp == nil {
		bp = new([]qitem)
	}
	*bp = q.spare
	q.spare, q.box = nil, nil
	itemBufs.Put(bp)
}

// written reports that the writer wrote everything it took, and gives the
// items' slice back for reuse.
func (q *queue) written(items []qitem) {
	clear(items)
	q.mu.Lock()
	q.busy = false
	if cap(items) <= maxSpare {
		q.spare = items[:0]
	}
	q.mu.Unlock()
}

// maxSpare bounds the slice a queue keeps for reuse; firstItems is the
// room a drain starts with (a round trip with the inspector on is three
// messages, a streamed answer more).
const (
	maxSpare   = 1024
	firstItems = 8
)

// sizeText writes n bytes as "N MiB", or as bytes when it is not whole MiB.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
