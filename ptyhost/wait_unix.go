//go:build darwin || freebsd || linux

package ptyhost

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// wait4 reaps pid, blocking while it runs.
func wait4(pid int) (Status, error) {
	var ws unix.WaitStatus
	for {
		_, err := unix.Wait4(pid, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Status{}, fmt.Errorf("wait4 %d: %w", pid, err)
		}
		return statusOf(ws), nil
	}
}

// killAndReap ends a child that we could not finish setting up.
func killAndReap(pid int) {
	unix.Kill(pid, unix.SIGKILL)
	wait4(pid)
}
