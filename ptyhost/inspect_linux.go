package ptyhost

import "golang.org/x/sys/unix"

// forbidInspection makes this process non-dumpable: processes of the same
// user can no longer open its /proc/PID/fd entries or read its memory.
func forbidInspection() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
