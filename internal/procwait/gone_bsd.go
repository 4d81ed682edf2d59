//go:build darwin || freebsd

package procwait

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Gone waits until process pid has exited or d passes, and reports whether
// it exited. A kqueue EVFILT_PROC NOTE_EXIT filter fires on exit for any
// process we may see, child or not.
func Gone(pid int, d time.Duration) bool {
	kq, err := unix.Kqueue()
	if err != nil {
		return !Alive(pid)
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{}}
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev[0].Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		// ESRCH: gone already, or a zombie (which has exited).
		return errors.Is(err, unix.ESRCH) || !Alive(pid)
	}
	deadline := time.Now().Add(d)
	out := make([]unix.Kevent_t, 1)
	for {
		left := time.Until(deadline)
		if left < 0 {
			left = 0 // one last look
		}
		ts := unix.NsecToTimespec(left.Nanoseconds())
		n, err := unix.Kevent(kq, nil, out, &ts)
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
