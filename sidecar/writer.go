package sidecar

import (
	"bufio"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ptyplex/ptyplex/proto"
)

// Queue bounds. The bulk lane caps buffered output near
// writerQueue*frameSize bytes.
const (
	writerQueue = 64
	prioQueue   = 64
	// prioMax is the largest frame that may take the priority lane: an
	// echo or a prompt, not a chunk of a flood.
	prioMax = 4 << 10
	// inlineBudget is how many bytes a goroutine that took the stream to
	// write its own frame goes on writing for others before it hands the
	// rest to the writer goroutine and returns to its own work.
	inlineBudget = 256 << 10
)

// outFrame is one encoded frame on its way to the host. before, if set,
// runs just before the frame is written; after runs once it has been
// flushed. Both also run when the frame is discarded because the stream
// broke or the writer closed.
type outFrame struct {
	buf    []byte
	pooled *[]byte   // returned to framePool once written
	term   *terminal // whose frame this is, if any: counts in term.queued
	last   bool      // term's EXIT: no frame of term is written after it
	before func()
	after  func()
}

// drop discards a frame that will never be written, running its callbacks
// as if it had been: whoever waits on them (an id to free, a terminal's
// end) must not wait forever.
func (f outFrame) drop() {
	if f.before != nil {
		f.before()
	}
	if f.after != nil {
		f.after()
	}
}

// writer owns the output stream.
//
// Frames wait in one of two lanes. A small frame of a terminal that has
// nothing else waiting takes the priority lane, which is always emptied
// first; everything else queues in the bulk lane. So a keystroke echo from
// an idle shell does not wait behind megabytes of another terminal's
// flood, while each terminal's own frames keep their order: a frame goes
// to the priority lane only when none of its terminal's earlier frames is
// still waiting, and every priority frame is written before any bulk
// frame queued at the time.
//
// Who writes: whoever holds the stream, a token taken under mu. A sender
// allowed to block on the host (a terminal's reader or supervisor) that
// finds the stream free takes it and writes its frame itself, then what
// others queued meanwhile, up to inlineBudget; a reader flooding alone so
// never hands a frame to another thread, which is what costs most when
// the runtime has more than one P. Senders that must not block on the host
// (the dispatch loop) queue and wake the writer goroutine instead, which
// also takes over whatever an inline writer leaves past its budget. Only
// the holder touches bw, broken and afters.
type writer struct {
	mu sync.Mutex // lock order: after terminal.mu, before the input budget's mutex (written at terminal.mu, terminal.go)
	// Each frame taken off a lane makes room for one waiting sender: a
	// Signal, not a Broadcast, which would wake every blocked flood reader
	// to find the lane full again, and put them all in the run queue ahead
	// of the reader of a keystroke echo.
	prioSpace, bulkSpace *sync.Cond
	prio                 fifo
	bulk                 fifo
	busy                 bool          // the stream is held
	closed               bool          // no more frames: the writer goroutine ends once all is written
	wake                 chan struct{} // nudges the writer goroutine (one pending nudge is enough)
	done                 chan struct{} // closed when the writer goroutine has ended
	progress             *writeClock

	// Owned by the stream's holder.
	bw       *bufio.Writer
	broken   bool
	afters   []func()
	tee      func([]byte) // sees every frame written; nil when not recording
	onBroken func(error)  // called once if a write fails
}

// fifo is a bounded ring of frames.
type fifo struct {
	buf     []outFrame
	head, n int
}

func newFifo(size int) fifo     { return fifo{buf: make([]outFrame, size)} }
func (q *fifo) len() int        { return q.n }
func (q *fifo) full() bool      { return q.n == len(q.buf) }
func (q *fifo) push(f outFrame) { q.buf[(q.head+q.n)%len(q.buf)] = f; q.n++ }
func (q *fifo) pop() (f outFrame) {
	f, q.buf[q.head] = q.buf[q.head], outFrame{}
	q.head = (q.head + 1) % len(q.buf)
	q.n--
	return f
}

