package sidecar

import (
	"fmt"
	"sync"
	"time"

	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// The bounds on queued input are the engine's (engine.MaxQueuedInput,
// engine.MaxQueuedInputTotal), the same as the persistent server's.
const (
	maxQueuedInput      = engine.MaxQueuedInput
	maxQueuedInputTotal = engine.MaxQueuedInputTotal
)

// inputBudget is the accounting shared by every terminal's input queue. Its
// mutex also guards the queues themselves: each critical section is a few
// slice operations, and one lock keeps the two counts consistent.
type inputBudget struct {
	mu    sync.Mutex    // lock order: the last lock taken (written at terminal.mu, terminal.go)
	total int           // bytes queued across all terminals
	freed chan struct{} // non-nil while the dispatch loop waits; closed when bytes are freed
}

// inputQueue hands INPUT payloads from the dispatch loop to the terminal's
// input writer goroutine, so that a child that never reads cannot stall the
// dispatch of other terminals' frames until its queue is full.
//
// When nothing is queued or being written, the dispatch loop first writes
// the payload itself with try, which never waits: a keystroke then reaches
// the PTY without a hand-off to another goroutine (on a runtime with more
// than one P, waking the writer goroutine costs a thread wake-up, the
// largest part of the sidecar's share of an echo). Whatever the PTY does
// not take at once is queued as before.
type inputQueue struct {
	b       *inputBudget
	chunks  [][]byte
	pending int           // bytes queued or being written
	writing bool          // a write to the PTY is in progress (direct, or the writer goroutine's)
	closed  bool          // the terminal ended; input has nowhere to go
	wake    chan struct{} // capacity 1: "there is something to write"
	// try writes what the PTY takes now without waiting and returns how
	// much that was; nil means always queue.
	try func([]byte) int
	// startWriter starts the writer goroutine; nil until the terminal
	// is live. It runs once, for the first input that has to queue:
	// most terminals' input is typed, and goes out through try.
	startWriter func()
	writerUp    bool // startWriter has run
}

func newInputQueue(b *inputBudget) *inputQueue {
	return &inputQueue{b: b, wake: make(chan struct{}, 1)}
}

// setTry enables direct writes (see try); until then INPUT only queues.
func (q *inputQueue) setTry(try func([]byte) int) {
	q.b.mu.Lock()
	q.try = try
	q.b.mu.Unlock()
}

// pushWait queues data (which it keeps), first waiting for room if the
// queue or the budget is full. It returns early, dropping data, only when
// gone is closed (the terminal ended, so the input has no reader) or stop
// is (the sidecar is shutting down). onWait is called once, with why, if it
// has to wait, and the returned duration says how long it did.
func (q *inputQueue) pushWait(data []byte, gone, stop <-chan struct{}, onWait func(why string)) (waited time.Duration) {
	if len(data) == 0 {
		return 0
	}
	var since time.Time
	for {
		q.b.mu.Lock()
		if q.closed {
			q.b.mu.Unlock()
			return elapsed(since)
		}
		why := q.full(len(data))
		if why == "" && q.try != nil && q.pending == 0 && !q.writing {
			q.writeNow(data) // unlocks
			return elapsed(since)
		}
		if why == "" {
			q.chunks = append(q.chunks, data)
			q.pending += len(data)
			q.b.total += len(data)
			q.wakeWriterLocked() // unlocks
			return elapsed(since)
		}
		if q.b.freed == nil {
			q.b.freed = make(chan struct{})
		}
		freed := q.b.freed
		q.b.mu.Unlock()
		if since.IsZero() {
			since = time.Now()
			onWait(why)
		}
		select {
		case <-freed:
		case <-gone:
			q.discard()
			return elapsed(since)
		case <-stop:
			return elapsed(since)
		}
	}
}

// writeNow writes data with try, the queue being idle, and queues what the
// PTY did not take, ahead of anything queued meanwhile. Called with q.b.mu
// held; returns with it released.
func (q *inputQueue) writeNow(data []byte) {
	q.writing = true
	q.pending += len(data)
	q.b.total += len(data)
	try := q.try
	q.b.mu.Unlock()
	n := try(data)
	q.b.mu.Lock()
	q.writing = false
	rest := len(data) - n
	if rest > 0 && q.closed {
		n = len(data) // ended meanwhile: the rest has nowhere to go
	} else if rest > 0 {
		q.chunks = append([][]byte{data[n:]}, q.chunks...)
	}
	if len(q.chunks) > 0 {
		q.wakeWriterLocked() // unlocks
	} else {
		q.b.mu.Unlock()
	}
	if n > 0 {
		q.done(n)
	}
}

// enableWriter sets how the writer goroutine is started and starts it
// now if input already waits (it queued while the child was spawned).
func (q *inputQueue) enableWriter(start func()) {
	q.b.mu.Lock()
	q.startWriter = start
	if len(q.chunks) > 0 {
		q.wakeWriterLocked() // unlocks
		return
	}
	q.b.mu.Unlock()
}

// wakeWriterLocked tells the writer goroutine that input waits, starting
// it first if it has not run yet and may. Called with q.b.mu held;
// returns with it released.
func (q *inputQueue) wakeWriterLocked() {
	start := q.startWriter != nil && !q.writerUp
	if start {
		q.writerUp = true
	}
	fn := q.startWriter
	q.b.mu.Unlock()
	if start {
		fn()
	}
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func elapsed(since time.Time) time.Duration {
	if since.IsZero() {
		return 0
	}
	return time.Since(since)
}

// full says why n more bytes do not fit now, or "" if they do. An empty
// queue takes any one frame, and so does an empty budget, so that a frame
// larger than a bound still goes through; the total stays under the global
// bound plus one frame. Called with q.b.mu held.
func (q *inputQueue) full(n int) string {
	switch {
	case q.pending > 0 && q.pending+n > maxQueuedInput:
		return fmt.Sprintf("its input queue holds %d bytes (limit %d per terminal)", q.pending, maxQueuedInput)
	case q.b.total > 0 && q.b.total+n > maxQueuedInputTotal:
		return fmt.Sprintf("input queued for all terminals holds %d bytes (limit %d)", q.b.total, maxQueuedInputTotal)
	}
	return ""
}

// take removes and returns everything queued, for the writer goroutine,
// which calls idle once it has written them; the bytes stay counted until
// done reports them written. It returns nothing while a direct write is in
// progress: that writer wakes the goroutine again if it leaves a rest.
func (q *inputQueue) take() [][]byte {
	q.b.mu.Lock()
	defer q.b.mu.Unlock()
	if q.writing {
		return nil
	}
	c := q.chunks
	q.chunks = nil
	q.writing = len(c) > 0
	return c
}

// idle says the writer goroutine has written what take gave it.
func (q *inputQueue) idle() {
	q.b.mu.Lock()
	q.writing = false
	q.b.mu.Unlock()
}

// done marks n bytes as written (or abandoned) and wakes a waiting
// dispatch loop.
func (q *inputQueue) done(n int) {
	q.b.mu.Lock()
	q.pending -= n
	q.b.total -= n
	if q.b.freed != nil {
		close(q.b.freed)
		q.b.freed = nil
	}
	q.b.mu.Unlock()
}

// discard drops whatever is still queued once the terminal has ended and
// refuses further input. Bytes taken by the writer are released by its own
// done calls.
func (q *inputQueue) discard() {
	q.b.mu.Lock()
	n := 0
	for _, c := range q.chunks {
		n += len(c)
	}
	q.chunks = nil
	q.closed = true
	q.b.mu.Unlock()
	if n > 0 {
		q.done(n)
	}
}
