//go:build unix

package hosttest

import (
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
)

// WaitGone waits until process pid has exited (zombies count as exited) or
// d passes, and reports whether it exited. It waits on a pidfd (kqueue on
// macOS and FreeBSD), which works for any process, not only our children.
func WaitGone(pid int, d time.Duration) bool { return procwait.Gone(pid, d) }

// Alive reports whether a process exists and is not a zombie.
func Alive(pid int) bool { return procwait.Alive(pid) }
