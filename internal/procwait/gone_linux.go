//go:build unix

package procwait

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Gone waits until process pid has exited or d passes, and reports whether
// it exited.
func Gone(pid int, d time.Duration) bool {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return true
	}
	if err != nil {
		return !Alive(pid)
	}
	defer unix.Close(fd)
	deadline := time.Now().Add(d)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0 // one last look
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return n > 0 || !Alive(pid)
		}
		if !time.Now().Before(deadline) {
			return false
		}
	}
}
