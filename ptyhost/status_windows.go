package ptyhost

import (
	"strconv"
	"syscall"

	"github.com/ptyplex/ptyplex/internal/signame"
)

// Status is how a child ended.
type Status struct {
	// Code is the process's exit code. On Windows that is a 32-bit
	// unsigned number (0xC0000005 for an access violation); it is carried
	// as it is, never wrapped to a negative number. A tree ended by a
	// signal name (see Signal) exits with 128+signal, as on Unix.
	Code int
	// Signal is the signal whose Windows meaning ended the child (TERM,
	// HUP, KILL end its job), or 0 when it exited by itself.
	Signal syscall.Signal
}

// SignalName is the conventional name of the fatal signal ("SIGKILL"), or ""
// when the child exited normally.
func (s Status) SignalName() string {
	if s.Signal == 0 {
		return ""
	}
	_, name, err := signame.Parse(strconv.Itoa(int(s.Signal)))
	if err != nil {
		return ""
	}
	return name
}
