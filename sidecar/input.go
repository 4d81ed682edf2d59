package sidecar

import (
	"fmt"
	"sync"
)

// maxPendingInput bounds the INPUT bytes queued for one terminal whose
// child is not reading. An INPUT frame that would exceed it is dropped as a
// whole and reported with an ERROR frame; the frames before it still reach
// the child in order.
const maxPendingInput = 1 << 20

// inputQueue hands INPUT payloads from the dispatch loop to the terminal's
// input writer goroutine, so that a child that never reads cannot stall the
// dispatch of other terminals' frames.
type inputQueue struct {
	mu      sync.Mutex
	chunks  [][]byte
	pending int
	wake    chan struct{} // capacity 1: "there is something to write"
}

func newInputQueue() *inputQueue {
	return &inputQueue{wake: make(chan struct{}, 1)}
}

// push queues b (which it keeps) or reports that the queue is full.
func (q *inputQueue) push(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	q.mu.Lock()
	if q.pending+len(b) > maxPendingInput {
		pending := q.pending
		q.mu.Unlock()
		return fmt.Errorf("input queue full (%d bytes pending, limit %d): dropped %d bytes of input", pending, maxPendingInput, len(b))
	}
	q.chunks = append(q.chunks, b)
	q.pending += len(b)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	return nil
}

// take removes and returns everything queued.
func (q *inputQueue) take() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.chunks
	q.chunks = nil
	return c
}

// done marks n bytes as written.
func (q *inputQueue) done(n int) {
	q.mu.Lock()
	q.pending -= n
	q.mu.Unlock()
}
