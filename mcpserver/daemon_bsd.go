//go:build darwin || freebsd

package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// procHold is a kqueue with an EVFILT_PROC NOTE_EXIT filter on the
// daemon. The filter stays with the process it was added for and fires
// when that process exits, so as long as it has not fired the pid still
// names the daemon: a pid is reused only after its process exited. There
// is a window between the check and kill(2) that a pidfd does not have;
// the daemon would have to exit and its pid be reused inside it.
type procHold struct {
	mu   sync.Mutex
	kq   int
	pid  int
	done bool
}

func openHold(pid int) (*procHold, error) {
	kq, err := unix.Kqueue()
	if err != nil {
		return nil, fmt.Errorf("kqueue: %w", err)
	}
	ev := []unix.Kevent_t{{}}
	unix.SetKevent(&ev[0], pid, unix.EVFILT_PROC, unix.EV_ADD|unix.EV_ONESHOT)
	ev[0].Fflags = unix.NOTE_EXIT
	if _, err := unix.Kevent(kq, ev, nil, nil); err != nil {
		unix.Close(kq)
		if errors.Is(err, unix.ESRCH) {
			return nil, errDaemonGone
		}
		return nil, fmt.Errorf("kevent EVFILT_PROC: %w", err)
	}
	return &procHold{kq: kq, pid: pid}, nil
}

func (h *procHold) exited() bool { return h.wait(0) }

func (h *procHold) wait(timeout time.Duration) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done || h.kq < 0 {
		return true
	}
	deadline := time.Now().Add(timeout)
	out := make([]unix.Kevent_t, 1)
	for {
		left := max(time.Until(deadline), 0)
		ts := unix.NsecToTimespec(left.Nanoseconds())
		n, err := unix.Kevent(h.kq, nil, out, &ts)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if n > 0 {
			h.done = true
			return true
		}
		if left == 0 || !time.Now().Before(deadline) {
			return false
		}
	}
}

func (h *procHold) signal(sig syscall.Signal) error {
	if h.wait(0) {
		return errDaemonGone
	}
	return unix.Kill(h.pid, sig)
}

func (h *procHold) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kq >= 0 {
		unix.Close(h.kq)
		h.kq = -1
	}
}

// listenerPID is 0 (unknown): the xucred x/sys decodes carries no pid.
func listenerPID(c *net.UnixConn) (int, error) { return 0, nil }
