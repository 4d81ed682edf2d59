package main

import (
	"net"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// serverPid asks the kernel who listens on the run's socket.
func serverPid(dir string) (int, error) {
	c, err := net.Dial("unix", filepath.Join(dir, "sidecar", "bench.sock"))
	if err != nil {
		return 0, err
	}
	defer c.Close()
	rc, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		return 0, err
	}
	pid := 0
	rc.Control(func(fd uintptr) {
		if cr, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); err == nil {
			pid = int(cr.Pid)
		}
	})
	return pid, nil
}
