// Package ptyhost runs one child process in one pseudo-terminal.
//
// It is the engine under both faces of ptyplex: the frame sidecar and the
// session daemon. A Process owns the PTY master, the child's process id and
// a pidfd for it; the child is a session leader whose controlling terminal
// is the PTY slave. The package knows nothing about frames or screens.
//
// Waiting for the child uses a pidfd registered with the Go runtime's
// poller, so an idle terminal costs a parked goroutine, not an OS thread
// blocked in wait(2).
package ptyhost
