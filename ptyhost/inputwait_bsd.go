//go:build darwin || freebsd

package ptyhost

import "errors"

// errNoTaskView: macOS and FreeBSD do not expose another process's
// blocking system call and its arguments without a debugger, so the
// session face falls back to its quiet period there.
var errNoTaskView = errors.New("the process table does not say what a task is blocked in on this platform")

func groupInputState(pgrp int, tty string) (InputState, error) {
	return InputUnknown, errNoTaskView
}
