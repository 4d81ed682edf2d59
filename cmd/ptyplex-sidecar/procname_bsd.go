//go:build darwin || freebsd

package main

// nameProcess does nothing here: macOS and FreeBSD name a process by the
// path it was executed from, which an upgrade keeps.
func nameProcess() {}
