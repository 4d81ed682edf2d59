//go:build darwin || freebsd || linux

package ptyhost

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// setSize sets the window size through the poller-owned descriptor (never
// File.Fd, which would switch it back to blocking mode).
func setSize(master *os.File, cols, rows int) error {
	return setWinsize(master, cols, rows, 0, 0)
}

// setWinsize is setSize with the size in pixels too (0: unknown).
func setWinsize(master *os.File, cols, rows, xpixel, ypixel int) error {
	ws := &unix.Winsize{Col: clampSize(cols), Row: clampSize(rows), Xpixel: pixels(xpixel), Ypixel: pixels(ypixel)}
	err := control(master, func(fd int) error { return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, ws) })
	if err != nil {
		return fmt.Errorf("set pty size: %w", err)
	}
	return nil
}

// control runs fn on f's descriptor without changing its mode.
func control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
