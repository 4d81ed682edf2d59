package engine

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
)

// Bounds on INPUT bytes queued for children that have not read them yet.
// Nothing under them is ever dropped: past either bound the connection's
// dispatch waits until the queue drains, the back-pressure that hosts
// written for the original sidecar expect (its INPUT blocked, it never
// answered ERROR).
const (
	// MaxQueuedInput bounds one terminal's queue. It is not smaller than
	// proto.MaxData, so one INPUT frame always fits an empty queue.
	MaxQueuedInput = 16 << 20
	// MaxQueuedInputTotal bounds the sum over all terminals of a server,
	// so that many stuck children cannot take its memory with them.
	MaxQueuedInputTotal = 64 << 20
)

// InputBudget is the accounting shared by every terminal's input queue. Its
// mutex also guards the queues themselves: each critical section is a few
// slice operations, and one lock keeps the two counts consistent.
type InputBudget struct {
	mu    sync.Mutex    // lock order: the last lock taken, nothing is locked under it
	total int           // bytes queued across all terminals
	freed chan struct{} // non-nil while the dispatch loop waits; closed when bytes are freed
	c     *sync.Cond    // on mu, made by the first Freeze: a direct write ended
}

// InputQueue hands INPUT payloads from the dispatch loop to the terminal's
// input writer goroutine, so that a child that never reads cannot stall the
// dispatch of other terminals' frames until its queue is full.
//
// When nothing is queued or being written, the dispatch loop first writes
// the payload itself with try, which never waits: a keystroke then reaches
// the PTY without a hand-off to another goroutine (on a runtime with more
// than one P, waking the writer goroutine costs a thread wake-up, the
// largest part of the sidecar's share of an echo). Whatever the PTY does
// not take at once is queued as before.
type InputQueue struct {
	b       *InputBudget
	chunks  [][]byte
	pending int           // bytes queued or being written
	writing bool          // a write to the PTY is in progress (direct, or the writer goroutine's)
	closed  bool          // the terminal ended; input has nowhere to go
	frozen  bool          // Freeze: nothing is written, anything is queued
	direct  bool          // writeNow's try is in progress
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

// NewInputQueue returns an empty queue counted in b.
func NewInputQueue(b *InputBudget) *InputQueue {
	return &InputQueue{b: b, wake: make(chan struct{}, 1)}
}

// SetTry enables direct writes (see try); until then INPUT only queues.
func (q *InputQueue) SetTry(try func([]byte) int) {
	q.b.mu.Lock()
	q.try = try
	q.b.mu.Unlock()
}

// PushWait queues data (which it keeps), first waiting for room if the
// queue or the budget is full. It returns early, dropping data, only when
// gone is closed (the terminal ended, so the input has no reader) or stop
// is (the server is shutting down). onWait is called once, with why, if it
// has to wait, and the returned duration says how long it did.
func (q *InputQueue) PushWait(data []byte, gone, stop <-chan struct{}, onWait func(why string)) (waited time.Duration) {
	waited, _ = q.PushWaitQueued(data, gone, stop, onWait)
	return waited
}

// PushWaitQueued is PushWait, and also reports whether data was queued
// (or written): false when it returned early and dropped it, or found the
// queue closed. A caller that drops what follows a dropped INPUT, so that
// the child never reads input with a hole in it, needs to know.
func (q *InputQueue) PushWaitQueued(data []byte, gone, stop <-chan struct{}, onWait func(why string)) (waited time.Duration, queued bool) {
	if len(data) == 0 {
		return 0, true
	}
	var since time.Time
	stopping := false // stop is closed: one more look, then drop it
	for {
		q.b.mu.Lock()
		if q.closed {
			q.b.mu.Unlock()
			return elapsed(since), false
		}
		if q.frozen {
			// Kept whatever the bounds: it travels with the state.
			q.chunks = append(q.chunks, data)
			q.pending += len(data)
			q.b.total += len(data)
			q.b.mu.Unlock()
			return elapsed(since), true
		}
		why := q.full(len(data))
		if why == "" && q.try != nil && q.pending == 0 && !q.writing {
			q.writeNow(data) // unlocks
			return elapsed(since), true
		}
		if why == "" {
			q.chunks = append(q.chunks, data)
			q.pending += len(data)
			q.b.total += len(data)
			q.wakeWriterLocked() // unlocks
			return elapsed(since), true
		}
		if stopping {
			q.b.mu.Unlock()
			return elapsed(since), false
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
			q.Discard()
			return elapsed(since), false
		case <-stop:
			// What made room or froze the queue may have come
			// first, unseen (select picks at random among the
			// ready): the INPUT is dropped only if it still does
			// not fit. A live upgrade freezes the queues before it
			// ends the connections, and so keeps it.
			stopping = true
		}
	}
}

// writeNow writes data with try, the queue being idle, and queues what the
// PTY did not take, ahead of anything queued meanwhile. Called with q.b.mu
// held; returns with it released.
func (q *InputQueue) writeNow(data []byte) {
	q.writing, q.direct = true, true
	q.pending += len(data)
	q.b.total += len(data)
	try := q.try
	q.b.mu.Unlock()
	n := try(data)
	q.b.mu.Lock()
	q.writing, q.direct = false, false
	if q.frozen {
		q.b.cond().Broadcast() // Freeze waits for this write
	}
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
		q.Done(n)
	}
}

