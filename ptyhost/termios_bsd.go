//go:build darwin || freebsd

package ptyhost

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// nodePtyPlatform sets what node-pty's termios has on the BSDs beyond the
// common part: the speed, and on macOS ^Y and ^T (VDSUSP, VSTATUS).
func nodePtyPlatform(t *unix.Termios) {
	t.Ispeed, t.Ospeed = unix.B38400, unix.B38400
	if runtime.GOOS == "darwin" {
		t.Cc[unix.VDSUSP] = 25
		t.Cc[unix.VSTATUS] = 20
	}
}
