package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe enlarges stdout's pipe buffer when stdout is a pipe, so a
// flooding terminal costs the host fewer wake-ups per MiB. Best effort: the
// kernel caps it (/proc/sys/fs/pipe-max-size) and other stdouts refuse it.
func growPipe(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.FcntlInt(fd, unix.F_SETPIPE_SZ, 256<<10)
	})
}
