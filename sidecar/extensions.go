package sidecar

import (
	"errors"
	"fmt"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost"
)

// signal serves SIGNAL (an extension of the seed protocol).
func (s *Sidecar) signal(m proto.Signal) {
	sig, _, err := signame.Parse(m.Signal)
	if err == nil {
		err = m.CheckTarget()
	}
	if err != nil {
		s.signalRefused(m.TerminalID, fmt.Errorf("SIGNAL: %w", err))
		return
	}
	if t := s.lookup(m.TerminalID); t != nil {
		s.act(t, func() { t.signal(sig, m.Signal, m.Target == proto.SignalChild) })
		return
	}
	s.logf("SIGNAL %q for unknown terminal %q dropped", m.Signal, m.TerminalID)
}

// signalRefused logs a SIGNAL that cannot be carried out and tells its
// terminal's host. Only a live terminal is told: an ERROR for a pending
// or unknown id would read as the answer to an OPEN. One whose spawn is
// in flight is told after its OPENED.
func (s *Sidecar) signalRefused(id string, err error) {
	s.logf("%v", err)
	if t := s.lookup(id); t != nil {
		msg := err.Error()
		s.act(t, func() { t.sendIfLive(proto.TypeError, proto.Error{TerminalID: t.id, Message: msg}) })
	}
}

// signal delivers sig (named as the host named it) to the terminal's
// foreground process group, or to the child alone when child is set,
// unless the child was already reaped (its ids may be a stranger's then).
// A signal the platform has no meaning for (on Windows, all but INT, HUP,
// TERM and KILL) is refused with an ERROR, as an unknown name is: the host
// must not take it for delivered. Other failures (the child exiting
// meanwhile) are only logged.
func (t *terminal) signal(sig syscall.Signal, name string, child bool) {
	var err error
	t.ifLive(func() {
		if child {
			err = t.proc.Signal(sig)
		} else {
			err = t.proc.SignalForeground(sig)
		}
	})
	if err == nil {
		return
	}
	t.sc.logf("terminal %q: %v", t.id, err)
	if errors.Is(err, ptyhost.ErrNotSupported) {
		t.sendIfLive(proto.TypeError, proto.Error{TerminalID: t.id, Message: fmt.Sprintf("SIGNAL %s: %v", name, err)})
	}
}

// reportForeground answers FOREGROUND with the foreground group's id and
// leader name; after the child is reaped nothing is sent, as EXIT is on its
// way (the host settles its pending question there). The group is read
// under mu, while it cannot have been reaped; the answer is sent after mu
// is released (see sendIfLive for why it still cannot follow EXIT).
func (t *terminal) reportForeground() {
	info := proto.ForegroundInfo{TerminalID: t.id}
	asked := t.ifLive(func() {
		if pgrp, name, err := t.proc.ForegroundProcess(); err == nil {
			info.PID, info.Process = pgrp, name
		} else if pgrp > 0 {
			info.PID = pgrp
		}
	})
	if asked {
		t.sc.out.queueControl(t, proto.TypeForegroundInfo, info)
	}
}

// sendIfLive queues a control frame about t unless its child was reaped.
//
// The send happens after mu is released, because it may wait for room in
// the writer for as long as the host does not read, and mu must stay free
// for CLOSE, signals and the reap meanwhile. So the child may be reaped,
// and EXIT queued, between the check and the send; the frame still never
// follows EXIT on the wire, because the writer drops every frame of a
// terminal whose EXIT it has written (writer.write), and a terminal's
// frames reach the writer's stream in the order they were queued.
func (t *terminal) sendIfLive(typ proto.Type, v any) {
	if t.ifLive(func() {}) {
		t.sc.out.queueControl(t, typ, v)
	}
}
