package sidecar

import (
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/sidecar/engine"
)

// The dispatch loop reads its frames through an engine.Lookahead: while
// it waits for room in a terminal's input queue, a reader goes on reading
// up to engine.LookaheadBytes, applies the CREDITs it finds for live
// terminals at once, answers a PING that asks for it at once ("now") and
// keeps every other frame, in order, for after the wait (see
// engine/lookahead.go for why).

// newLookahead returns the frame reader of s's dispatch loop.
func newLookahead(s *Sidecar, r *proto.Reader) *engine.Lookahead {
	h := engine.LookaheadHooks{
		Read:  r.ReadFrame,
		Grant: s.grantAhead,
		// A keepalive's PING is answered as it is read.
		Answer: func(f proto.Frame) bool {
			if !proto.PingNow(f.Body) {
				return false
			}
			s.out.send(outFrame{buf: proto.PongFrame(f.Body)}, false)
			return true
		},
		// Once shutdown began nothing more is read.
		Last: func(engine.Read) bool { return s.isClosing() },
	}
	if s.opts.Tap != nil {
		h.Seen = func(f proto.Frame) { s.opts.Tap(true, proto.AppendFrame(nil, f.Type, f.Body)) }
	}
	return engine.NewLookahead(h)
}

// grantAhead applies the CREDIT f, read during a wait behind the frames
// before, and reports whether it did: only for a terminal live now that
// none of them opens (an OPEN of its id among them makes the credit the
// next terminal's).
func (s *Sidecar) grantAhead(f proto.Frame, before []engine.Read) bool {
	m, err := proto.ParseCredit(f.Body)
	if err != nil {
		return false
	}
	if engine.Names(before, m.TerminalID, proto.TypeOpen) {
		return false
	}
	t := s.lookup(m.TerminalID)
	if t == nil {
		return false
	}
	t.gate.Grant(m.Bytes)
	return true
}
