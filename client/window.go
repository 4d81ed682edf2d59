package client

import "sync"

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
	peak     int   // the most ever buffered, for tests and diagnostics
	end      error // io.EOF after EXIT, or why the terminal died; reads see it once drained
	discard  bool  // nobody will read: drop output (an abandoned open)
}

func newWindow(size int) *window {
	w := &window{size: size}
	w.cond.L = &w.mu
	return w
}

// push appends output from the sidecar. Should a broken sidecar send more
// than the window allows, the bytes are kept anyway (peak shows it):
// losing output would be worse than a big buffer.
func (w *window) push(b []byte) {
	if len(b) == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.discard || w.end != nil {
		return
	}
	w.chunks = append(w.chunks, b)
	w.buffered += len(b)
	if w.buffered > w.peak {
		w.peak = w.buffered
	}
	w.cond.Broadcast()
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
