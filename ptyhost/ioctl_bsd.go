//go:build darwin || freebsd

package ptyhost

import "golang.org/x/sys/unix"

// tcgetattr's and tcsetattr's ioctls.
const (
	ioctlGetTermios = unix.TIOCGETA
	ioctlSetTermios = unix.TIOCSETA
)
