//go:build unix

// Package procwait waits for any process to exit, ours or not, without
// polling: through a pidfd on Linux and kqueue's EVFILT_PROC on macOS and
// FreeBSD. Zombies count as exited.
package procwait
