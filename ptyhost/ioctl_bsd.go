//go:build darwin || freebsd

package ptyhost

import "golang.org/x/sys/unix"

// tcgetattr's and tcsetattr's ioctls.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)

// ioctlUnread counts the bytes waiting to be read: FIONREAD, _IOR('f',
// 127, int) on both systems, which x/sys/unix does not export for them.
const ioctlUnread = 0x4004667f
