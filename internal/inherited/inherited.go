//go:build unix

// Package inherited closes the descriptors a program was started with
// beyond stdin, stdout and stderr.
//
// A shell passes on every descriptor that is not close-on-exec (a script's
// `exec 7>fifo`, a pipe its caller waits on), and Go's os/exec does not
// close them in the children it starts. A long-lived process such as the
// session daemon or the sidecar would keep them open for as long as it
// runs and hand them on to the programs in its terminals, so a caller
// waiting for end of file on such a pipe would wait for ever, and the
// program in the terminal could read or write what it was never given.
package inherited

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Close closes every descriptor above 2 that is open without close-on-exec,
// except those in keep, and returns the ones it closed. Call it first thing
// in main: Go opens all of its own descriptors close-on-exec, so at that
// point a descriptor without the flag can only have come from our parent.
func Close(keep ...int) ([]int, error) {
	fds, err := openFDs()
	if err != nil {
		return nil, err
	}
	var closed []int
	for _, fd := range fds {
		if fd <= 2 || contains(keep, fd) {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // gone meanwhile, or one of ours
		}
		if err := unix.Close(fd); err == nil {
			closed = append(closed, fd)
		}
	}
	return closed, nil
}

// openFDs lists the open descriptors: from /proc/self/fd on Linux, and by
// asking each possible number elsewhere (FreeBSD's /dev/fd shows only 0-2
// without fdescfs).
func openFDs() ([]int, error) {
	if runtime.GOOS == "linux" {
		f, err := os.Open("/proc/self/fd")
		if err != nil {
			return nil, fmt.Errorf("list inherited descriptors: %w", err)
		}
		names, err := f.Readdirnames(-1)
		f.Close() // its own descriptor is close-on-exec, so never in the way
		if err != nil {
			return nil, fmt.Errorf("list inherited descriptors: %w", err)
		}
		fds := make([]int, 0, len(names))
		for _, n := range names {
			if fd, err := strconv.Atoi(n); err == nil {
				fds = append(fds, fd)
			}
		}
		return fds, nil
	}
	var lim unix.Rlimit
	max := 1 << 16
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && uint64(lim.Cur) < uint64(max) {
		max = int(lim.Cur)
	}
	var fds []int
	for fd := 3; fd < max; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			fds = append(fds, fd)
		}
	}
	return fds, nil
}

func contains(list []int, v int) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}
