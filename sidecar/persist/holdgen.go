//go:build unix

package persist

import (
	"fmt"

	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// Holder generations let a host that lost its connection take its
// terminals back without taking them from whoever took them since. Each
// time a connection becomes a terminal's holder (its OPEN, an ATTACH, a
// hand-over to a viewer, a re-adopting OPEN, a REVIVE) the terminal is
// given the next number of the server's counter, and that connection is
// told it (OPENED's or ATTACHED's "holdGen"). A host that reconnects
// ATTACHes with "resume" set to the number it was given: while the
// terminal's generation is still that number, nobody else held it since
// (its holder, if any, is the host's own old connection, which the
// server has not yet seen die), and the ATTACH goes on as any other;
// once it is greater, another connection became the holder after it, and
// the ATTACH is refused, whether that connection still holds it or not.

// nextHoldGen gives the next holder generation.
func (s *Server) nextHoldGen() uint64 { return s.holdGens.Add(1) }

// holdLocked makes c the terminal's holder, with credit, under a new
// holder generation, which it returns.
func (t *term) holdLocked(c *conn, credit engine.Credit) uint64 {
	t.holder, t.credit = c, credit
	t.holdGen = t.s.nextHoldGen()
	return t.holdGen
}

// resumeRefusalLocked is the refusal of an ATTACH whose "resume" is
// resume (nil: none) because another connection became the holder
// since, or nil if it may go on. A resume past the generation (from a
// server before the generations, or one that crashed and restarted) goes
// on: nobody is known to have taken the terminal since.
func (t *term) resumeRefusalLocked(resume *uint64) error {
	if resume == nil || t.holdGen <= *resume {
		return nil
	}
	return fmt.Errorf("ATTACH refused: terminal %q was taken over by another connection since this one held it (holdGen %d, resume %d)",
		t.id, t.holdGen, *resume)
}

// restoreHoldGens continues the counter of the server that handed st
// over: past every generation it gave (0 from a server before them).
func (s *Server) restoreHoldGens(st state) {
	n := st.HoldGen
	for _, ts := range st.Terms {
		n = max(n, ts.HoldGen)
	}
	s.holdGens.Store(n)
}
