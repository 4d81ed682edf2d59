//go:build unix

package ptyhost

import "golang.org/x/sys/unix"

// Status is how a child ended.
type Status struct {
	Code   int         // exit status, or 128+signal for a signal death
	Signal unix.Signal // the signal that killed it, or 0
}

// SignalName is the conventional name of the fatal signal ("SIGKILL"), or ""
// when the child exited normally.
func (s Status) SignalName() string {
	if s.Signal == 0 {
		return ""
	}
	return unix.SignalName(s.Signal)
}

func statusOf(ws unix.WaitStatus) Status {
	if ws.Signaled() {
		return Status{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	return Status{Code: ws.ExitStatus()}
}
