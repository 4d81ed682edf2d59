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
	chunks   []chunk // unread output, oldest first; chunks[0].b[off:] is next
	off      int
	buffered int
	size     int   // the credit window; 0 for a raw terminal (no credit)
	owed     int   // bytes read but not yet granted back
	credit   int   // what the sidecar may still send: granted minus received
	unlimit  bool  // CLOSE or shutdown lifted the sidecar's gate: credit no longer applies
	peak     int   // the most ever buffered, for tests and diagnostics
	end      error // io.EOF after EXIT, or why the terminal died; reads see it once drained
	discard  bool  // nobody will read: drop output (an abandoned open)

	// The terminal's stream offsets. pos is the offset of the next byte
	// read returns (Terminal.Offset); recv the offset just past the last
	// byte pushed, which is what a resume ATTACHes at: bytes buffered
	// here but not yet read count as received, since they will be read,
	// so the resumed stream neither repeats nor skips them. Both live
	// under mu with the buffer, so that no read is ever half counted.
	pos, recv uint64
	// epoch counts resumes. A grant computed in one epoch and sent after
	// the resume reset the credit would be counted twice by the server;
	// Client.grant drops it (resetCredit already folded it in).
	epoch uint64
}

// chunk is one piece of buffered output. A resync chunk is not part of
// the terminal's byte stream: it is the server's repaint of a screen
// whose bytes fell out of its journal while the connection was down.
// Once it has been read whole, pos jumps to to, where OUTPUT continues.
type chunk struct {
	b      []byte
	resync bool
	to     uint64
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
	if err := w.over(len(b)); err != nil {
		return err
	}
	if w.size > 0 && !w.unlimit {
		w.credit -= len(b)
	}
	if w.discard || w.end != nil {
		return nil
	}
	w.recv += uint64(len(b))
	w.add(chunk{b: b})
	return nil
}

// check refuses n bytes of OUTPUT that the credit left does not cover,
// as push would, without taking any credit: the reader calls it at a
// frame's header and push takes the credit once the frame is whole. Only
// the reader takes credit, so what check allowed push allows too.
func (w *window) check(n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over(n)
}

func (w *window) over(n int) error {
	if w.size > 0 && !w.unlimit && n > w.credit {
		return fmt.Errorf("%d bytes of OUTPUT with only %d of the %d byte credit window left", n, w.credit, w.size)
	}
	return nil
}

func (w *window) add(c chunk) {
	w.chunks = append(w.chunks, c)
	w.buffered += len(c.b)
	if w.buffered > w.peak {
		w.peak = w.buffered
	}
	w.cond.Broadcast()
}

// resync buffers a repaint that stands in for lost bytes; the stream
// continues at offset to. It is not OUTPUT, so it takes no credit.
func (w *window) resync(repaint []byte, to uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.recv = to
	if w.discard || w.end != nil {
		return
	}
	if len(repaint) == 0 && w.buffered == 0 {
		w.pos = to
		return
	}
	w.add(chunk{b: repaint, resync: true, to: to})
}

// setOffset places an attached terminal's stream at offset before any of
// its output arrived.
func (w *window) setOffset(offset uint64) {
	w.mu.Lock()
	w.pos, w.recv = offset, offset
	w.mu.Unlock()
}

// offsets returns pos and recv.
func (w *window) offsets() (pos, recv uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pos, w.recv
}

// resetCredit starts a resume: it returns the offset to ATTACH at and the
// credit to attach with (nil: unthrottled), and makes that credit the
// sidecar's, folding in whatever was read but not yet granted. The
// invariant credit + buffered + owed = size holds across it, so the new
// connection can never send more than the window has room for.
func (w *window) resetCredit() (offset uint64, credit *uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.epoch++
	if w.size == 0 || w.unlimit {
		return w.recv, nil
	}
	w.credit += w.owed
	w.owed = 0
	c := uint64(w.credit)
	return w.recv, &c
}

// ungrant takes back a grant of epoch e that could not be sent (the
// connection was down): it is owed again, and the next resume's credit
// includes it. A grant of an older epoch was folded in already.
func (w *window) ungrant(n int, e uint64) {
	w.mu.Lock()
	if e == w.epoch && w.end == nil {
		w.credit -= n
		w.owed += n
	}
	w.mu.Unlock()
}

// current reports whether e is still the window's epoch.
func (w *window) current(e uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return e == w.epoch
}

// lift stops enforcing the credit: the host sent CLOSE or closed the
// sidecar's input, after which the sidecar reads the terminal unthrottled.
func (w *window) lift() {
	w.mu.Lock()
	w.unlimit = true
	w.mu.Unlock()
}

// relimit undoes lift, for a CLOSE that could not be sent: the sidecar
// still holds the terminal to its credit. (Nothing was pushed meanwhile
// that the gate did not count: a reconnecting client that is down
// receives nothing.)
func (w *window) relimit() {
	w.mu.Lock()
	w.unlimit = false
	w.mu.Unlock()
}

// read blocks until there is output or the terminal ended, copies what
// fits into p and returns the credit the caller should now grant (0 for
// none).
func (w *window) read(p []byte) (n int, grant int, err error) {
	n, grant, _, err = w.readEpoch(p)
	return n, grant, err
}

// readEpoch is read that also returns the epoch the grant belongs to.
func (w *window) readEpoch(p []byte) (n int, grant int, epoch uint64, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) == 0 {
		// As an os.File's or net.Conn's: an empty read has nothing to
		// wait for. It says io.EOF (or why the terminal died) once
		// everything was read.
		if w.buffered == 0 && w.end != nil {
			return 0, 0, w.epoch, w.end
		}
		return 0, 0, w.epoch, nil
	}
	for {
		// An empty repaint only moves pos; it is passed here so that
		// read never returns 0 bytes without an error.
		for len(w.chunks) > 0 && len(w.chunks[0].b) == 0 {
			w.pos = w.chunks[0].to
			w.chunks = w.chunks[1:]
		}
		if w.buffered > 0 || w.end != nil {
			break
		}
		w.cond.Wait()
	}
	if w.buffered == 0 {
		return 0, 0, w.epoch, w.end
	}
	credited := 0 // bytes of OUTPUT read: resync chunks took no credit
	for n < len(p) && len(w.chunks) > 0 {
		ch := &w.chunks[0]
		c := copy(p[n:], ch.b[w.off:])
		n += c
		w.off += c
		if !ch.resync {
			w.pos += uint64(c)
			credited += c
		}
		if w.off == len(ch.b) {
			if ch.resync {
				w.pos = ch.to
			}
			w.chunks[0] = chunk{}
			w.chunks = w.chunks[1:]
			w.off = 0
		}
	}
	w.buffered -= n
	if w.size > 0 && w.end == nil {
		w.owed += credited
		if w.owed >= max(1, w.size/2) {
			grant, w.owed = w.owed, 0
			// Counted as granted from now on: the CREDIT frame is
			// sent right after, and the sidecar cannot use it sooner.
			w.credit += grant
		}
	}
	return n, grant, w.epoch, nil
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
	w.pos = w.recv
	w.mu.Unlock()
}

func (w *window) stats() (buffered, peak int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buffered, w.peak
}
