package sidecar

import (
	"syscall"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// dispatch acts on one host frame. It never blocks on a terminal: the only
// waits are the spawn in OPEN and a full writer queue (the host not
// reading), which holds everything back by design.
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
		if t := s.lookup(id); t != nil {
			if err := t.input.push(data); err != nil {
				s.logf("terminal %q: %v", id, err)
				s.out.sendControl(nil, proto.TypeError, proto.Error{TerminalID: id, Message: err.Error()})
			}
		}
	case proto.TypeResize:
		r, err := proto.ParseResize(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(r.TerminalID); t != nil {
			if err := t.proc.Resize(int(r.Cols), int(r.Rows)); err != nil {
				s.logf("terminal %q: resize: %v", r.TerminalID, err)
			}
		}
	case proto.TypeClose:
		c, err := proto.ParseClose(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(c.TerminalID); t != nil {
			t.close()
		}
	case proto.TypeCredit:
		c, err := proto.ParseCredit(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(c.TerminalID); t != nil {
			t.gate.Grant(c.Bytes)
		}
	default:
		s.dispatchExtension(f)
	}
}

// open handles OPEN: validate, spawn, register, announce, start.
func (s *Sidecar) open(body []byte) {
	o, err := proto.ParseOpen(body)
	if err != nil {
		if o.TerminalID == "" {
			s.logf("OPEN without a recoverable terminalId dropped: %v", err)
			return
		}
		s.openFailed(o.TerminalID, err.Error())
		return
	}
	if s.lookup(o.TerminalID) != nil {
		s.openFailed(o.TerminalID, "terminal id already exists")
		return
	}
	cfg := ptyhost.Config{
		Cmd:  o.Cmd,
		Args: o.Args,
		Env:  o.Env,
		Cols: int(o.Cols),
		Rows: int(o.Rows),
	}
	if o.Cwd != nil {
		cfg.Dir = *o.Cwd
	}
	proc, err := ptyhost.Start(cfg)
	if err != nil {
		s.openFailed(o.TerminalID, err.Error())
		return
	}
	t := newTerminal(s, o.TerminalID, proc, o.Credit)
	s.mu.Lock()
	if s.closing {
		// Shutdown began while we were spawning: this one never lived.
		s.mu.Unlock()
		proc.SignalGroup(syscall.SIGKILL)
		proc.Reap()
		proc.Close()
		return
	}
	s.terms[t.id] = t
	s.mu.Unlock()
	s.watch(proc)
	s.out.sendControl(t, proto.TypeOpened, proto.Opened{TerminalID: t.id, PID: proc.Pid(), Features: proto.Features})
	t.start()
}

func (s *Sidecar) openFailed(id, msg string) {
	s.logf("OPEN %q failed: %s", id, msg)
	s.out.sendControl(nil, proto.TypeError, proto.Error{TerminalID: id, Message: msg})
}
