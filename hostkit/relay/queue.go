package relay

import "sync"

// queue is one connection's outbound messages. push never blocks (the
// broker calls ports with a request's latch held); a page that falls more
// than max bytes behind is cut off instead.
type queue struct {
	mu     sync.Mutex
	msgs   [][]byte
	bytes  int64
	max    int64
	closed bool
	wake   chan struct{}
}

func newQueue(max int64) *queue {
	return &queue{max: max, wake: make(chan struct{}, 1)}
}

// push appends msg; it reports false when the queue is closed or full (and
// then closes it: the writer ends and so does the connection).
func (q *queue) push(msg []byte) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	if q.bytes+int64(len(msg)) > q.max {
		q.closed = true
		q.msgs = nil
		q.mu.Unlock()
		q.signal()
		return false
	}
	q.msgs = append(q.msgs, msg)
	q.bytes += int64(len(msg))
	q.mu.Unlock()
	q.signal()
	return true
}

func (q *queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// close lets the writer drain what is queued and then stop.
func (q *queue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

// take waits for messages and returns them all; ok is false once the queue
// is closed and drained.
func (q *queue) take() (msgs [][]byte, ok bool) {
	for {
		q.mu.Lock()
		if len(q.msgs) > 0 {
			msgs, q.msgs, q.bytes = q.msgs, nil, 0
			q.mu.Unlock()
			return msgs, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		<-q.wake
	}
}
