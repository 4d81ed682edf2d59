package sidecar

import "fmt"

// termState is where a terminal is in its life. It is held in terminal.state
// under terminal.mu and changes only through enterLocked, along these moves:
//
//	spawning -> live     the child runs and OPENED is queued (spawn goroutine)
//	spawning -> reaped   the spawn failed: there is no child (spawn goroutine)
//	live     -> closing  CLOSE: SIGHUP sent, SIGKILL timer armed (dispatch)
//	live     -> reaped   the child was reaped (supervisor)
//	closing  -> reaped   the same, after a CLOSE
//	reaped   -> gone     EXIT, or the failed spawn's ERROR, is being written
//	                     and the id is free (the stream's holder)
//
// Every move needs terminal.mu, so what a check under it finds holds until
// the lock is released; and as no move goes backwards, a terminal once
// found reaped (or gone) stays so.
type termState uint8

const (
	// spawning: OPEN was read and the id is taken; the child is being
	// started. What the dispatch loop does to the terminal waits.
	spawning termState = iota
	// live: the child runs; signals may be sent to its process group.
	live
	// closing: the host sent CLOSE; the child still runs (and may be
	// signalled) until it is reaped.
	closing
	// reaped: there is no child any more, either because it was reaped
	// or because it never started. Its process ids may be a stranger's
	// now, so nothing is signalled, and the PTY is not used; EXIT (or
	// ERROR) is on its way.
	reaped
	// gone: the terminal's last frame was taken for writing and its id
	// is free for a new OPEN.
	gone
)

func (s termState) String() string {
	switch s {
	case spawning:
		return "spawning"
	case live:
		return "live"
	case closing:
		return "closing"
	case reaped:
		return "reaped"
	case gone:
		return "gone"
	}
	return fmt.Sprintf("termState(%d)", uint8(s))
}

// canMove reports whether the lifecycle has a move from one state to the
// other (see termState).
func canMove(from, to termState) bool {
	switch to {
	case live:
		return from == spawning
	case closing:
		return from == live
	case reaped:
		return from == spawning || from == live || from == closing
	case gone:
		return from == reaped
	}
	return false
}

// running reports whether the terminal's child is ours to signal: it was
// started and has not been reaped.
func (s termState) running() bool { return s == live || s == closing }

// enterLocked moves t to state to, or refuses with an error a move the
// lifecycle does not have (a second CLOSE, say). Entering reaped closes
// finished, which is the same event for a child that was reaped and for a
// spawn that failed: no process to signal, no PTY to use, no reader for
// queued input. Called with t.mu held.
func (t *terminal) enterLocked(to termState) error {
	if !canMove(t.state, to) {
		return fmt.Errorf("terminal %q: no move from %s to %s", t.id, t.state, to)
	}
	t.state = to
	if to == reaped {
		close(t.finished)
		// Nothing that waited for the spawn can still apply.
		t.stopDeferringLocked()
	}
	return nil
}

// ifLive runs fn with t.mu held if t's child runs (live or closing) and
// reports whether it did. It is the one check that keeps signals and
// queries away from a child that was reaped, whose process ids may belong
// to someone else by then: the supervisor reaps under the same lock.
func (t *terminal) ifLive(fn func()) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.state.running() {
		return false
	}
	fn()
	return true
}
