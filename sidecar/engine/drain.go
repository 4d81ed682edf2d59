package engine

import (
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// Timing of a terminal's end.
const (
	// CloseGrace is how long a CLOSEd terminal has between SIGHUP and SIGKILL.
	CloseGrace = 3 * time.Second
	// DrainBound is how long the PTY may stay open after the child exited
	// before the rest of its session is killed: long enough to read what is
	// buffered, short enough that a leftover background job cannot hold
	// the EXIT back.
	DrainBound = 100 * time.Millisecond
	// HolderRetry paces the kills of processes that keep an unthrottled PTY
	// open; after HolderAttempts the PTY is hung up from our side.
	HolderRetry    = 500 * time.Millisecond
	HolderAttempts = 4
)

// Drain is a terminal's end after its child exited (and before it is
// reaped, so that its session id stays reserved): it waits for the
// reader to see the PTY's end, killing what is left of the session. The
// background jobs that do not hold the PTY are killed once it ended;
// ones that hold it are killed after DrainBound, and again, and at last
// the PTY is hung up from our side (ptyhost.Process.Hangup), since
// something we cannot find (a descriptor in flight in a socket, a
// process we may not inspect) may keep it open for ever.
//
// limited reports whether the reader waits for the host (no credit, a
// full journal): the PTY is then not read on purpose, and the end is
// waited for however long the host takes. logf reports a hang-up.
func Drain(p *ptyhost.Process, readDone <-chan struct{}, limited func() bool, logf func(format string, args ...any)) {
	drain := time.NewTimer(DrainBound)
	select {
	case <-readDone:
		drain.Stop()
		p.KillSession(syscall.SIGKILL, false)
		return
	case <-drain.C:
	}
	p.KillSession(syscall.SIGKILL, true)
	tick := time.NewTicker(HolderRetry)
	defer tick.Stop()
	for attempts := 0; ; {
		select {
		case <-readDone:
			return
		case <-tick.C:
			if limited() {
				continue
			}
			attempts++
			if attempts < HolderAttempts {
				p.KillSession(syscall.SIGKILL, true)
				continue
			}
			logf("PTY %s still held open after the child exited; hanging it up", p.TTY())
			p.Hangup()
			<-readDone
			return
		}
	}
}

// Hangup is CLOSE's first step, the same in both servers: SIGHUP to the
// child's process group now, and kill (which ends with Kill) after
// CloseGrace unless the returned timer is stopped. The caller holds the
// terminal's lock and has checked that the child runs (IfRunning).
//
// SIGCONT follows the SIGHUP, as it does when the kernel hangs a terminal
// up: a stopped process (SIGSTOP from a host's SIGNAL, a debugger) would
// otherwise keep the hangup pending until the SIGKILL, and end by that
// after the whole grace period, with no chance to clean up.
func Hangup(p *ptyhost.Process, kill func()) *time.Timer {
	p.SignalGroup(syscall.SIGHUP)
	continueGroup(p)
	return time.AfterFunc(CloseGrace, kill)
}

// Kill ends every process of the terminal's session at once: CLOSE's
// grace ran out, or the server shuts down. The caller holds the
// terminal's lock and has checked that the child runs.
func Kill(p *ptyhost.Process) {
	p.SignalGroup(syscall.SIGKILL)
	p.KillSession(syscall.SIGKILL, false)
}
