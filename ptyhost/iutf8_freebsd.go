package ptyhost

// iutf8 is 0: FreeBSD's terminal driver has no IUTF8 (see Config.UTF8).
const iutf8 = 0

// iflagBits converts a flag to the type of Termios.Iflag here.
func iflagBits(f uint32) uint32 { return f }
