//go:build unix

package session

import "sync"

// request is one parsed-off-the-wire request waiting for the handler.
type request struct {
	conn *clientConn
	line []byte // the JSON text, without the newline
	// readErr, when set, is the answer: the request could not be read
	// (too large, or the client hung up half-way).
	readErr error
	gone    <-chan struct{} // closed when the client hangs up
}

// queue is the FIFO between connection readers and the single request
// handler. A slice rather than a channel: a channel's blocked senders are
// not promised to proceed in order, and arrival order is the contract.
type queue struct {
	mu     sync.Mutex
	items  []*request
	ready  chan struct{} // capacity 1: "items may be non-empty"
	closed bool
}

func newQueue() *queue { return &queue{ready: make(chan struct{}, 1)} }

// push appends r; it reports false once the queue is closed.
func (q *queue) push(r *request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.items = append(q.items, r)
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

// pop returns the oldest request, blocking until there is one or done is
// closed (then it returns nil).
func (q *queue) pop(done <-chan struct{}) *request {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			r := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return r
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-done:
			return nil
		}
	}
}

// close refuses further pushes and returns what was still queued.
func (q *queue) close() []*request {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.closed = true
	rest := q.items
	q.items = nil
	return rest
}
