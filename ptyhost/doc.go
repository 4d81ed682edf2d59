// Package ptyhost runs one child process in one pseudo-terminal.
//
// It is the engine under both faces of ptyplex: the frame sidecar and the
// session daemon. A Process owns the PTY master and the child's process
// id; the child is a session leader whose controlling terminal is the PTY
// slave, started with default signal dispositions. The package knows
// nothing about frames or screens.
//
// How a child is started, waited for and torn down is a backend's job (see
// backend.go); one is compiled in:
//
//   - linux (the default on Linux): a pidfd per child registered with the
//     Go runtime's poller, so an idle terminal costs a parked goroutine, not
//     an OS thread blocked in wait(2); the parent-death signal; /proc scans
//     to find a terminal's whole session.
//   - portable (macOS, FreeBSD, and Linux built with -tags ptyplex_portable):
//     one SIGCHLD-driven exit watcher for all children, kill(2) for
//     signals, and the platform's process table (sysctl kern.proc on macOS
//     and FreeBSD, /proc on Linux) to find a terminal's session.
//
// Files are split per platform by name: _linux, _darwin and _freebsd, and
// _bsd for what the two BSDs share (with a darwin || freebsd constraint).
// _unix is code all three share that does not build elsewhere (with a
// darwin || freebsd || linux constraint: the go tool reads no _unix
// suffix); a file without a suffix builds everywhere ptyplex does.
// A file of one backend is named for it (backend_linux.go,
// backend_portable.go, exitwatch_portable.go) and carries its build
// constraint, since the portable backend also builds on Linux.
package ptyhost
