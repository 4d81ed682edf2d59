//go:build unix

package ptyhost

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoForeground reports a terminal without a foreground process group of
// its own session (the session leader has exited, or the PTY is closed).
var ErrNoForeground = errors.New("no foreground process group")

// Foreground returns the id of the PTY's foreground process group. It
// checks that the group belongs to the child's session, so a stale or
// foreign group id is never returned.
func (p *Process) Foreground() (int, error) {
	var pgrp int
	err := control(p.master, func(fd int) (err error) {
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("tcgetpgrp: %w", err)
	}
	if pgrp <= 0 {
		return 0, ErrNoForeground
	}
	// The group leader may have exited while the group lives on; then
	// getsid fails and we cannot vouch for the id.
	if sid, err := unix.Getsid(pgrp); err != nil || sid != p.pid {
		return 0, ErrNoForeground
	}
	return pgrp, nil
}

// SignalForeground sends sig to the PTY's foreground process group, as the
// line discipline does for ^C. When that group cannot be identified as one
// of the child's session, the child's own process group gets the signal.
// Call it only before the child is reaped (its pid is ours until then).
func (p *Process) SignalForeground(sig syscall.Signal) error {
	pgrp, err := p.Foreground()
	if err != nil {
		pgrp = p.pid
	}
	if err := unix.Kill(-pgrp, sig); err != nil {
		return fmt.Errorf("signal process group %d: %w", pgrp, err)
	}
	return nil
}

// ForegroundProcess returns the foreground process group's id and its
// leader's name: argv[0] as the program set it, or the kernel's command
// name when that is empty (node-pty reports the same).
func (p *Process) ForegroundProcess() (pgrp int, name string, err error) {
	if pgrp, err = p.Foreground(); err != nil {
		return 0, "", err
	}
	name, err = processName(pgrp)
	if err != nil {
		return pgrp, "", fmt.Errorf("name of process %d: %w", pgrp, err)
	}
	return pgrp, name, nil
}
