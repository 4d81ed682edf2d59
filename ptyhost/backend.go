//go:build unix

package ptyhost

import (
	"os"
	"syscall"
)

// backend is what a platform supplies to run children: it starts one in a
// prepared PTY and finds the rest of its session afterwards. The PTY
// itself (pty_unix.go, and Process's Read, Resize, Size and Termios) is
// shared by the Unix backends. A backend for a system without Unix PTYs
// (Windows' ConPTY) would replace that PTY half with its own files, pass
// its pseudoconsole instead of spawnSpec.tty, and implement backend and
// child over its process handles; nothing here names a Unix type but the
// tty file, and the signals are syscall.Signal, which Windows has too.
type backend interface {
	// spawn starts the program with tty as its stdin, stdout and stderr,
	// as a session leader with tty as its controlling terminal.
	spawn(s spawnSpec) (child, error)
	// killSession sends sig to every process of session sid other than
	// the leader and ourselves and, with holders, to every process that
	// holds the PTY slave open where the platform can tell. It returns how
	// many processes it signalled.
	killSession(sid int, pts string, sig syscall.Signal, holders bool) int
	// adopt takes over a child this process did not spawn itself but is
	// the parent of: one spawned before this process re-executed itself.
	adopt(pid int) (child, error)
}

// spawnSpec is a child ready to start: everything is resolved and checked.
type spawnSpec struct {
	path string
	argv []string
	dir  string
	env  []string
	tty  *os.File
	// noPdeath: no parent-death signal (Config.NoParentDeathSignal).
	noPdeath bool
}

// child is a backend's handle on one running child. Until reap returns,
// the child's pid (and with it its session id) stays reserved, so signal
// and the session scans never hit a stranger that reused the number.
type child interface {
	pid() int
	// signal sends sig to the child alone.
	signal(sig syscall.Signal) error
	// waitExit blocks until the child has exited, without reaping it, and
	// returns its status. It returns early with an error after close.
	waitExit() (Status, error)
	// reap collects the child; call it after waitExit.
	reap() (Status, error)
	// close releases the handle; reap still works afterwards.
	close()
}

// Backend names the compiled-in backend: "linux" or "portable".
func Backend() string { return backendName }

// procInfo is one process as a session scan (sessionProcs, in the
// platform's procs file) sees it.
type procInfo struct {
	pid    int
	sid    int
	zombie bool // exited, waiting for its parent to reap it
}
