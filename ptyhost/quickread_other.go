//go:build unix && !linux

package ptyhost

import "golang.org/x/sys/unix"

// quickRead is unix.Read: quickread_linux.go says why Linux differs.
func quickRead(fd int, b []byte) (int, error) { return unix.Read(fd, b) }
