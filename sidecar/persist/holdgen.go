//go:build unix

package persist

import (
	"fmt"
	"time"

	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Holder generations let a host that lost its connection take its
// terminals back without taking them from whoever took them since. Each
// time a connection becomes a terminal's holder (its OPEN, an ATTACH, a
// hand-over to a viewer, a re-adopting OPEN, a REVIVE) the terminal is
// given the next number of the server's counter, and that connection is
// told it (OPENED's or ATTACHED's "holdGen"). A host that reconnects
// ATTACHes with "resume" set to the number it was given. The ATTACH is
// refused if, since that number, a connection became the holder other
// than by such a resume: a plain ATTACH, a hand-over, a re-adopting OPEN,
// a REVIVE (holdRoot is the generation of the latest of those): another
// host took the terminal, whether it holds it still or not. Otherwise
// nobody but this host's own connections held it since (its holder, if
// any, is an old connection of the host that the server has not yet seen
// die) and the ATTACH goes on as any other. Resumes do not count so that
// a host whose resume got through on a connection that dropped before
// the ATTACHED reached it, and so never learnt the generation it was
// given, can resume with the one it had again.

// holdGenSeed is where a server's counter starts: the time in
// microseconds. A server started after a crash then gives generations
// past every one the crashed server gave (it could not give more than
// one a microsecond: each is a frame's round trip), though it has none
// of them: a resume from before the crash is refused once a connection
// of the new server took the terminal (a REVIVE, an ATTACH, an OPEN of
// the id anew). Counting from 0 again, the new server's takeovers got
// small generations, and every resume from before the crash, "at or
// past" them, took the terminals back. Microseconds stay exact in a
// JSON number read as a double (below 2^53) until the year 2255.
func holdGenSeed(now time.Time) uint64 { return uint64(max(now.UnixMicro(), 0)) }

// nextHoldGen gives the next holder generation.
func (s *Server) nextHoldGen() uint64 { return s.holdGens.Add(1) }

// newHolderLocked starts a new holder lineage: a generation for a
// connection that became the holder other than by a resume.
func (t *term) newHolderLocked() uint64 {
	t.holdGen = t.s.nextHoldGen()
	t.holdRoot = t.holdGen
	return t.holdGen
}

// holdLocked makes c the terminal's holder, with credit, under a new
// holder generation, which it returns; resumed says c took it back with
// an accepted "resume", which keeps the lineage (holdRoot).
func (t *term) holdLocked(c *conn, credit engine.Credit, resumed bool) uint64 {
	t.holder, t.credit = c, credit
	if !resumed {
		return t.newHolderLocked()
	}
	t.holdGen = t.s.nextHoldGen()
	return t.holdGen
}

// resumeRefusalLocked is the refusal of an ATTACH whose "resume" is
// resume (nil: none) because another connection became the holder
// since, or nil if it may go on. A resume past every generation (from a
// server before them, or one that crashed and restarted) goes on: nobody
// is known to have taken the terminal since.
func (t *term) resumeRefusalLocked(resume *uint64) error {
	if resume == nil || *resume >= t.holdRoot {
		return nil
	}
	return fmt.Errorf("ATTACH refused: terminal %q was taken over by another connection since this one held it (holdGen %d, resume %d)",
		t.id, t.holdGen, *resume)
}

// restoreHoldGens continues the counter of the server that handed st
// over: past every generation it gave (0 from a server before them),
// and past its own seed (holdGenSeed).
func (s *Server) restoreHoldGens(st state) {
	n := max(st.HoldGen, s.holdGens.Load())
	for _, ts := range st.Terms {
		n = max(n, ts.HoldGen)
	}
	s.holdGens.Store(n)
}
