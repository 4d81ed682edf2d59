package sidecar

import (
	"errors"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// dispatch acts on one host frame. It never waits for a spawn (spawn.go)
// except past maxDeferred frames for one; its other waits are a full
// writer lane (the host not reading) and a full input queue (a child not
// reading more than engine.MaxQueuedInput): each holds everything back by design.
// The persistent server's frames (LIST, ATTACH, ...) and unknown types
// are dropped, so that newer hosts can still talk to us.
func (s *Sidecar) dispatch(f proto.Frame) {
	m, err := proto.Decode(f)
	if err != nil {
		s.malformed(err.(*proto.DecodeError))
		return
	}
	switch m := m.(type) {
	case proto.OpenRequest:
		s.open(m.Open)
	case proto.Input:
		// Straight into the queue, even during the spawn: its writer
		// starts with the child, and the bytes count against the
		// bounds from now on.
		if t := s.lookup(m.TerminalID); t != nil {
			s.queueInput(t, m.Data)
		}
	case proto.Resize:
		if t := s.lookup(m.TerminalID); t != nil {
			s.act(t, func() {
				if err := t.proc.ResizePixels(int(m.Cols), int(m.Rows), int(m.PixelWidth), int(m.PixelHeight)); err != nil {
					s.logf("terminal %q: resize: %v", m.TerminalID, err)
				}
			})
		}
	case proto.Close:
		if t := s.lookup(m.TerminalID); t != nil {
			s.act(t, t.close)
		}
	case proto.Credit:
		// The gate exists from OPEN on; its reader starts with the child.
		if t := s.lookup(m.TerminalID); t != nil {
			t.gate.Grant(m.Bytes)
		}
	case proto.Signal:
		s.signal(m)
	case proto.Foreground:
		if t := s.lookup(m.TerminalID); t != nil {
			s.act(t, t.reportForeground)
		}
	case proto.Hello:
		s.logf("host %q speaks protocol %d, features %v", m.Version, m.Protocol, m.Features)
		s.helloReply()
	case proto.Ping:
		s.out.send(outFrame{buf: proto.PongFrame(m.Body)}, false)
	}
}

// malformed acts on a frame that could not be decoded: a refused OPEN is
// answered with an ERROR when it named an id, a malformed SIGNAL too when
// its terminal is live, HELLO is answered anyway; the rest is logged.
func (s *Sidecar) malformed(e *proto.DecodeError) {
	switch e.Type {
	case proto.TypeOpen:
		if !e.HasID {
			s.logf("OPEN without a recoverable terminalId dropped: %v", e)
			return
		}
		s.openFailed(e.ID, e.Error())
	case proto.TypeInput:
		s.logf("INPUT: %v", e)
	case proto.TypeResize, proto.TypeClose, proto.TypeCredit, proto.TypeForeground:
		s.logf("%v", e)
	case proto.TypeSignal:
		s.signalRefused(e.ID, e)
	case proto.TypeHello:
		s.logf("%v (answering with our own)", e)
		s.helloReply()
	}
}

// open handles OPEN: validate and reserve the id here, spawn beside the
// dispatch loop (spawn.go).
func (s *Sidecar) open(o proto.Open) {
	t, err := s.reserve(o.TerminalID, o.Credit)
	if errors.Is(err, errIDTaken) && s.answerAfterSpawn(o.TerminalID) {
		return
	}
	if err != nil {
		s.openFailed(o.TerminalID, err.Error())
		return
	}
	if t == nil {
		s.logf("OPEN %q read as shutdown began: dropped", o.TerminalID)
		return
	}
	cfg := ptyhost.Config{
		Cmd:     o.Cmd,
		Args:    o.Args,
		CmdLine: o.CommandLine,
		Env:     o.Env,
		Cols:    int(o.Cols),
		Rows:    int(o.Rows),
		UTF8:    o.UTF8,

		EnvOrder:       o.EnvOrder,
		NodePtyTermios: o.NodePtyTermios,
	}
	if o.Cwd != nil {
		cfg.Dir = *o.Cwd
	}
	go s.spawn(t, cfg)
}

// answerAfterSpawn refuses an OPEN for an id whose spawn is in flight
// once that spawn is answered, so that the host reads its first OPEN's
// OPENED (or ERROR) before the refusal of the second, as from a sidecar
// that spawns in its read loop: a host that matches answers by id would
// otherwise take the refusal for the answer to its first OPEN. It reports
// false when the id is not spawning any more (or too much waits for it
// already): then the refusal goes out at once.
func (s *Sidecar) answerAfterSpawn(id string) bool {
	t := s.lookup(id)
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.deferring || len(t.deferred) >= maxDeferred {
		return false
	}
	t.deferred = append(t.deferred, func() { s.openFailed(id, errIDTaken.Error()) })
	t.duplicates++
	return true
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
	held := false
	waited, queued := t.input.PushWaitQueued(data, t.finished, s.inputStop, func(why string) {
		s.logf("terminal %q: holding back further frames until its child reads its input: %s", t.id, why)
		// A CREDIT among the frames held back may be what the child
		// waits for: it is read and applied meanwhile (lookahead.go).
		held = true
		s.ahead.WaitBegins()
	})
	if !held {
		return
	}
	s.ahead.WaitEnds()
	if queued {
		s.logf("terminal %q: input accepted after %v; reading frames again", t.id, waited.Round(time.Millisecond))
	} else {
		// Its child ended, or the sidecar is ending (a signal, the
		// host gone): that input has nowhere to go.
		s.logf("terminal %q: input dropped after %v (its child ended or the sidecar is ending); reading frames again", t.id, waited.Round(time.Millisecond))
	}
}
