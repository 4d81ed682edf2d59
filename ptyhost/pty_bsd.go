//go:build darwin || freebsd

package ptyhost

import (
	"fmt"
	"os"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPTY opens a PTY pair and returns a master that is registered with the
// runtime poller. pty.Open hands back a master in blocking mode (its ioctls
// go through File.Fd), where every Read would pin an OS thread and Close
// could not interrupt it; a non-blocking duplicate fixes both.
func openPTY() (master, tty *os.File, err error) {
	m, tty, err := pty.Open()
	if err != nil {
		return nil, nil, fmt.Errorf("open pty: %w", err)
	}
	fd, err := unix.FcntlInt(m.Fd(), unix.F_DUPFD_CLOEXEC, 0)
	m.Close()
	if err != nil {
		tty.Close()
		return nil, nil, fmt.Errorf("dup pty master: %w", err)
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		tty.Close()
		return nil, nil, fmt.Errorf("pty master non-blocking: %w", err)
	}
	return os.NewFile(uintptr(fd), "/dev/ptmx"), tty, nil
}
