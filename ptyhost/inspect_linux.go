package ptyhost

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// ForbidInspection makes this process non-dumpable: other processes of
// the same user can no longer open its /proc/PID/fd entries (and so
// reach the pipes and PTY masters it holds), read its memory or attach a
// debugger; root still can. execve(2) of an ordinary program makes a
// process dumpable again, so the programs a non-dumpable host starts in
// its terminals are not affected.
func ForbidInspection() error {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", err)
	}
	return nil
}
