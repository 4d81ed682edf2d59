//go:build unix

package ptyhost

import (
	"golang.org/x/sys/unix"

	"github.com/ptyplex/ptyplex/internal/signame"
)

// Status is how a child ended.
type Status struct {
	Code   int         // exit status, or 128+signal for a signal death
	Signal unix.Signal // the signal that killed it, or 0
}

// SignalName is the conventional name of the fatal signal ("SIGKILL",
// "SIGRTMIN+3" as kill -l names the real-time ones), or "" when the child
// exited normally.
func (s Status) SignalName() string {
	return signame.Name(s.Signal)
}

func statusOf(ws unix.WaitStatus) Status {
	if ws.Signaled() {
		return Status{Code: 128 + int(ws.Signal()), Signal: ws.Signal()}
	}
	return Status{Code: ws.ExitStatus()}
}
