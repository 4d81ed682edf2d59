//go:build unix

package persist

import (
	"time"

	"github.com/ptyplex/ptyplex/ptyhost"
)

// The persistent server's watchdog, as the plain sidecar has one (package
// ptyhost/watchdog): a second process that kills every process of every
// terminal still announced once the server is gone without tearing its
// terminals down (SIGKILL, the OOM killer, a crash). The PTY hangup
// reaches only the foreground; a background job that ignores SIGHUP, or
// a daemon that kept the PTY as its stdio, would otherwise run on with
// nobody to reach it. What the terminals printed is in --journal-dir, if
// it is set; the terminals themselves cannot outlive their server.
//
// A live upgrade keeps the terminals across an execve, which closes the
// watchdog's pipe: before it, every terminal is retired and the watchdog
// told goodbye; the new image starts its own and announces every
// terminal it took over (a rolled-back upgrade does the same). The
// terminals are unwatched only for the execve itself.

// Watchdog is what the server needs of one (ptyhost/watchdog.Watchdog).
type Watchdog interface {
	// Watch announces p; called once p runs.
	Watch(p *ptyhost.Process)
	// Forget retires p; called after its session was killed and before
	// it is reaped.
	Forget(p *ptyhost.Process)
	// Close retires the watchdog; it kills what is still announced.
	Close() error
	// Exited is closed once the watchdog process has exited and was
	// reaped.
	Exited() <-chan struct{}
}

// StartWatchdog starts a watchdog with start (the caller's choice of
// implementation) and announces every terminal that runs; with it the
// server can start a new one after an upgrade it rolls back. Called once,
// before Serve. An error leaves the server without one.
func (s *Server) StartWatchdog(start func() (Watchdog, error)) error {
	s.mu.Lock()
	s.newWatchdog = start
	s.mu.Unlock()
	return s.restartWatchdog()
}

func (s *Server) restartWatchdog() error {
	s.mu.Lock()
	start := s.newWatchdog
	s.mu.Unlock()
	if start == nil {
		return nil
	}
	wd, err := start()
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.wd = wd
	s.mu.Unlock()
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.proc != nil && t.life.Running() {
			wd.Watch(t.proc)
		}
		t.mu.Unlock()
	}
	return nil
}

// releaseWatchdog retires every terminal and the watchdog itself, before
// an execve that keeps the terminals.
func (s *Server) releaseWatchdog() {
	s.mu.Lock()
	wd := s.wd
	s.wd = nil
	s.mu.Unlock()
	if wd == nil {
		return
	}
	for _, t := range s.snapshotTerms() {
		t.mu.Lock()
		if t.proc != nil {
			wd.Forget(t.proc)
		}
		t.mu.Unlock()
	}
	wd.Close()
	// Reaped before the execve, or the new image would have a zombie
	// child it knows nothing of. A watchdog that does not end in time
	// (stopped) is left behind: it kills nothing, it was told goodbye.
	select {
	case <-wd.Exited():
	case <-time.After(watchdogExitWait):
		s.logf("the watchdog did not exit within %v of its goodbye; upgrading anyway", watchdogExitWait)
	}
}

// watchdogExitWait bounds the wait for the watchdog to end before an
// upgrade's execve.
const watchdogExitWait = 2 * time.Second

func (s *Server) watch(p *ptyhost.Process) {
	s.mu.Lock()
	wd := s.wd
	s.mu.Unlock()
	if wd != nil {
		wd.Watch(p)
	}
}

func (s *Server) unwatch(p *ptyhost.Process) {
	s.mu.Lock()
	wd := s.wd
	s.mu.Unlock()
	if wd != nil {
		wd.Forget(p)
	}
}

// closeWatchdog ends the watchdog at an orderly stop: it is told
// goodbye, and kills what is still announced (a terminal not reaped in
// time), as the plain sidecar's does.
func (s *Server) closeWatchdog() {
	s.mu.Lock()
	wd := s.wd
	s.wd, s.newWatchdog = nil, nil
	s.mu.Unlock()
	if wd != nil {
		wd.Close()
	}
}
