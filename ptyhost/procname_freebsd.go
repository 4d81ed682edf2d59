package ptyhost

import (
	"bytes"
	"errors"

	"golang.org/x/sys/unix"
)

// processName returns pid's argv[0], read through the kern.proc.args
// sysctl (FreeBSD has no /proc by default), which answers the NUL-separated
// argument vector.
func processName(pid int) (string, error) {
	b, err := unix.SysctlRaw("kern.proc.args", pid)
	if err != nil {
		return "", err
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	if len(b) == 0 {
		return "", errors.New("kern.proc.args: empty argument vector")
	}
	return string(b), nil
}
