package sidecar

import (
	"fmt"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/signame"
	"github.com/ptyplex/ptyplex/proto"
)

// dispatchExtension serves the frame types added after the seed protocol
// (SIGNAL, FOREGROUND) and drops every other unknown type, so that newer
// hosts can still talk to us.
func (s *Sidecar) dispatchExtension(f proto.Frame) {
	switch f.Type {
	case proto.TypeSignal:
		sg, err := proto.ParseSignal(f.Body)
		if err == nil {
			var sig syscall.Signal
			if sig, _, err = signame.Parse(sg.Signal); err == nil {
				if t := s.lookup(sg.TerminalID); t != nil {
					s.act(t, func() { t.signalForeground(sig) })
				}
				return
			}
			err = fmt.Errorf("SIGNAL: %w", err)
		}
		s.logf("%v", err)
		// Only a live terminal is told: an ERROR for a pending or unknown
		// id would read as the answer to an OPEN. One whose spawn is in
		// flight is told after its OPENED.
		if t := s.lookup(sg.TerminalID); t != nil {
			msg := err.Error()
			s.act(t, func() { t.sendIfLive(proto.TypeError, proto.Error{TerminalID: t.id, Message: msg}) })
		}
	case proto.TypeForeground:
		q, err := proto.ParseForeground(f.Body)
		if err != nil {
			s.logf("%v", err)
			return
		}
		if t := s.lookup(q.TerminalID); t != nil {
			s.act(t, t.reportForeground)
		}
	}
}

// signalForeground delivers sig to the terminal's foreground process group
// unless the child was already reaped (its ids may be a stranger's then).
func (t *terminal) signalForeground(sig syscall.Signal) {
	t.ifLive(func() {
		if err := t.proc.SignalForeground(sig); err != nil {
			t.sc.logf("terminal %q: %v", t.id, err)
		}
	})
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