func newWriter(w io.Writer, tee func([]byte), onBroken func(error)) *writer {
	progress := &writeClock{w: w}
	wr := &writer{
		prio:     newFifo(prioQueue),
		bulk:     newFifo(writerQueue),
		progress: progress,
		bw:       bufio.NewWriterSize(progress, 128<<10),
		tee:      tee,
		onBroken: onBroken,
		wake:     make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
	wr.prioSpace = sync.NewCond(&wr.mu)
	wr.bulkSpace = sync.NewCond(&wr.mu)
	go wr.loop()
	return wr
}

// send queues an encoded frame, waiting while its lane is full. inline
// says the caller may write to the host itself, and so block for as long
// as the host does not read: true for a terminal's reader and supervisor,
// false for the dispatch loop, which must go on reading the host's frames.
// After close the frame is dropped (its callbacks still run): only a
// dispatch racing with shutdown can get there.
func (w *writer) send(f outFrame, inline bool) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		f.drop()
		return
	}
	lane, space := &w.bulk, w.bulkSpace
	if f.term == nil || (f.term.queued.Load() == 0 && len(f.buf) <= prioMax) {
		lane, space = &w.prio, w.prioSpace
	}
	for lane.full() && !w.closed {
		space.Wait()
	}
	if w.closed {
		// Closed while we waited for room: the writer goroutine may
		// already have written its last frame and ended, and nobody
		// would take this one off the lane.
		w.mu.Unlock()
		f.drop()
		return
	}
	if f.term != nil {
		f.term.queued.Add(1)
	}
	lane.push(f)
	switch {
	case w.busy:
		// The holder writes it before it lets the stream go.
		w.mu.Unlock()
	case inline:
		w.busy = true
		w.drain(inlineBudget)
	default:
		w.mu.Unlock()
		w.nudge()
	}
}

// queueControl queues a JSON control frame about term (nil when it
// concerns no live terminal) from a goroutine that must not block on the
// host: it never writes the frame itself, though it waits for room in the
// lane. A goroutine that may write inline builds the frame with
// controlFrame and calls send.
func (w *writer) queueControl(term *terminal, typ proto.Type, v any) {
	w.send(controlFrame(term, typ, v), false)
}

func (w *writer) nudge() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// close stops the writer after everything queued so far is written and
// waits for it. Later sends drop their frames.
func (w *writer) close() {
	w.markClosed()
	<-w.done
}

// markClosed makes later sends drop their frames and wakes the writer
// goroutine to write what is queued and end.
func (w *writer) markClosed() {
	w.mu.Lock()
	w.closed = true
	// Senders waiting for room give up their frames now (see send).
	w.prioSpace.Broadcast()
	w.bulkSpace.Broadcast()
	w.mu.Unlock()
	w.nudge()
}

// closeUnlessStalled is close for the end of the sidecar, when nothing
// but the host waits for what is queued: it waits while the host reads,
// however slowly, but gives up once a write to the host has been blocked
// for stall, and reports whether everything was written. The stream's
// holder then still sits in that write(2), which only the host can end;
// the process's exit ends it. (close would wait for ever for a host that
// closed stdin but does not read stdout, and may be waiting for us to
// exit before it reads.)
func (w *writer) closeUnlessStalled(stall time.Duration) bool {
	w.markClosed()
	tick := time.NewTicker(stall / 10)
	defer tick.Stop()
	for {
		select {
		case <-w.done:
			return true
		case <-tick.C:
			if w.stalledFor(stall) {
				return false
			}
		}
	}
}

// stalledFor reports whether a write to the host has been blocked for d
// or more: the host has not read for that long.
func (w *writer) stalledFor(d time.Duration) bool {
	began := w.progress.began.Load()
	return began != 0 && time.Since(time.Unix(0, began)) >= d
}

