package sidecar

import "github.com/ptyplex/ptyplex/ptyhost"

// Watchdog learns about every terminal's process while it may have a
// session to clean up, so that something outside the sidecar can end the
// terminals if the sidecar dies without tearing them down (SIGKILL). See
// package ptyhost/watchdog, the implementation cmd/ptyplex-sidecar uses.
type Watchdog interface {
	// Watch is called once the child runs, before its terminal starts.
	Watch(p *ptyhost.Process)
	// Forget is called after the terminal's session was killed and
	// before the child is reaped.
	Forget(p *ptyhost.Process)
}

func (s *Sidecar) watch(p *ptyhost.Process) {
	if s.opts.Watchdog != nil {
		s.opts.Watchdog.Watch(p)
	}
}

func (s *Sidecar) unwatch(p *ptyhost.Process) {
	if s.opts.Watchdog != nil {
		s.opts.Watchdog.Forget(p)
	}
}
