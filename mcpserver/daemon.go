//go:build unix

package mcpserver

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"
)

// daemon is the server's hold on a session daemon it started, from the
// moment `ptyplex start` reported its pid: a pidfd on Linux, a kqueue
// watching for its exit on macOS and FreeBSD. A bare pid is not enough.
// A daemon may end by itself (its idle exit) long before the server
// stops it, and its pid may then belong to any other process, another
// user's included when the server runs as root. A signal sent through
// the hold reaches the daemon or nobody.
type daemon struct {
	pid int
	mu  sync.Mutex
	h   *procHold // nil once released
}

// errDaemonGone says the daemon has exited: there is nothing to signal.
var errDaemonGone = errors.New("the daemon has exited")

// holdDaemon takes a hold on the daemon with this pid that serves socket.
// `ptyplex start` has returned by now, so the daemon could in principle
// have died and its pid been reused; the hold is kept only once the
// socket shows that its server is still the process held (see
// checkHeld), so a hold never names a stranger. A daemon that is already
// gone (a quick program and a short idle exit) gets an empty hold, which
// reports it exited and signals nobody.
func holdDaemon(pid int, socket string) (*daemon, error) {
	h, err := openHold(pid)
	if err == errDaemonGone {
		return &daemon{pid: pid}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hold daemon pid %d: %w", pid, err)
	}
	if err := checkHeld(h, pid, socket); err != nil {
		// A daemon that has removed its socket is on its way out: if the
		// held process exits soon, that was it, and it is gone.
		gone := h.wait(heldExitTimeout)
		h.close()
		if gone {
			return &daemon{pid: pid}, nil
		}
		return nil, fmt.Errorf("hold daemon pid %d: %w", pid, err)
	}
	return &daemon{pid: pid, h: h}, nil
}

// heldExitTimeout is how long holdDaemon gives a daemon whose socket it
// could not check to finish exiting.
const heldExitTimeout = 2 * time.Second

// checkHeld makes sure the held process is the daemon behind socket. A
// connection that succeeds after the hold was taken proves the socket's
// listener alive then, and its pid (the kernel records the listener's
// at listen time) was its own from before `start` reported it until
// now; a held process that has not exited had that pid in that time as
// well, so they are one process. (On macOS and FreeBSD, where x/sys
// gives no peer pid, the listener is taken to be the daemon `start`
// reported: nobody else can listen on a socket it still holds.)
func checkHeld(h *procHold, pid int, socket string) error {
	c, err := net.DialTimeout("unix", socket, 5*time.Second)
	if err != nil {
		return fmt.Errorf("its socket: %w", err)
	}
	defer c.Close()
	if p, err := listenerPID(c.(*net.UnixConn)); err != nil {
		return fmt.Errorf("who serves %s: %w", socket, err)
	} else if p != 0 && p != pid {
		return fmt.Errorf("%s is served by pid %d, not by the daemon start reported", socket, p)
	}
	if h.exited() {
		return errDaemonGone
	}
	return nil
}

// exited reports whether the daemon has exited (a zombie has). Without a
// hold it cannot tell, and says so: it reports true, so that nothing is
// signalled.
func (d *daemon) exited() bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.h == nil || d.h.exited()
}

// signal sends sig to the daemon, or returns errDaemonGone.
func (d *daemon) signal(sig syscall.Signal) error {
	if d == nil {
		return errDaemonGone
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h == nil {
		return errDaemonGone
	}
	return d.h.signal(sig)
}

// waitExit waits up to timeout for the daemon to exit, and reports whether
// it did.
func (d *daemon) waitExit(timeout time.Duration) bool {
	if d == nil {
		return true
	}
	d.mu.Lock()
	h := d.h
	d.mu.Unlock()
	if h == nil {
		return true
	}
	return h.wait(timeout)
}

// release gives the hold up; the daemon is not signalled again.
func (d *daemon) release() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.h != nil {
		d.h.close()
		d.h = nil
	}
}
