//go:build unix

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

// procHold is a pidfd: it names one process for as long as it is open,
// whatever later happens to the number, and turns readable when that
// process exits.
type procHold struct {
	// mu keeps close from closing the descriptor while wait polls it
	// (the number could be reused for another file).
	mu sync.RWMutex
	fd int
}

func openHold(pid int) (*procHold, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil, errDaemonGone
	}
	if err != nil {
		return nil, fmt.Errorf("pidfd_open: %w", err)
	}
	return &procHold{fd: fd}, nil
}

func (h *procHold) exited() bool { return h.wait(0) }

// wait polls the pidfd until it turns readable (the process exited) or
// timeout passes.
func (h *procHold) wait(timeout time.Duration) bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.fd < 0 {
		return true
	}
	deadline := time.Now().Add(timeout)
	for {
		left := max(time.Until(deadline), 0)
		fds := []unix.PollFd{{Fd: int32(h.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, int((left+time.Millisecond-1)/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false // cannot tell: do not claim it exited
		}
		if n > 0 {
			return true
		}
		if left == 0 || !time.Now().Before(deadline) {
			return false
		}
	}
}

func (h *procHold) signal(sig syscall.Signal) error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	err := unix.PidfdSendSignal(h.fd, sig, nil, 0)
	if errors.Is(err, unix.ESRCH) {
		return errDaemonGone
	}
	return err
}

func (h *procHold) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.fd >= 0 {
		unix.Close(h.fd)
		h.fd = -1
	}
}

// listenerPID is the pid SO_PEERCRED recorded for the socket's listener.
func listenerPID(c *net.UnixConn) (int, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := rc.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	return int(cred.Pid), nil
}
