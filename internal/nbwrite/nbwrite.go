//go:build unix

// Package nbwrite writes to a descriptor in the runtime's poller without
// ever parking: for callers (a dispatch loop, a PTY reader answering a
// waiter) that must not block on a slow peer but want small writes on
// their way at once, and queue the rest themselves.
package nbwrite

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Write writes as much of b as the descriptor takes now and returns how
// much that was: all of it when the peer keeps up, less (with a nil
// error) when its buffer is full.
func Write(rc syscall.RawConn, b []byte) (int, error) {
	n := 0
	var werr error
	err := rc.Write(func(fd uintptr) bool {
		for n < len(b) {
			m, err := unix.Write(int(fd), b[n:])
			switch {
			case m > 0:
				n += m
			case err == unix.EINTR:
			case err == unix.EAGAIN:
				return true // full: never wait for the poller
			default:
				werr = err
				return true
			}
		}
		return true
	})
	if err != nil {
		return n, err
	}
	return n, werr
}
