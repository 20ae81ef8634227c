package cluster

import (
	"context"
	"sync"
)

// A replica hands a database's lane on (broker.PassLane) once a request
// ran, before its answer: a write waits for its round's upload, and the
// next request of the lane may run meanwhile. Forwarded or served here,
// the requests of one lane then wait for their answers side by side, and a
// resend (the owner died, stalled or handed the lease on) could overtake
// an earlier request sent again at the same time: the next owner would
// apply them out of order.
//
// So the requests of one database that wait here at once form a chain, in
// the order their lane ran them, and a request is sent (or served here)
// only where every earlier request of the chain ran in its current
// attempt: at the same owner, at the same epoch. A resent request never
// runs before an earlier one it was sent after, because that earlier one
// has run where it goes, or is answered. The first of a chain never waits,
// so the chain always moves on. Reads do not hand the lane on when
// forwarded (a read sent again would see writes sent after it), so a read
// has no later request beside it.

// place is where an attempt ran: a replica (this one's id when served
// here) at one epoch of the database's lease.
type place struct {
	owner string
	epoch int64
}

// chain is one database's requests waiting here, in the order they ran.
type chain struct {
	mu      sync.Mutex
	links   []*link
	changed chan struct{} // closed and replaced whenever a link moves
}

// link is one request of a chain.
type link struct {
	c  *chain
	at place // where its current attempt ran; zero until it ran
}

// joinChain adds a request of k's database to the end of its chain; the
// caller leaves once it is answered.
func (c *Cluster) joinChain(k dbKey) *link {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := c.chains[k]
	if ch == nil {
		ch = &chain{changed: make(chan struct{})}
		c.chains[k] = ch
	}
	l := &link{c: ch}
	ch.mu.Lock()
	ch.links = append(ch.links, l)
	ch.mu.Unlock()
	return l
}

// leaveChain removes l, answered, from k's chain.
func (c *Cluster) leaveChain(k dbKey, l *link) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := l.c
	ch.mu.Lock()
	for i, x := range ch.links {
		if x == l {
			ch.links = append(ch.links[:i], ch.links[i+1:]...)
			break
		}
	}
	empty := len(ch.links) == 0
	ch.moved()
	ch.mu.Unlock()
	if empty && c.chains[k] == ch {
		delete(c.chains, k)
	}
}

// moved wakes the links waiting on the chain (under mu).
func (ch *chain) moved() {
	close(ch.changed)
	ch.changed = make(chan struct{})
}

// waitAhead waits until every earlier link of l's chain ran at p (or was
// answered), or ctx ends.
func (l *link) waitAhead(ctx context.Context, p place) error {
	for {
		l.c.mu.Lock()
		ready := true
		for _, x := range l.c.links {
			if x == l {
				break
			}
			if x.at != p {
				ready = false
				break
			}
		}
		changed := l.c.changed
		l.c.mu.Unlock()
		if ready {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ran records that l's current attempt ran at p.
func (l *link) ran(p place) { l.set(p) }

// failed records that l's current attempt ended unanswered: it is sent
// again, and the links after it wait for that.
func (l *link) failed() { l.set(place{}) }

func (l *link) set(p place) {
	l.c.mu.Lock()
	l.at = p
	l.c.moved()
	l.c.mu.Unlock()
}