// writeClock notes when the write to the host under way began (zero when
// none is), so that a host that stopped reading can be told from a busy
// one.
type writeClock struct {
	w     io.Writer
	began atomic.Int64 // UnixNano
}

func (c *writeClock) Write(p []byte) (int, error) {
	c.began.Store(time.Now().UnixNano())
	n, err := c.w.Write(p)
	c.began.Store(0)
	return n, err
}

// loop is the writer goroutine: it writes what senders that may not block
// queued, and what an inline writer left past its budget, until close.
func (w *writer) loop() {
	defer close(w.done)
	w.mu.Lock()
	for {
		if !w.busy && w.prio.len()+w.bulk.len() > 0 {
			w.busy = true
			w.drain(-1)
			w.mu.Lock()
			continue
		}
		if w.closed && !w.busy {
			w.mu.Unlock()
			return
		}
		w.mu.Unlock()
		<-w.wake
		w.mu.Lock()
	}
}

// drain writes queued frames, priority lane first, flushing when the lanes
// run dry so that a burst of frames costs one write(2) while a lone
// keystroke echo goes out at once; a priority frame is flushed as soon as
// no other priority frame waits. After budget bytes of bulk frames (no
// limit when negative) it leaves the rest to the writer goroutine. After a
// write error it goes on taking frames off the lanes, running their
// callbacks, so that producers never block on a dead host.
//
// The caller holds mu and has set busy; drain returns with mu released.
func (w *writer) drain(budget int) {
	written := 0
	for {
		var f outFrame
		urgent := w.prio.len() > 0
		switch {
		case urgent:
			f = w.prio.pop()
			w.prioSpace.Signal()
		case w.bulk.len() > 0 && (budget < 0 || written < budget):
			f = w.bulk.pop()
			w.bulkSpace.Signal()
			written += len(f.buf)
		default:
			// Dry, or past the budget: let the stream go. What is
			// left (if anything) is the writer goroutine's.
			w.busy = false
			left := w.bulk.len() > 0
			closed := w.closed
			w.mu.Unlock()
			if left || closed {
				w.nudge()
			}
			return
		}
		w.mu.Unlock()
		w.write(f)
		w.mu.Lock()
		if w.prio.len() == 0 && (urgent || w.bulk.len() == 0) {
			w.mu.Unlock()
			w.flush()
			w.mu.Lock()
		}
	}
}

// write puts one frame in the buffer; only the stream's holder calls it.
//
// A frame of a terminal whose EXIT was already written is dropped: a
// control frame (a FOREGROUND answer, an ERROR about a SIGNAL) may be
// queued by a goroutine that checked the terminal live just before the
// supervisor reaped it, and the host must never see a frame of a terminal
// after its EXIT. As holders write one at a time, exitWritten needs no
// lock, and since a terminal's frames are written in the order they were
// queued, everything queued before EXIT still goes out.
func (w *writer) write(f outFrame) {
	if f.before != nil {
		f.before()
	}
	late := f.term != nil && f.term.exitWritten
	if f.last {
		f.term.exitWritten = true
	}
	if !w.broken && !late {
		if w.tee != nil {
			w.tee(f.buf)
		}
		if _, err := w.bw.Write(f.buf); err != nil {
			w.fail(err)
		}
	}
	if f.pooled != nil {
		putFrameBuf(f.pooled)
	}
	if f.term != nil {
		f.term.queued.Add(-1)
	}
	if f.after != nil {
		w.afters = append(w.afters, f.after)
	}
}

// flush writes out the buffer and runs the callbacks of what it held.
func (w *writer) flush() {
	if !w.broken {
		if err := w.bw.Flush(); err != nil {
			w.fail(err)
		}
	}
	for _, fn := range w.afters {
		fn()
	}
	w.afters = w.afters[:0]
}

func (w *writer) fail(err error) {
	if !w.broken {
		w.broken = true
		w.onBroken(err)
	}
}
