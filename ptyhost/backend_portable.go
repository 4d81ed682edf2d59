//go:build darwin || freebsd || (linux && ptyplex_portable)

package ptyhost

import (
	"errors"
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The portable Unix backend: plain fork/exec with setsid and a controlling
// terminal, kill(2) for signals, one SIGCHLD-driven exit watcher for all
// children (exitwatch_portable.go), and the platform's process table for the
// session teardown. It is what macOS and FreeBSD use; Linux uses it when
// built with -tags ptyplex_portable, which is how it is tested.
//
// Unlike the Linux backend there is no parent-death signal: if we are
// SIGKILLed, the watchdog (package ptyhost/watchdog) and the PTY hangup are what end
// the children.

const backendName = "portable"

var host backend = portableBackend{}

type portableBackend struct{}

func (portableBackend) spawn(s spawnSpec) (child, error) {
	// Catch SIGCHLD before the first fork, so no exit goes unnoticed.
	exits.start()
	proc, err := os.StartProcess(s.path, s.argv, &os.ProcAttr{
		Dir:   s.dir,
		Env:   s.env,
		Files: []*os.File{s.tty, s.tty, s.tty},
		Sys: &syscall.SysProcAttr{
			Setsid:  true,
			Setctty: true,
			Ctty:    0, // fd 0 in the child, which is the slave
		},
	})
	if err != nil {
		return nil, err
	}
	c := &portableChild{id: proc.Pid, exited: make(chan struct{}), closed: make(chan struct{})}
	// We reap by pid ourselves; the os package's handle is not needed.
	proc.Release()
	exits.add(c)
	return c, nil
}

// adopt watches a child of ours like one we spawned: the exit watcher
// asks about it by pid, which works for any child not yet reaped.
func (portableBackend) adopt(pid int) (child, error) {
	exits.start()
	c := &portableChild{id: pid, exited: make(chan struct{}), closed: make(chan struct{})}
	exits.add(c)
	return c, nil
}

func (portableBackend) killSession(sid int, pts string, sig syscall.Signal, holders bool) int {
	if !holders {
		return sessionKills.kill(sid, sig)
	}
	self := os.Getpid()
	n := 0
	kill := func(pid int) {
		if pid != sid && pid != self && unix.Kill(pid, sig) == nil {
			n++
		}
	}
	procs, _ := sessionProcs(map[int]bool{sid: true})
	for _, p := range procs {
		if !p.zombie {
			kill(p.pid)
		}
	}
	if holders {
		for _, pid := range holderProcs(func(_, target string) bool { return target == pts }) {
			kill(pid)
		}
	}
	return n
}

// portableChild is a child watched by the exit watcher.
type portableChild struct {
	id     int
	exited chan struct{} // closed by the exit watcher once status is set
	status Status
	err    error // set instead of status if the child could not be watched

	closeOnce sync.Once
	closed    chan struct{}

	mu     sync.Mutex // orders signal against reap
	reaped bool
}

var errClosed = errors.New("process closed")

func (c *portableChild) pid() int { return c.id }

func (c *portableChild) signal(sig syscall.Signal) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reaped {
		// The pid may belong to someone else by now.
		return unix.ESRCH
	}
	return unix.Kill(c.id, sig)
}

func (c *portableChild) waitExit() (Status, error) {
	select {
	case <-c.exited:
		return c.status, c.err
	default:
	}
	select {
	case <-c.exited:
		return c.status, c.err
	case <-c.closed:
		return Status{}, errClosed
	}
}

func (c *portableChild) reap() (Status, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	// Stop watching first: once reaped, the pid can come back as a new
	// child of ours, whose exit must not be taken for this one's.
	exits.remove(c)
	c.reaped = true
	return wait4(c.id)
}

func (c *portableChild) close() { c.closeOnce.Do(func() { close(c.closed) }) }
