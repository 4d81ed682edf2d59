//go:build unix && !linux

package main

import (
	"errors"
	"runtime"
)

// serverPid needs the listener's credentials (SO_PEERCRED), which only
// Linux gives this way; the rows that use it are Linux's.
func serverPid(dir string) (int, error) {
	return 0, errors.New("the persistent server's pid is read with SO_PEERCRED, which " + runtime.GOOS + " lacks")
}

// cpuSeconds reads /proc, which only Linux has in this form.
func cpuSeconds(pid int) (float64, error) {
	return 0, errors.New("CPU time is read from /proc/PID/stat, which " + runtime.GOOS + " lacks")
}
