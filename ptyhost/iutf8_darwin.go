package ptyhost

import "golang.org/x/sys/unix"

// iutf8 is the IUTF8 input flag (see Config.UTF8).
const iutf8 = unix.IUTF8

// iflagBits converts a flag to the type of Termios.Iflag here.
func iflagBits(f uint32) uint64 { return uint64(f) }
