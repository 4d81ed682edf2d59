//go:build unix

package session

import (
	"errors"
	"slices"
	"time"

	"github.com/ptyplex/ptyplex/internal/nbwrite"
	"github.com/ptyplex/ptyplex/session/wire"
)

// Output wakes a pending WAIT without a hand-off. Activity-mode and
// after_gen WAITs register a waiter in the state; the PTY reader, right
// after it has fed a chunk to the emulator, takes the waiters that chunk
// satisfies and writes their answers to their sockets itself. Waking each
// WAIT's goroutine to answer instead cost a scheduler hand-off per wake-up
// and, with a second P idle, an OS thread woken to look for work: on a
// loaded 2-core machine that was the larger part of the daemon's share of
// a wake-up. The WAIT's goroutine still owns everything else: timeouts,
// hang-ups, shutdown, the program's exit, closing the connection, and any
// part of an answer the socket did not take at once.

// errAnswered ends a WAIT whose answer the reader wrote.
var errAnswered = errors.New("answered by the reader")

// waiter is one pending activity-mode or after_gen WAIT.
type waiter struct {
	activity bool  // activity mode; else after_gen
	after    int64 // after_gen's N
	conn     *clientConn

	// Guarded by state.mu: set when the reader takes the waiter (it is
	// then no longer in state.waiters).
	claimed bool
	data    wire.WaitData

	answered chan struct{} // closed once the reader has written what it could
	rest     []byte        // what the socket did not take at once; set before answered closes
}

func newWaiter(conn *clientConn, activity bool, after int64) *waiter {
	return &waiter{activity: activity, after: after, conn: conn, answered: make(chan struct{})}
}

// dueLocked returns w's answer if its condition holds; in activity mode
// it also clears the flag it reports (the first waiter to look takes it).
// st.mu must be held.
func (w *waiter) dueLocked(st *state) (wire.WaitData, bool) {
	exited := st.exited
	if w.activity {
		if !st.activity && !exited {
			return wire.WaitData{}, false
		}
		activity := st.activity
		st.activity = false
		return wire.WaitData{Activity: &activity, Exited: &exited}, true
	}
	if st.gen <= w.after && !exited {
		return wire.WaitData{}, false
	}
	gen := st.gen
	return wire.WaitData{OutputGen: &gen, Exited: &exited}, true
}

// claimDueLocked takes the waiters whose condition now holds, oldest
// first, out of st.waiters. st.mu must be held.
func (st *state) claimDueLocked() []*waiter {
	var due []*waiter
	keep := st.waiters[:0]
	for _, w := range st.waiters {
		if data, ok := w.dueLocked(st); ok {
			w.claimed, w.data = true, data
			due = append(due, w)
			continue
		}
		keep = append(keep, w)
	}
	clear(st.waiters[len(keep):])
	st.waiters = keep
	return due
}

// removeLocked drops an unclaimed waiter. st.mu must be held.
func (st *state) removeLocked(w *waiter) {
	if i := slices.Index(st.waiters, w); i >= 0 {
		st.waiters = slices.Delete(st.waiters, i, i+1) // clears the freed slot
	}
}

// answerDue writes the answers of waiters the reader claimed, each as far
// as its socket takes it without waiting (all of it, in practice: a
// connection carries one short answer). A client that hung up just loses
// its answer.
func answerDue(due []*waiter) {
	for _, w := range due {
		line := encodeResponse(w.data, nil)
		n, err := writeNow(w.conn, line)
		if err == nil {
			w.rest = line[n:]
		}
		close(w.answered)
	}
}

// awaitOutput runs an activity-mode or after_gen WAIT on its own
// goroutine: it answers at once when the condition holds, else parks
// until the reader answers it or the program exits, the timeout passes,
// the client hangs up or the daemon shuts down.
func (d *Daemon) awaitOutput(w *waiter, timeout <-chan time.Time, gone <-chan struct{}) (any, error) {
	st := d.st
	registered := false
	// leave takes w out of the reader's reach; it reports false when the
	// reader got there first (the answer is then already written).
	leave := func() bool {
		st.mu.Lock()
		defer st.mu.Unlock()
		if w.claimed {
			return false
		}
		st.removeLocked(w)
		return true
	}
	for {
		st.mu.Lock()
		if w.claimed {
			st.mu.Unlock()
			return nil, finishClaimed(w)
		}
		if data, ok := w.dueLocked(st); ok { // the program exited, or it was due on arrival
			if registered {
				st.removeLocked(w)
			}
			st.mu.Unlock()
			return data, nil
		}
		if !registered {
			st.waiters = append(st.waiters, w)
			registered = true
		}
		changed := st.changed
		st.mu.Unlock()
		if d.parkHook != nil {
			d.parkHook()
		}
		select {
		case <-changed:
			continue
		case <-gone:
			if !leave() {
				return nil, finishClaimed(w)
			}
			return nil, errClientGone
		case <-d.done:
			if !leave() {
				return nil, finishClaimed(w)
			}
			return nil, wire.RequestError("Daemon is shutting down")
		case <-timeout:
			if !leave() {
				return nil, finishClaimed(w)
			}
			f := false
			if w.activity {
				return wire.WaitData{Activity: &f, Exited: &f, TimedOut: true}, nil
			}
			st.mu.Lock()
			gen := st.gen
			st.mu.Unlock()
			return wire.WaitData{OutputGen: &gen, Exited: &f, TimedOut: true}, nil
		}
	}
}

// finishClaimed waits for the reader to be done with w's answer and
// writes what the socket did not take at once. goAsync closes the
// connection.
func finishClaimed(w *waiter) error {
	<-w.answered
	if len(w.rest) > 0 {
		w.conn.SetWriteDeadline(time.Now().Add(responseTimeout))
		w.conn.Write(w.rest)
	}
	return errAnswered
}

// writeNow writes as much of b as the socket takes without waiting, and
// never parks: it returns the count with a nil error when the socket is
// full.
func writeNow(c *clientConn, b []byte) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	return nbwrite.Write(rc, b)
}
