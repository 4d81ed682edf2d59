package sidecar

import (
	"errors"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// Spawning runs beside the dispatch loop. OPEN registers its terminal at
// once, so that its id is taken and frames that follow the OPEN find it,
// and a spawn goroutine starts the child. Until the child runs, what the
// dispatch loop would do to the terminal waits in its deferred list, and the
// spawn goroutine applies it, in order, right after queueing OPENED and
// before the terminal's goroutines start.
//
// Not everything waits: INPUT goes straight into the terminal's input
// queue (which exists from the start and counts against the input bounds
// as always; its writer goroutine starts, if needed, once the child runs)
// and CREDIT straight into its gate (read by nobody before the child
// runs). Neither changes the
// order in which their effects reach the child: the dispatch loop's own
// direct writes of INPUT (engine.InputQueue's try) begin only once the deferred
// actions ran, so a RESIZE sent before an INPUT still comes first.

const (
	// maxSpawns bounds the spawns in flight. Forks are serialised by the
	// runtime's fork lock anyway, so more parallel spawns would only park
	// more threads in it; a few overlap one spawn's PTY set-up and exec
	// wait with another's fork. OPENs past the bound wait as goroutines
	// (no thread), in no particular order.
	maxSpawns = 4
	// maxDeferred bounds the actions waiting for one spawn. Past it the
	// dispatch loop waits for that spawn to finish, the same back-pressure
	// as a full input queue; hosts send a handful of frames after an OPEN.
	maxDeferred = 1024
)

// whenLive runs fn now if t's child runs, queues it for when it does, or
// drops it if there is no child (the spawn failed, or the child was
// reaped: nothing an action does can apply then). With limit >= 0 it
// refuses (returns false) to queue more than limit actions.
func (t *terminal) whenLive(fn func(), limit int) bool {
	t.mu.Lock()
	switch {
	case t.deferring:
		if limit >= 0 && len(t.deferred) >= limit {
			t.mu.Unlock()
			return false
		}
		t.deferred = append(t.deferred, fn)
		t.mu.Unlock()
	case t.state.Running():
		t.mu.Unlock()
		fn()
	default:
		t.mu.Unlock()
	}
	return true
}

// stopDeferringLocked makes actions run (or drop) at once from now on and
// wakes a dispatch loop waiting in act. Called with t.mu held.
func (t *terminal) stopDeferringLocked() {
	if t.deferring {
		t.deferring, t.deferred = false, nil
		close(t.spawned)
	}
}

// goLive moves t to live and applies the deferred actions in order, then
// lets later ones run at once. Actions queued while a batch runs form the
// next batch, so the dispatch order holds throughout.
func (t *terminal) goLive() {
	t.mu.Lock()
	err := t.enterLocked(live)
	t.mu.Unlock()
	if err != nil {
		t.sc.logf("%v", err)
	}
	for {
		t.mu.Lock()
		batch := t.deferred
		t.deferred = nil
		if len(batch) == 0 {
			t.stopDeferringLocked()
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		for _, fn := range batch {
			fn()
		}
	}
}

// act applies fn to t from the dispatch loop: now, or once t's child
// runs. While maxDeferred actions wait already, it waits for the spawn
// (or shutdown) first.
func (s *Sidecar) act(t *terminal, fn func()) {
	for !t.whenLive(fn, maxDeferred) {
		s.logf("terminal %q: %d frames wait for its spawn; holding back further frames until it ends", t.id, maxDeferred)
		select {
		case <-t.spawned:
		case <-s.stop:
			return
		}
	}
}

// reserve registers a terminal for id whose child is yet to be spawned.
// It fails if the id is taken, or returns nil, nil once shutdown began.
func (s *Sidecar) reserve(id string, credit *uint64) (*terminal, error) {
	t := newTerminal(s, id, credit)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return nil, nil
	}
	if s.terms[id] != nil {
		return nil, errIDTaken
	}
	s.terms[id] = t
	return t, nil
}

// spawn is the spawn goroutine of t. On success it queues OPENED, starts
// the terminal and applies what waited for it; on failure it answers ERROR
// and frees the id as the ERROR is written, dropping what waited.
//
// OPENED and ERROR are sent inline: this goroutine has nothing else to do,
// so it may as well write them itself when the stream is free (saving the
// hand-off to the writer goroutine) and block if the host does not read.
func (s *Sidecar) spawn(t *terminal, cfg ptyhost.Config) {
	s.spawnSlots <- struct{}{}
	if s.beforeSpawn != nil {
		s.beforeSpawn(t.id)
	}
	// Also during shutdown: every OPEN read before it gets OPENED and then
	// EXIT, as from a sidecar that spawns in its read loop (a host that
	// writes its frames and closes stdin at once sees the same answers).
	// shutdown kills the child as soon as it runs.
	proc, err := ptyhost.Start(cfg)
	<-s.spawnSlots
	if err != nil {
		s.spawnFailed(t, err.Error())
		return
	}
	t.proc = proc
	s.out.send(controlFrame(t, proto.TypeOpened, proto.Opened{TerminalID: t.id, PID: proc.Pid(), Features: proto.Features}), true)
	// Announced after OPENED, off its latency; still before the
	// supervisor can reap. Until then the parent-death signal covers it.
	s.watch(proc)
	// What waited is applied before the terminal's goroutines start, so
	// that the child gets no queued INPUT before a RESIZE (or SIGNAL)
	// that came ahead of it; none of these actions needs them running.
	t.goLive()
	t.directInput()
	t.start()
}

// errIDTaken answers an OPEN for an id that is spawning or live.
var errIDTaken = errors.New("terminal id already exists")

// spawnFailed ends t, whose child never started: it goes from spawning
// to reaped, the same "finished" as a reaped child, which drops what
// waited for the spawn and releases a dispatch loop waiting to queue
// input; ERROR then answers the OPEN and frees the id as it is written.
func (s *Sidecar) spawnFailed(t *terminal, msg string) {
	t.mu.Lock()
	err := t.enterLocked(reaped)
	t.mu.Unlock()
	if err != nil {
		s.logf("%v", err)
	}
	// No child will read the input queue: return its bytes to the budget.
	t.input.Discard()
	s.logf("OPEN %q failed: %s", t.id, msg)
	s.out.send(t.finalFrame(controlFrame(nil, proto.TypeError, proto.Error{TerminalID: t.id, Message: msg})), true)
	// The OPENs refused while it spawned waited with what the failure
	// dropped: they are answered after it.
	t.mu.Lock()
	n := t.duplicates
	t.duplicates = 0
	t.mu.Unlock()
	for range n {
		s.openFailed(t.id, errIDTaken.Error())
	}
}

func controlFrame(term *terminal, typ proto.Type, v any) outFrame {
	return outFrame{buf: proto.AppendFrame(nil, typ, proto.Marshal(v)), term: term}
}
