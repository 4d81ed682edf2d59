package ptyhost

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// quickRead is read(2) on fd, a descriptor in non-blocking mode, made
// without telling the Go scheduler that a system call is under way, so
// the scheduler never hands this goroutine's P to another thread
// meanwhile; it falls back to unix.Read if fd is in blocking mode.
//
// Why, as measured (make bench's row of 64 detached terminals flooding
// their journals): a read of a PTY that has no output ready
// waits inside the kernel for the tty's flush worker, which on a busy
// machine waits for a CPU; with a plain system call, the runtime's
// monitor gave the waiting reader's P to another thread after 20 us,
// starting a new one when none was idle, and a thread is never ended.
// The persistent server grew to 55-68 threads for 64 flooding terminals
// (each with a 32 KiB signal stack and a 16 KiB system stack from the
// Go heap): with quickRead 10-11, and 1.6 MiB less RSS. A reader that
// waits keeps its P for that wait; the server has twice as many Ps as
// CPUs (cmd/ptyplex-sidecar/procs.go) for such waits.
//
// The blocking check is per call, one fcntl: a read that blocked here
// would hold its P until output came, and the collector, which stops
// every P, would wait with it. Our masters are opened non-blocking and
// nothing of ours puts them back (os.File.Fd would: MasterFD avoids it),
// but one handed over by another process is only as it was left.
func quickRead(fd int, b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	fl, _, errno := unix.RawSyscall(unix.SYS_FCNTL, uintptr(fd), unix.F_GETFL, 0)
	if errno != 0 || fl&unix.O_NONBLOCK == 0 {
		return unix.Read(fd, b)
	}
	n, _, errno := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)))
	if errno != 0 {
		return -1, errno
	}
	raceWrote(b[:n])
	return int(n), nil
}
