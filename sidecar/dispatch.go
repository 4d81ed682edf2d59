package sidecar

import (
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// dispatch acts on one host frame. It never waits for a spawn (spawn.go)
// except past maxDeferred frames for one; its other waits are a full
// writer lane (the host not reading) and a full input queue (a child not
// reading more than engine.MaxQueuedInput): each holds everything back by design.
func (s *Sidecar) dispatch(f proto.Frame) {
	switch f.Type {
	case proto.TypeOpen:
		s.open(f.Body)
	case proto.TypeInput:
		id, data, err := proto.ParseData(f.Body)
		if err != nil {
			s.logf("INPUT: %v", err)
			return
		}
		// Straight into the queue, even during the spawn: its writer
		// starts with the child, and the bytes count against the
		// bounds from now on.
		if t := s.lookup(id); t != nil {
			s.queueInput(t, data)
		}
	case proto.TypeResize:
		r, err := proto.ParseResize(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(r.TerminalID); t != nil {
			s.act(t, func() {
				if err := t.proc.Resize(int(r.Cols), int(r.Rows)); err != nil {
					s.logf("terminal %q: resize: %v", r.TerminalID, err)
				}
			})
		}
	case proto.TypeClose:
		c, err := proto.ParseClose(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(c.TerminalID); t != nil {
			s.act(t, t.close)
		}
	case proto.TypeCredit:
		c, err := proto.ParseCredit(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		// The gate exists from OPEN on; its reader starts with the child.
		if t := s.lookup(c.TerminalID); t != nil {
			t.gate.Grant(c.Bytes)
		}
	case proto.TypeHello:
		s.hello(f.Body)
	case proto.TypePing:
		s.ping(f.Body)
	default:
		s.dispatchExtension(f)
	}
}

// open handles OPEN: validate and reserve the id here, spawn beside the
// dispatch loop (spawn.go).
func (s *Sidecar) open(body []byte) {
	o, err := proto.ParseOpen(body)
	if err != nil {
		id, ok := proto.OpenErrorID(o, body)
		if !ok {
			s.logf("OPEN without a recoverable terminalId dropped: %v", err)
			return
		}
		s.openFailed(id, err.Error())
		return
	}
	t, err := s.reserve(o.TerminalID, o.Credit)
	if err != nil {
		s.openFailed(o.TerminalID, err.Error())
		return
	}
	if t == nil {
		s.logf("OPEN %q read as shutdown began: dropped", o.TerminalID)
		return
	}
	cfg := ptyhost.Config{
		Cmd:  o.Cmd,
		Args: o.Args,
		Env:  o.Env,
		Cols: int(o.Cols),
		Rows: int(o.Rows),
		UTF8: o.UTF8,
	}
	if o.Cwd != nil {
		cfg.Dir = *o.Cwd
	}
	go s.spawn(t, cfg)
}

// openFailed answers an OPEN refused by the dispatch loop itself.
func (s *Sidecar) openFailed(id, msg string) {
	s.logf("OPEN %q failed: %s", id, msg)
	s.out.queueControl(nil, proto.TypeError, proto.Error{TerminalID: id, Message: msg})
}

// queueInput hands INPUT to t's writer, waiting while its queue (or the
// sum of all queues) is past its bound. The wait holds back every later
// frame, which is how the host feels the back-pressure; it is logged with
// its reason, so a stalled stream can be explained.
func (s *Sidecar) queueInput(t *terminal, data []byte) {
	waited := t.input.PushWait(data, t.finished, s.stop, func(why string) {
		s.logf("terminal %q: holding back further frames until its child reads its input: %s", t.id, why)
	})
	if waited > 0 {
		s.logf("terminal %q: input accepted after %v; reading frames again", t.id, waited.Round(time.Millisecond))
	}
}
