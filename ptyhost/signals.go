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
// ignores SIGHUP; some supervisors ignore SIGINT or SIGPIPE). execve keeps
// SIG_IGN but resets caught signals to SIG_DFL, so the fix is to catch every
// signal that is ignored here. The catching channel is never drained, so for
// this process the signals stay as good as ignored.
func resetInheritedSignals() {
	resetOnce.Do(func() {
		sink := make(chan os.Signal, 1)
		for sig := syscall.Signal(1); sig < 32; sig++ {
			if sig == syscall.SIGKILL || sig == syscall.SIGSTOP {
				continue
			}
			if signal.Ignored(sig) {
				signal.Notify(sink, sig)
			}
		}
	})
}
