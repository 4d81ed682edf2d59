//go:build unix

package signame

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	return rtName(sig)
}

func signalNum(name string) syscall.Signal {
	if sig := unix.SignalNum(name); sig != 0 {
		return sig
	}
	return rtNum(name)
}