// EnableWriter sets how the writer goroutine is started and starts it
// now if input already waits (it queued while the child was spawned).
func (q *InputQueue) EnableWriter(start func()) {
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
func (q *InputQueue) wakeWriterLocked() {
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
func (q *InputQueue) full(n int) string {
	switch {
	case q.pending > 0 && q.pending+n > MaxQueuedInput:
		return fmt.Sprintf("its input queue holds %d bytes (limit %d per terminal)", q.pending, MaxQueuedInput)
	case q.b.total > 0 && q.b.total+n > MaxQueuedInputTotal:
		return fmt.Sprintf("input queued for all terminals holds %d bytes (limit %d)", q.b.total, MaxQueuedInputTotal)
	}
	return ""
}

// Take removes and returns everything queued, for the writer goroutine,
// which calls Idle once it has written them; the bytes stay counted until
// Done reports them written. It returns nothing while a direct write is in
// progress: that writer wakes the goroutine again if it leaves a rest.
func (q *InputQueue) Take() [][]byte {
	q.b.mu.Lock()
	defer q.b.mu.Unlock()
	if q.writing || q.frozen {
		return nil
	}
	c := q.chunks
	q.chunks = nil
	q.writing = len(c) > 0
	return c
}

// Idle says the writer goroutine has written what take gave it.
func (q *InputQueue) Idle() {
	q.b.mu.Lock()
	q.writing = false
	q.b.mu.Unlock()
}

// Done marks n bytes as written (or abandoned) and wakes a waiting
// dispatch loop.
func (q *InputQueue) Done(n int) {
	q.b.mu.Lock()
	q.pending -= n
	q.b.total -= n
	if q.b.freed != nil {
		close(q.b.freed)
		q.b.freed = nil
	}
	q.b.mu.Unlock()
}

// Discard drops whatever is still queued once the terminal has ended and
// refuses further input. Bytes taken by the writer are released by its own
// Done calls.
func (q *InputQueue) Discard() {
	q.b.mu.Lock()
	n := 0
	for _, c := range q.chunks {
		n += len(c)
	}
	q.chunks = nil
	q.closed = true
	q.b.mu.Unlock()
	if n > 0 {
		q.Done(n)
	}
}

// Freeze stops the queue where every byte is either written or queued,
// for a live upgrade: no direct writes, nothing taken by the writer, and
// PushWait queues whatever the bounds (and stops waiting). A write in
// progress is the caller's to interrupt (a write deadline) and to wait
// for (Writing); what it did not write comes back with PutBack. A
// direct write (try) in progress is waited for here.
func (q *InputQueue) Freeze() {
	q.b.mu.Lock()
	q.frozen = true
	if q.b.freed != nil {
		close(q.b.freed)
		q.b.freed = nil
	}
	// A direct write never waits for the PTY: it ends in microseconds.
	for q.direct {
		q.b.cond().Wait()
	}
	q.b.mu.Unlock()
}

// Unfreeze undoes Freeze (the upgrade was rolled back).
func (q *InputQueue) Unfreeze() {
	q.b.mu.Lock()
	q.frozen = false
	if len(q.chunks) > 0 {
		q.wakeWriterLocked() // unlocks
		return
	}
	q.b.mu.Unlock()
}

// Writing reports whether a write to the PTY is in progress.
func (q *InputQueue) Writing() bool {
	q.b.mu.Lock()
	defer q.b.mu.Unlock()
	return q.writing
}

// PutBack puts what the writer took and did not write (its write was
// interrupted) back at the front of the queue, still counted; the
// writer calls Idle after it. Input of a terminal that ended meanwhile
// is dropped.
func (q *InputQueue) PutBack(rest [][]byte) {
	q.b.mu.Lock()
	n := 0
	for _, c := range rest {
		n += len(c)
	}
	if !q.closed {
		q.chunks = append(append([][]byte(nil), rest...), q.chunks...)
		n = 0
	}
	q.b.mu.Unlock()
	if n > 0 {
		q.Done(n)
	}
}

// Queued returns what is queued, oldest first (of a frozen queue: what a
// live upgrade hands over).
func (q *InputQueue) Queued() [][]byte {
	q.b.mu.Lock()
	defer q.b.mu.Unlock()
	var out [][]byte
	for _, c := range q.chunks {
		if len(c) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Restore queues input handed over by a live upgrade, whatever the
// bounds, before any other.
func (q *InputQueue) Restore(chunks [][]byte) {
	q.b.mu.Lock()
	for _, c := range chunks {
		q.chunks = append(q.chunks, c)
		q.pending += len(c)
		q.b.total += len(c)
	}
	q.b.mu.Unlock()
}

// Ready is signalled (capacity 1) when input waits for the writer
// goroutine: it waits on Ready, then calls Take.
func (q *InputQueue) Ready() <-chan struct{} { return q.wake }

// Total is the bytes queued across all terminals now.
func (b *InputBudget) Total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// Status reports the queue's bytes (queued or being written), whether it
// refuses input (its terminal ended) and whether its writer goroutine was
// started: what tests of a server look at.
func (q *InputQueue) Status() (pending int, closed, writerUp bool) {
	q.b.mu.Lock()
	defer q.b.mu.Unlock()
	return q.pending, q.closed, q.writerUp
}

func (b *InputBudget) cond() *sync.Cond {
	if b.c == nil {
		b.c = sync.NewCond(&b.mu)
	}
	return b.c
}

// Drive is a terminal's input writer goroutine, the same in both
// servers: it writes queued INPUT to the PTY with write, in order, until
// ended is closed (the PTY or the child ended), then refuses the rest. A
// write that fails with os.ErrDeadlineExceeded was interrupted by a
// freeze (a live upgrade): what it did not write is put back, to go
// first once the terminal thaws or to travel with its state. Any other
// error means the PTY is gone: whoever watches the terminal's end
// reports it, and the rest of the input has nowhere to go. afterBatch,
// if set, runs after each batch written.
func (q *InputQueue) Drive(write func([]byte) (int, error), ended <-chan struct{}, afterBatch func()) {
	for {
		select {
		case <-q.Ready():
		case <-ended:
			q.Discard()
			return
		}
		chunks := q.Take()
		for i, c := range chunks {
			n, err := write(c)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				q.Done(n)
				q.PutBack(append([][]byte{c[n:]}, chunks[i+1:]...))
				break
			}
			q.Done(len(c))
		}
		if len(chunks) > 0 {
			q.Idle()
			if afterBatch != nil {
				afterBatch()
			}
		}
	}
}
