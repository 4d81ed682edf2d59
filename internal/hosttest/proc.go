package hosttest

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// WaitGone waits until process pid has exited (zombies count as exited) or
// d passes, and reports whether it exited. It waits on a pidfd, which works
// for any process, not only our children.
func WaitGone(pid int, d time.Duration) bool {
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
			return !Alive(pid)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int(left.Milliseconds())+1)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n > 0 {
			return n > 0 || !Alive(pid)
		}
	}
}
