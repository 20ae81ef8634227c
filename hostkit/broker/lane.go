package broker

import "sync"

// Design note: the db lane (the order of one app database's requests).
//
// The db-requests of one app database, that is of one (user, app): every
// instance of the app that user runs, take effect one at a time, in the
// order the broker accepted them (one page's frames are received in the
// order it sent them). A request that finds its lane free owns it: it is
// answered at once (nowDB) or goes to a worker. One that finds the
// lane owned waits in the lane's queue, its deadline running; whoever ends
// a request of the lane (the worker once the handler returned, or the
// receiving goroutine once it answered at once) hands the lane to the next
// request still waiting, and a worker runs the chain of them in turn. A
// request that ended while it waited (cancelled, superseded, its deadline,
// shutdown) is passed over: it never runs, so it cannot overtake a later
// write that was acknowledged. The lane waits for the handler to return,
// not for its answer: a request answered by its deadline while the
// handler still runs holds the lane until the handler is done. A handler
// whose request's effect is in order and which has only to wait (a
// replicated host's write, committed, waits for its upload) hands the lane
// on early with PassLane: the next request then runs on another worker
// while this one waits (the uploads end in the order the writes
// committed, so a later write's acknowledgement means the earlier ones
// are durable too). Nothing
// else is ordered (an agent, net, open-url or save-file request runs as
// soon as a worker is free).

// laneKey names one app database: the store's key (store.UserKey) is made
// of the same two.
type laneKey struct{ user, app string }

// lanes holds the owned lanes: a key is present while a request of it is
// running or waiting, with the requests that wait in the order accepted.
type lanes struct {
	mu sync.Mutex
	m  map[laneKey][]*request
}

// join makes r the owner of its lane when the lane is free (true), or
// queues it behind those in the lane (false), after prepare (which makes
// r ready for a worker) has run, so that r is ready before anyone can take
// it from the queue.
func (l *lanes) join(r *request, prepare func()) (owner bool) {
	k := r.laneKey()
	l.mu.Lock()
	defer l.mu.Unlock()
	q, busy := l.m[k]
	if !busy {
		if l.m == nil {
			l.m = make(map[laneKey][]*request)
		}
		l.m[k] = nil
		return true
	}
	prepare()
	l.m[k] = append(q, r)
	return false
}

// next hands the lane of r, whose handler is done, to the next request
// waiting in it that has not ended, and returns that request (its new
// owner), or frees the lane and returns nil. Each request passed over is
// done with (the broker's count of requests still to run).
func (l *lanes) next(r *request) *request {
	k := r.laneKey()
	for {
		l.mu.Lock()
		q := l.m[k]
		if len(q) == 0 {
			delete(l.m, k)
			l.mu.Unlock()
			return nil
		}
		n := q[0]
		q[0] = nil
		l.m[k] = q[1:]
		l.mu.Unlock()
		if !n.ended() {
			return n
		}
		n.s.b.wg.Done()
	}
}
