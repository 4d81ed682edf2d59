package ptyhost

import "golang.org/x/sys/unix"

// tcgetattr's and tcsetattr's ioctls.
const (
	ioctlGetTermios = unix.TCGETS
	ioctlSetTermios = unix.TCSETS
)

// iutf8 is the IUTF8 input flag (see Config.UTF8).
const iutf8 = unix.IUTF8

// iflagBits converts a flag to the type of Termios.Iflag here.
func iflagBits(f uint32) uint32 { return f }

// ioctlUnread counts the bytes waiting to be read (FIONREAD).
const ioctlUnread = unix.TIOCINQ
