//go:build unix

package persist

import (
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// DefaultOrphanTimeout is how long a running terminal may go without a
// holder before the server closes it, unless its OPEN says otherwise
// ("orphanMs") or the server was started with another --orphan-timeout.
//
// Three hours: a persistent terminal exists to outlive a host that goes
// away and comes back, and hosts come back after an editor reload
// (seconds), a redeploy (minutes), an ssh link that dropped while a
// laptop slept or a train went through a tunnel (up to hours). VS Code
// keeps the terminals of a remote window that long for the same reason
// (its reconnection grace time; 60 s for local windows, which only
// reload). A host that never comes back (a test run, a crashed agent)
// then costs a few hours of its programs' CPU, not days: a flood in ring
// mode keeps a core busy for as long as it runs. A host that wants
// tmux's "forever" says so per terminal ("orphanMs": -1) or for the
// server (--orphan-timeout 0); one that wants VS Code's local 60 s says
// "orphanMs": 60000.
const DefaultOrphanTimeout = 3 * time.Hour

// orphanClock is a terminal's orphan bound: the "orphanMs" of its OPEN
// (0: the server's default, proto.OrphanNever: none) and the clock that
// runs from its latest detach while it runs with no holder.
type orphanClock struct {
	ms  int64
	gen int       // clocks started; only the latest may close the terminal
	at  time.Time // when the running clock ends; zero while none runs
	// closed says the bound closed the terminal: its end is the
	// server's doing, and an OPEN that would re-adopt it gets a new
	// terminal instead (readopt.go).
	closed bool
	// timer is the running clock's, stopped when it no longer counts:
	// a pending timer keeps the terminal, journal and all, in memory.
	timer *time.Timer
}

// stop stops the running clock's timer, if any.
func (o *orphanClock) stop() {
	if o.timer != nil {
		o.timer.Stop()
		o.timer = nil
	}
}

// orphanTimeout is how long t may run with no holder; 0: for ever.
func (s *Server) orphanTimeout(ms int64) time.Duration {
	switch {
	case ms == proto.OrphanNever:
		return 0
	case ms > 0:
		return time.Duration(ms) * time.Millisecond
	}
	return max(s.opts.OrphanTimeout, 0)
}

// orphanedLocked starts t's orphan clock, t having just lost its holder
// (a DETACH, the end of its holder's connection, a live upgrade, which
// ends every connection). It does nothing while a host holds t, once
// its child ended or is being closed, or when t has no orphan bound.
func (s *Server) orphanedLocked(t *term) {
	s.orphanedForLocked(t, s.orphanTimeout(t.orphan.ms))
}

// orphanedForLocked is orphanedLocked with d left on the clock (a live
// upgrade hands over what was left of it).
func (s *Server) orphanedForLocked(t *term, d time.Duration) {
	if s.orphanTimeout(t.orphan.ms) == 0 || t.holder != nil || t.life != engine.Live {
		return
	}
	t.orphan.stop()
	t.orphan.gen++
	gen := t.orphan.gen
	t.orphan.at = time.Now().Add(d)
	t.orphan.timer = time.AfterFunc(d, func() { s.orphanDue(t, gen) })
}

// orphanDue closes t, as CLOSE does (SIGHUP, SIGKILL after the grace
// period), if clock gen is still t's and nobody took t meanwhile. Its
// EXIT is kept for a host that comes back, as any EXIT that happens
// while detached (--keep-exited).
func (s *Server) orphanDue(t *term, gen int) {
	t.ifRunning(func() {
		if t.orphan.gen != gen || t.holder != nil || t.life != engine.Live {
			return
		}
		if t.frozen {
			// A live upgrade is under way: the next image sets the
			// clock again from orphanAt; if the upgrade is undone,
			// we look again shortly.
			t.orphan.gen++
			gen := t.orphan.gen
			t.orphan.timer = time.AfterFunc(time.Second, func() { s.orphanDue(t, gen) })
			return
		}
		t.orphan.timer = nil
		t.orphan.at, t.orphan.closed = time.Time{}, true
		s.logf("terminal %q: no host held it for %v: closing it", t.id, s.orphanTimeout(t.orphan.ms))
		t.closeLocked()
	})
}

// adoptedLocked stops t's orphan clock: a host holds it again.
func (t *term) adoptedLocked() {
	t.orphan.stop()
	t.orphan.gen++
	t.orphan.at = time.Time{}
}

// orphanInLocked is LIST's orphanInMs for t: the milliseconds left on
// its orphan clock, or nil when none runs.
func (t *term) orphanInLocked() *int64 {
	if t.holder != nil || t.life != engine.Live || t.orphan.at.IsZero() {
		return nil
	}
	left := max(time.Until(t.orphan.at).Milliseconds(), 0)
	return &left
}
