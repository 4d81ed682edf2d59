package client

import (
	"fmt"
	"sync"
)

// window is the receive side of one terminal: output the sidecar delivered
// that the caller has not read yet, plus the credit bookkeeping that keeps
// it bounded.
//
// With a window of size W the sidecar was granted W bytes at open. Every
// byte the caller reads is owed back; once at least W/2 are owed, read
// returns them as a grant for the caller to send in one CREDIT frame. So
// the credit the sidecar holds plus the bytes buffered here never exceed W,
// and a caller that stops reading stops the child. Batching the grants
// (like SSH's window adjust) keeps CREDIT traffic to a couple of frames per
// window instead of one per Read.
type window struct {
	mu       sync.Mutex
	cond     sync.Cond
	chunks   [][]byte // unread output, oldest first; chunks[0][off:] is next
	off      int
	buffered int
	size     int   // the credit window; 0 for a raw terminal (no credit)
	owed     int   // bytes read but not yet granted back
	credit   int   // what the sidecar may still send: granted minus received
	unlimit  bool  // CLOSE or shutdown lifted the sidecar's gate: credit no longer applies
	peak     int   // the most ever buffered, for tests and diagnostics
	end      error // io.EOF after EXIT, or why the terminal died; reads see it once drained
	discard  bool  // nobody will read: drop output (an abandoned open)
}

func newWindow(size int) *window {
	w := &window{size: size, credit: size}
	w.cond.L = &w.mu
	return w
}

// push appends output from the sidecar. A sidecar that sends more than it
// was granted is not one this host can trust with its memory (a remote one
// may be anything at all): push refuses the bytes and returns an error,
// which ends the connection. Once CLOSE or shutdown lifted the gate the
// sidecar drains freely, as the protocol allows.
func (w *window) push(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.size > 0 && !w.unlimit {
		if len(b) > w.credit {
			return fmt.Errorf("%d bytes of OUTPUT with only %d of the %d byte credit window left", len(b), w.credit, w.size)
		}
		w.credit -= len(b)
	}
	if w.discard || w.end != nil {
		return nil
	}
	w.chunks = append(w.chunks, b)
	w.buffered += len(b)
	if w.buffered > w.peak {
		w.peak = w.buffered
	}
	w.cond.Broadcast()
	return nil
}

// lift stops enforcing the credit: the host sent CLOSE or closed the
// sidecar's input, after which the sidecar reads the terminal unthrottled.
func (w *window) lift() {
	w.mu.Lock()
	w.unlimit = true
	w.mu.Unlock()
}

// read blocks until there is output or the terminal ended, copies what
// fits into p and returns the credit the caller should now grant (0 for
// none).
func (w *window) read(p []byte) (n int, grant int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.buffered == 0 && w.end == nil {
		w.cond.Wait()
	}
	if w.buffered == 0 {
		return 0, 0, w.end
	}
	if len(p) == 0 {
		return 0, 0, nil
	}
	for n < len(p) && len(w.chunks) > 0 {
		c := copy(p[n:], w.chunks[0][w.off:])
		n += c
		w.off += c
		if w.off == len(w.chunks[0]) {
			w.chunks[0] = nil
			w.chunks = w.chunks[1:]
			w.off = 0
		}
	}
	w.buffered -= n
	if w.size > 0 && w.end == nil {
		w.owed += n
		if w.owed >= max(1, w.size/2) {
			grant, w.owed = w.owed, 0
			// Counted as granted from now on: the CREDIT frame is
			// sent right after, and the sidecar cannot use it sooner.
			w.credit += grant
		}
	}
	return n, grant, nil
}

// finish records the end of the terminal; err is io.EOF for a normal exit.
// Buffered output stays readable.
func (w *window) finish(err error) {
	w.mu.Lock()
	if w.end == nil {
		w.end = err
	}
	w.cond.Broadcast()
	w.mu.Unlock()
}

// drop discards buffered and future output.
func (w *window) drop() {
	w.mu.Lock()
	w.discard = true
	w.chunks, w.off, w.buffered = nil, 0, 0
	w.mu.Unlock()
}

func (w *window) stats() (buffered, peak int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buffered, w.peak
}
