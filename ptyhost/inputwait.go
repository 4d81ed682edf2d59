//go:build unix

package ptyhost

import (
	"fmt"
)

// InputState says whether a terminal's foreground program is blocked
// waiting to read its terminal, as far as the platform's process table can
// tell.
type InputState int

const (
	// InputUnknown: the platform (or a process's permissions) does not let
	// us see what the foreground tasks are blocked in. Callers fall back to
	// a quiet period.
	InputUnknown InputState = iota
	// InputWaiting: every task of the foreground process group is asleep,
	// and at least one is blocked in a read, poll, select or epoll wait
	// that includes the terminal.
	InputWaiting
	// InputBusy: a foreground task is running, or they are all asleep in
	// something other than a wait on the terminal (a sleep, a pipe, a
	// child, the disk).
	InputBusy
)

func (s InputState) String() string {
	switch s {
	case InputWaiting:
		return "waiting"
	case InputBusy:
		return "busy"
	default:
		return "unknown"
	}
}

// InputState looks at the PTY's foreground process group: all its
// processes and all their threads. It answers for the moment of the call;
// a caller that wants "waiting and quiet" also checks that no output
// arrived in between.
func (p *Process) InputState() (InputState, error) {
	pgrp, err := p.Foreground()
	if err != nil {
		return InputUnknown, err
	}
	st, err := groupInputState(pgrp, p.pts)
	if err != nil {
		return InputUnknown, fmt.Errorf("foreground group %d: %w", pgrp, err)
	}
	return st, nil
}
