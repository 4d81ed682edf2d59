//go:build unix

package persist

import (
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// A connection's dispatch loop reads its frames through an
// engine.Lookahead, as the plain sidecar's does: while it waits for room
// in a terminal's input queue, a reader goes on reading up to
// engine.LookaheadBytes of the connection's frames, applies the CREDITs
// it finds (the holder's and a viewer's alike) at once, answers a PING
// that asks for it at once ("now") and keeps every other frame, other
// PINGs included, in order for after the wait. Without it a
// credited terminal whose child echoes (cat, a shell) waited for ever
// for a paste past its input bound: the child reads its input only while
// its output has credit, and the CREDIT was behind the INPUT held.

// newLookahead returns the frame reader of c's dispatch loop, reading r.
func (s *Server) newLookahead(c *conn, r *proto.Reader) *engine.Lookahead {
	return engine.NewLookahead(engine.LookaheadHooks{
		Read:  r.ReadFrame,
		Grant: func(f proto.Frame, before []engine.Read) bool { return s.grantAhead(c, f, before) },
		// A keepalive's PING is answered as it is read.
		Answer: func(f proto.Frame) bool {
			if !proto.PingNow(f.Body) {
				return false
			}
			c.write(proto.PongFrame(f.Body))
			return true
		},
		Last: s.lastAhead,
	})
}

// lastAhead reports whether nothing may be read past r before the
// dispatch loop has acted on it: STOP, UPGRADE and HANDOFF change what
// the connection is (the bytes after an UPGRADE belong to the new
// binary, a HANDOFF's to the host's own connection), and once the server
// stops nothing more is read.
func (s *Server) lastAhead(r engine.Read) bool {
	switch r.Frame.Type {
	case proto.TypeStop, proto.TypeUpgrade, proto.TypeHandoff:
		return true
	}
	select {
	case <-s.stopped:
		return true
	default:
		return false
	}
}

// grantAhead applies the CREDIT f from c, read during a wait behind the
// frames before, and reports whether it did: only for a terminal that
// exists now and that none of them opens, attaches, detaches or revives
// (such a frame changes what c is to the terminal: the CREDIT is about
// the terminal as that frame leaves it, and waits its turn).
func (s *Server) grantAhead(c *conn, f proto.Frame, before []engine.Read) bool {
	m, err := proto.ParseCredit(f.Body)
	if err != nil {
		return false
	}
	if engine.Names(before, m.TerminalID, proto.TypeOpen, proto.TypeAttach, proto.TypeDetach, proto.TypeRevive) {
		return false
	}
	t := s.lookup(m.TerminalID)
	if t == nil {
		return false
	}
	s.credit(c, t, m.Bytes)
	return true
}

// credit applies CREDIT of n bytes from c for t: to its output if c holds
// t, to c's view of it if c views it. A CREDIT that crossed a takeover is
// normal: dropped quietly.
func (s *Server) credit(c *conn, t *term, n uint64) {
	t.mu.Lock()
	finished := false
	if t.holder == c && t.credit.Limited() {
		n = t.payDebtLocked(c, n)
		t.credit.Grant(n)
		t.acked = min(t.acked+n, t.sent)
		finished = t.end == exitWritten
		t.broadcastLocked()
	} else if t.holder != c {
		t.creditViewerLocked(c, n)
	}
	t.mu.Unlock()
	if finished {
		// Its host has more of the tail kept for it.
		s.shrinkFinished(t)
	}
}

// noteInputCut is told of an INPUT of c's for t that waited for input
// room and was dropped rather than queued. If that was because c's
// stream ended (watchInputStop), every later INPUT of c for t is dropped
// too (what the look-ahead kept, which the child may have made room for
// meanwhile), so that the child never reads a paste with a hole in it,
// and the log says so. One dropped because another connection took t
// over is logged; c's later INPUT for t is refused as a non-holder's.
func (s *Server) noteInputCut(c *conn, t *term) {
	select {
	case <-c.ahead.Ended():
	default:
		t.mu.Lock()
		taken := t.holder != nil && t.holder != c
		t.mu.Unlock()
		if taken {
			s.logf("INPUT for terminal %q: another connection took the terminal over while it waited; it is dropped", t.id)
		}
		return // else the terminal or the server went
	}
	if c.inputCut == nil {
		c.inputCut = map[*term]struct{}{}
	}
	c.inputCut[t] = struct{}{}
	s.logf("INPUT for terminal %q: the connection ended while it waited; it is dropped, and every later INPUT of the connection for it", t.id)
}
