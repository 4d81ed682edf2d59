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
	pgrp, _, err := p.foreground()
	return pgrp, err
}

// foreground is Foreground with a live member of the group: its leader,
// or, once the leader has exited while the group lives on (a pipeline
// whose first process ended: `seq 100 | less`, `true | prog`), another
// process of the group.
func (p *Process) foreground() (pgrp, member int, err error) {
	err = control(p.master, func(fd int) (err error) {
		pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("tcgetpgrp: %w", err)
	}
	if pgrp <= 0 {
		return 0, 0, ErrNoForeground
	}
	if sid, err := unix.Getsid(pgrp); err == nil {
		if sid != p.pid {
			return 0, 0, ErrNoForeground
		}
		return pgrp, pgrp, nil
	}
	// The leader is gone (getsid fails on it): the group is ours if a
	// process of the child's session still belongs to it. A process's
	// group can only be one of its own session's, so a member found there
	// vouches for the id.
	if m, ok := p.groupMember(pgrp); ok {
		return pgrp, m, nil
	}
	return 0, 0, ErrNoForeground
}

// groupMember returns a live process of the child's session whose process
// group is pgrp.
func (p *Process) groupMember(pgrp int) (int, bool) {
	procs, err := sessionProcs(map[int]bool{p.pid: true})
	if err != nil {
		return 0, false
	}
	for _, pr := range procs {
		if pr.zombie {
			continue
		}
		if g, err := unix.Getpgid(pr.pid); err == nil && g == pgrp {
			return pr.pid, true
		}
	}
	return 0, false
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
// leader's name (another member's once the leader has exited): argv[0]
// as the program set it, or the kernel's command name when that is empty
// (node-pty reports the same).
func (p *Process) ForegroundProcess() (pgrp int, name string, err error) {
	var member int
	if pgrp, member, err = p.foreground(); err != nil {
		return 0, "", err
	}
	name, err = processName(member)
	if err != nil {
		return pgrp, "", fmt.Errorf("name of process %d: %w", member, err)
	}
	return pgrp, name, nil
}
