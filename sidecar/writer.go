package sidecar

import (
	"bufio"
	"io"
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// Queue bounds. The bulk queue caps buffered output near
// writerQueue*readSize bytes.
const (
	writerQueue = 64
	prioQueue   = 64
	// prioMax is the largest frame that may take the priority lane: an
	// echo or a prompt, not a chunk of a flood.
	prioMax = 4 << 10
)

// outFrame is one encoded frame on its way to the host. before, if set,
// runs just before the frame is written; after runs once it has been
// flushed. Both also run when the frame is discarded because the stream
// broke or the writer closed.
type outFrame struct {
	buf    []byte
	pooled *[]byte   // returned to framePool once written
	term   *terminal // whose frame this is, if any: counts in term.queued
	before func()
	after  func()
}

// writer is the only goroutine that touches the output stream.
//
// Frames wait in one of two lanes. A small frame of a terminal that has
// nothing else waiting takes the priority lane, which the writer always
// empties first; everything else queues in the bulk lane. So a keystroke
// echo from an idle shell does not wait behind megabytes of another
// terminal's flood, while each terminal's own frames keep their order:
// a frame goes to the priority lane only when none of its terminal's
// earlier frames is still waiting, and every priority frame is written
// before any bulk frame queued at the time.
type writer struct {
	mu       sync.RWMutex // held shared by senders, exclusively to close the lanes
	closed   bool
	prio     chan outFrame
	q        chan outFrame
	bw       *bufio.Writer
	tee      func([]byte) // sees every frame written; nil when not recording
	onBroken func(error)  // called once if a write fails
	done     chan struct{}
}

func newWriter(w io.Writer, tee func([]byte), onBroken func(error)) *writer {
	wr := &writer{
		prio:     make(chan outFrame, prioQueue),
		q:        make(chan outFrame, writerQueue),
		bw:       bufio.NewWriterSize(w, 128<<10),
		tee:      tee,
		onBroken: onBroken,
		done:     make(chan struct{}),
	}
	go wr.loop()
	return wr
}

// send queues an encoded frame, blocking while the queue is full. After
// close the frame is dropped (its callback still runs): only a dispatch
// racing with shutdown can get there.
func (w *writer) send(f outFrame) {
	w.mu.RLock()
	if w.closed {
		w.mu.RUnlock()
		if f.before != nil {
			f.before()
		}
		if f.after != nil {
			f.after()
		}
		return
	}
	// A terminal's frames are sent one after the other (OPENED by the
	// dispatch loop before the reader starts, OUTPUT by the reader, EXIT
	// by the supervisor after the reader ended), so none of its earlier
	// frames can be in flight when queued reads 0.
	lane := w.q
	if f.term == nil || (f.term.queued.Load() == 0 && len(f.buf) <= prioMax) {
		lane = w.prio
	}
	if f.term != nil {
		f.term.queued.Add(1)
	}
	lane <- f // the loop drains the lanes without taking mu: no deadlock
	w.mu.RUnlock()
}

// sendControl queues a JSON control frame about t (nil when it concerns
// no live terminal).
func (w *writer) sendControl(term *terminal, t proto.Type, v any) {
	w.send(outFrame{buf: proto.AppendFrame(nil, t, proto.Marshal(v)), term: term})
}

// close stops the writer after everything queued so far is written and
// waits for it. No send may follow.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.prio)
		close(w.q)
	}
	w.mu.Unlock()
	<-w.done
}

// loop writes frames, flushing when the lanes run dry so that a burst of
// frames costs one write(2) while a lone keystroke echo goes out at once;
// a priority frame is flushed as soon as no other priority frame waits.
// After a write error it keeps draining (running callbacks) so producers
// never block on a dead host.
func (w *writer) loop() {
	defer close(w.done)
	var broken bool
	var afters []func()
	fail := func(err error) {
		if !broken {
			broken = true
			w.onBroken(err)
		}
	}
	flush := func() {
		if !broken {
			if err := w.bw.Flush(); err != nil {
				fail(err)
			}
		}
		for _, fn := range afters {
			fn()
		}
		afters = afters[:0]
	}
	prio, bulk := w.prio, w.q
	for prio != nil || bulk != nil {
		var f outFrame
		var ok, urgent bool
		select {
		case f, ok = <-prio:
			urgent = true
		default:
			select {
			case f, ok = <-prio:
				urgent = true
			case f, ok = <-bulk:
			}
		}
		if !ok { // a lane closed: drain the other
			if urgent {
				prio = nil
			} else {
				bulk = nil
			}
			continue
		}
		if f.before != nil {
			f.before()
		}
		if !broken {
			if w.tee != nil {
				w.tee(f.buf)
			}
			if _, err := w.bw.Write(f.buf); err != nil {
				fail(err)
			}
		}
		if f.pooled != nil {
			putFrameBuf(f.pooled)
		}
		if f.term != nil {
			f.term.queued.Add(-1)
		}
		if f.after != nil {
			afters = append(afters, f.after)
		}
		if len(w.prio) == 0 && (urgent || len(w.q) == 0) {
			flush()
		}
	}
	flush()
}

// readSize is the most a terminal reads from its PTY into one OUTPUT frame.
const readSize = 64 << 10

// framePool recycles OUTPUT frame buffers: readers read straight into a
// buffer that already holds the frame header, and the writer returns it.
var framePool = sync.Pool{New: func() any {
	b := make([]byte, 0, readSize+512)
	return &b
}}

func getFrameBuf(need int) *[]byte {
	p := framePool.Get().(*[]byte)
	if cap(*p) < need {
		b := make([]byte, 0, need)
		p = &b
	}
	return p
}

func putFrameBuf(p *[]byte) {
	if cap(*p) <= readSize+512 {
		*p = (*p)[:0]
		framePool.Put(p)
	}
}
