//go:build unix

package persist

import "sync"

// inputWaits is what ends a connection's INPUT waiting for input room
// (a child that reads nothing): the end of the connection's stream or of
// the server, after which the rest of that INPUT is dropped, as what a
// gone host sends is; and another connection taking over the terminal
// the INPUT is for, after which it is dropped too: the terminal's input
// is its new holder's, and the previous one's must not reach the child
// once the child reads again. A connection's dispatch loop waits for one
// INPUT at a time.
type inputWaits struct {
	mu     sync.Mutex
	stop   chan struct{} // the current waits' stop; nil until needed
	ended  bool          // the stream or the server ended: every stop is closed
	waitOn *term         // the terminal of the INPUT being pushed, if any
}

// begin is called by the dispatch loop of c, whose waits w are, before
// it pushes an INPUT for t: the channel it returns is closed if the wait
// must end; nil says another connection took t over since the dispatch
// loop found c holding it, and the INPUT is dropped. t.mu is held while
// c's hold is checked and t recorded, as it is while a takeover looks
// for it (takenOver), so no takeover falls between the two.
func (w *inputWaits) begin(c *conn, t *term) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if t.holder != c {
		return nil
	}
	if w.stop == nil {
		w.stop = make(chan struct{})
		if w.ended {
			close(w.stop)
		}
	}
	w.waitOn = t
	return w.stop
}

// done is called by the dispatch loop once the push returned.
func (w *inputWaits) done() {
	w.mu.Lock()
	w.waitOn = nil
	w.mu.Unlock()
}

// takenOver is called, with t.mu held, when another connection takes t
// over: an INPUT of this connection for t that waits ends (the next
// INPUT gets a new stop).
func (w *inputWaits) takenOver(t *term) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.waitOn != t || w.ended || w.stop == nil {
		return
	}
	close(w.stop)
	w.stop = nil
}

// end ends every wait, now and later: the stream or the server ended.
func (w *inputWaits) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return
	}
	w.ended = true
	if w.stop != nil {
		close(w.stop)
	}
}
