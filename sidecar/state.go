package sidecar

import "github.com/ptyplex/ptyplex/sidecar/engine"

// termState is where a terminal is in its life: the engine's lifecycle,
// shared with the persistent server (engine.State documents the moves).
// It is held in terminal.state under terminal.mu and changes only through
// enterLocked. In the plain sidecar the moves are made by: spawning ->
// live and spawning -> reaped the spawn goroutine; live -> closing the
// dispatch loop; -> reaped the supervisor; reaped -> gone the stream's
// holder, as it writes EXIT (or the failed spawn's ERROR).
type termState = engine.State

const (
	spawning = engine.Spawning
	live     = engine.Live
	closing  = engine.Closing
	reaped   = engine.Reaped
	gone     = engine.Gone
)

// canMove reports whether the lifecycle has a move from one state to the
// other (see engine.State).
func canMove(from, to termState) bool { return engine.CanMove(from, to) }

// enterLocked moves t to state to, or refuses with an error a move the
// lifecycle does not have (a second CLOSE, say). Entering reaped closes
// finished, which is the same event for a child that was reaped and for a
// spawn that failed: no process to signal, no PTY to use, no reader for
// queued input. Called with t.mu held.
func (t *terminal) enterLocked(to termState) error {
	if err := engine.Move(&t.state, to, t.id); err != nil {
		return err
	}
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
	if !t.state.Running() {
		return false
	}
	fn()
	return true
}
