package engine

import (
	"fmt"
	"sync"
)

// State is where a terminal is in its life, the same in both servers. It
// is held under the terminal's lock and changes only through Move, along
// these moves:
//
//	Spawning -> Live     the child runs and OPENED is queued
//	Spawning -> Reaped   the spawn failed: there is no child
//	Live     -> Closing  CLOSE: SIGHUP sent, SIGKILL timer armed
//	Live     -> Reaped   the child was reaped (the supervisor)
//	Closing  -> Reaped   the same, after a CLOSE
//	Reaped   -> Gone     the terminal's id is free: the plain sidecar
//	                     writes its EXIT; the persistent server drops it
//	                     (its end was read, or nobody came for it)
//
// As every move needs the terminal's lock, what a check under it finds
// holds until the lock is released; and as no move goes backwards, a
// terminal once found Reaped (or Gone) stays so.
type State uint8

const (
	// Spawning: OPEN was read and the id is taken; the child is being
	// started.
	Spawning State = iota
	// Live: the child runs; signals may be sent to its process group.
	Live
	// Closing: the host sent CLOSE; the child still runs (and may be
	// signalled) until it is reaped.
	Closing
	// Reaped: there is no child any more, either because it was reaped
	// or because it never started. Its process ids may be a stranger's
	// now, so nothing is signalled, and the PTY is not used.
	Reaped
	// Gone: the terminal's id is free for a new OPEN.
	Gone
)

func (s State) String() string {
	switch s {
	case Spawning:
		return "spawning"
	case Live:
		return "live"
	case Closing:
		return "closing"
	case Reaped:
		return "reaped"
	case Gone:
		return "gone"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// CanMove reports whether the lifecycle has a move from one state to the
// other.
func CanMove(from, to State) bool {
	switch to {
	case Live:
		return from == Spawning
	case Closing:
		return from == Live
	case Reaped:
		return from == Spawning || from == Live || from == Closing
	case Gone:
		return from == Reaped
	}
	return false
}

// Running reports whether the terminal's child is ours to signal: it was
// started and has not been reaped.
func (s State) Running() bool { return s == Live || s == Closing }

// Move is the one mover of a terminal's state: it sets *s to to, or
// refuses with an error a move the lifecycle does not have (a second
// CLOSE, say). The caller holds the terminal's lock, and does what the
// new state implies after a Move that succeeded.
func Move(s *State, to State, id string) error {
	if !CanMove(*s, to) {
		return fmt.Errorf("terminal %q: no move from %s to %s", id, *s, to)
	}
	*s = to
	return nil
}

// IfRunning runs fn with mu held if *s says the child runs (Live or
// Closing), and reports whether it did. It is the one check that keeps
// signals and queries away from a child that was reaped, whose process
// ids may belong to someone else by then: both servers reap under the
// same lock (mu guards *s).
func IfRunning(mu sync.Locker, s *State, fn func()) bool {
	mu.Lock()
	defer mu.Unlock()
	if !s.Running() {
		return false
	}
	fn()
	return true
}
