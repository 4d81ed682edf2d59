//go:build unix

package ptyhost

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var resetOnce sync.Once

// resetInheritedSignals makes sure children start with default signal
// dispositions even when we were started with some signals ignored (nohup
// ignores SIGHUP; a shell's background job ignores SIGINT and SIGQUIT).
// execve keeps SIG_IGN but resets caught signals to SIG_DFL, so the fix is
// to catch every signal that is ignored here. The catching channel is never
// drained, so for this process those signals stay as good as ignored.
//
// The ignored set is read from the kernel (/proc on Linux, kern.proc on
// macOS and FreeBSD) rather than signal.Ignored: the Go runtime does not
// track job-control signals (SIGTSTP, SIGTTIN, SIGTTOU) it never installed
// a handler for.
func resetInheritedSignals() {
	resetOnce.Do(func() {
		ignored, err := ignoredSignals()
		if err != nil {
			return
		}
		sink := make(chan os.Signal, 1)
		for sig := syscall.Signal(1); sig < 65; sig++ {
			if ignored&(1<<(sig-1)) != 0 && sig != syscall.SIGKILL && sig != syscall.SIGSTOP {
				signal.Notify(sink, sig)
			}
		}
	})
}
