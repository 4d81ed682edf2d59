package sidecar

import (
	"bufio"
	"io"
	"sync"

	"github.com/ptyplex/ptyplex/proto"
)

// writerQueue bounds frames waiting for the output stream. With reads of
// up to readSize bytes this caps buffered output near queueLen*readSize.
const writerQueue = 64

// outFrame is one encoded frame on its way to the host. before, if set,
// runs just before the frame is written; after runs once it has been
// flushed. Both also run when the frame is discarded because the stream
// broke or the writer closed.
type outFrame struct {
	buf    []byte
	pooled *[]byte // returned to framePool once written
	before func()
	after  func()
}

// writer is the only goroutine that touches the output stream.
type writer struct {
	mu       sync.RWMutex // held shared by senders, exclusively to close q
	closed   bool
	q        chan outFrame
	bw       *bufio.Writer
	tee      func([]byte) // sees every frame written; nil when not recording
	onBroken func(error)  // called once if a write fails
	done     chan struct{}
}

func newWriter(w io.Writer, tee func([]byte), onBroken func(error)) *writer {
	wr := &writer{
		q:        make(chan outFrame, writerQueue),
		bw:       bufio.NewWriterSize(w, 256<<10),
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
	w.q <- f // the loop drains q without taking mu, so this cannot deadlock
	w.mu.RUnlock()
}

// sendControl queues a JSON control frame.
func (w *writer) sendControl(t proto.Type, v any) {
	w.send(outFrame{buf: proto.AppendFrame(nil, t, proto.Marshal(v))})
}

// close stops the writer after everything queued so far is written and
// waits for it. No send may follow.
func (w *writer) close() {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.q)
	}
	w.mu.Unlock()
	<-w.done
}

// loop writes frames, flushing when the queue runs dry so that a burst of
// frames costs one write(2) while a lone keystroke echo goes out at once.
// After a write error it keeps draining the queue (running callbacks) so
// producers never block on a dead host.
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
	for f := range w.q {
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
		if f.after != nil {
			afters = append(afters, f.after)
		}
		if len(w.q) == 0 {
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
	}
	if !broken {
		if err := w.bw.Flush(); err != nil {
			fail(err)
		}
	}
	for _, fn := range afters {
		fn()
	}
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
