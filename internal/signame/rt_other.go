//go:build unix && !(linux && !mips && !mipsle && !mips64 && !mips64le)

package signame

import "syscall"

// Real-time signals are named on Linux only (see rt_linux.go): elsewhere
// they have other numbers, or none.
func rtName(syscall.Signal) string { return "" }

func rtNum(string) syscall.Signal { return 0 }
