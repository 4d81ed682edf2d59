package ptyhost

import (
	"bytes"

	"golang.org/x/sys/unix"
)

// processName returns the kernel's command name of pid (macOS has no
// /proc; the sysctl's p_comm holds the first 16 bytes of the program name).
func processName(pid int) (string, error) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return "", err
	}
	c := kp.Proc.P_comm[:]
	if i := bytes.IndexByte(c, 0); i >= 0 {
		c = c[:i]
	}
	return string(c), nil
}
