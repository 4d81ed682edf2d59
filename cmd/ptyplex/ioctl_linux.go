//go:build unix

package main

import "golang.org/x/sys/unix"

// tcgetattr's and tcsetattr's ioctls.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)
