//go:build darwin || freebsd

package ptyhost

import "errors"

// errNoTaskView: macOS and FreeBSD do not expose another process's
// blocking system call and its arguments without a debugger, so the
// session face falls back to its quiet period there (docs/platforms.md,
// "Waiting for input"). FreeBSD's process table has a wait message
// (kinfo_proc's ki_wmesg, "ttyin" for a read of the terminal), but
// golang.org/x/sys has no KinfoProc for FreeBSD, and laying the struct
// out by hand for each architecture, with no FreeBSD machine to test it
// on, would be guessing; macOS's has no reliable wait message at all
// (its wmesg is left empty for most sleeps).
var errNoTaskView = errors.New("the process table does not say what a task is blocked in on this platform")

func groupInputState(pgrp int, tty string) (InputState, error) {
	return InputUnknown, errNoTaskView
}
