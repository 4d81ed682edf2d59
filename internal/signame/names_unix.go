//go:build unix

package signame

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func signalName(sig syscall.Signal) string { return unix.SignalName(sig) }

func signalNum(name string) syscall.Signal { return unix.SignalNum(name) }
