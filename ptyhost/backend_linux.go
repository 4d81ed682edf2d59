//go:build linux && !ptyplex_portable

package ptyhost

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The Linux backend: a pidfd per child, the parent-death signal, and /proc
// scans for the session teardown.

const backendName = "linux"

var host backend = linuxBackend{}

type linuxBackend struct{}

func (linuxBackend) spawn(s spawnSpec) (child, error) {
	pidfd := -1
	// If we die without tearing down, take the child with us.
	pdeath := syscall.SIGKILL
	if s.noPdeath {
		pdeath = 0
	}
	proc, err := os.StartProcess(s.path, s.argv, &os.ProcAttr{
		Dir:   s.dir,
		Env:   s.env,
		Files: []*os.File{s.tty, s.tty, s.tty},
		Sys: &syscall.SysProcAttr{
			Setsid:    true,
			Setctty:   true,
			Ctty:      0, // fd 0 in the child, which is the slave
			Pdeathsig: pdeath,
			PidFD:     &pidfd,
		},
	})
	if err != nil {
		return nil, err
	}
	c := &pidfdChild{id: proc.Pid}
	// We wait through our own pidfd; the os package's handle is not needed.
	proc.Release()
	if pidfd < 0 {
		// Kernels without CLONE_PIDFD: open one; the child is not reaped
		// yet, so its pid cannot have been reused.
		if pidfd, err = unix.PidfdOpen(c.id, 0); err != nil {
			killAndReap(c.id)
			return nil, fmt.Errorf("pidfd_open %d: %w", c.id, err)
		}
	}
	if err := unix.SetNonblock(pidfd, true); err != nil {
		unix.Close(pidfd)
		killAndReap(c.id)
		return nil, fmt.Errorf("pidfd nonblock: %w", err)
	}
	c.pidfd = os.NewFile(uintptr(pidfd), "pidfd")
	return c, nil
}

// adopt opens a pidfd on a child of ours, running or a zombie: until we
// reap it its pid cannot be reused, so the pidfd is the child's.
func (linuxBackend) adopt(pid int) (child, error) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return nil, fmt.Errorf("pidfd_open %d: %w", pid, err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pidfd nonblock: %w", err)
	}
	unix.CloseOnExec(fd)
	return &pidfdChild{id: pid, pidfd: os.NewFile(uintptr(fd), "pidfd")}, nil
}

func (linuxBackend) killSession(sid int, pts string, sig syscall.Signal, holders bool) int {
	if !holders {
		return sessionKills.kill(sid, sig)
	}
	return killSessionProc(sid, pts, sig, holders)
}

// pidfdChild waits for its child through a pidfd, which turns readable
// when the child exits.
type pidfdChild struct {
	id    int
	pidfd *os.File
}

func (c *pidfdChild) pid() int { return c.id }

func (c *pidfdChild) signal(sig syscall.Signal) error {
	return control(c.pidfd, func(fd int) error { return unix.PidfdSendSignal(fd, sig, nil, 0) })
}

func (c *pidfdChild) waitExit() (Status, error) {
	rc, err := c.pidfd.SyscallConn()
	if err != nil {
		return Status{}, err
	}
	var info unix.Siginfo
	var werr error
	err = rc.Read(func(fd uintptr) bool {
		werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if werr != nil {
			return true
		}
		// With WNOHANG the kernel leaves the siginfo zeroed while the
		// child runs; then wait for the pidfd to turn readable (on exit).
		return info.Signo != 0
	})
	if err != nil {
		return Status{}, err
	}
	if werr != nil {
		return Status{}, fmt.Errorf("waitid %d: %w", c.id, werr)
	}
	return statusOfSiginfo(&info), nil
}

func (c *pidfdChild) reap() (Status, error) { return wait4(c.id) }

func (c *pidfdChild) close() { c.pidfd.Close() }
