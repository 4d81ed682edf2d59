package ptyhost

import (
	"bytes"
	"os"
	"strconv"
)

// processName reads argv[0] of pid from /proc, falling back to the
// kernel's command name (comm) for processes with an empty argv.
func processName(pid int) (string, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/"
	if b, err := os.ReadFile(dir + "cmdline"); err == nil {
		if i := bytes.IndexByte(b, 0); i > 0 {
			return string(b[:i]), nil
		} else if i < 0 && len(b) > 0 {
			return string(b), nil
		}
	}
	b, err := os.ReadFile(dir + "comm")
	if err != nil {
		return "", err
	}
	return string(bytes.TrimRight(b, "\n")), nil
}
