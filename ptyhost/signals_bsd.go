//go:build darwin || freebsd

package ptyhost

// ClearInheritedSignalMask does nothing on macOS and FreeBSD. On Linux it
// re-executes the program with an empty signal mask (signals_linux.go),
// because the Go runtime restores its startup mask in every child; x/sys
// offers no way to read the calling thread's mask on these systems without
// cgo, so a program started with signals blocked passes them on blocked to
// its terminals here. Ignored signals are reset either way
// (resetInheritedSignals).
func ClearInheritedSignalMask() error { return nil }
