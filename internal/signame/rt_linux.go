//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package signame

import (
	"strconv"
	"strings"
	"syscall"
)

// The real-time signals as a Linux program sees them. The kernel's range
// is 32..64, but glibc (and musl) keep 32 and 33 for their threads and
// start SIGRTMIN at 34; `kill -l` (bash, procps) lists 34..64 only, and
// so do these names. (MIPS has 128 signals, a SIGRTMAX of 127, and is
// left out: its names would differ.)
const (
	rtMin = 34
	rtMax = 64
	// rtMid is the last signal named from SIGRTMIN up; the ones above it
	// are named from SIGRTMAX down, as kill -l lists them.
	rtMid = (rtMin + rtMax) / 2
)

// rtName names a real-time signal as kill -l prints it: SIGRTMIN,
// SIGRTMIN+1 .. SIGRTMIN+15, SIGRTMAX-14 .. SIGRTMAX-1, SIGRTMAX.
func rtName(sig syscall.Signal) string {
	n := int(sig)
	switch {
	case n == rtMin:
		return "SIGRTMIN"
	case n == rtMax:
		return "SIGRTMAX"
	case n > rtMin && n <= rtMid:
		return "SIGRTMIN+" + strconv.Itoa(n-rtMin)
	case n > rtMid && n < rtMax:
		return "SIGRTMAX-" + strconv.Itoa(rtMax-n)
	}
	return ""
}

// rtNum reads SIGRTMIN, SIGRTMAX, SIGRTMIN+n and SIGRTMAX-n (name is
// upper case with the SIG prefix), with any offset that stays in the
// range, so that SIGRTMIN+20 is SIGRTMAX-10: both are 54, as for kill.
func rtNum(name string) syscall.Signal {
	var base, sign int
	rest := ""
	switch {
	case strings.HasPrefix(name, "SIGRTMIN"):
		base, sign, rest = rtMin, 1, name[len("SIGRTMIN"):]
	case strings.HasPrefix(name, "SIGRTMAX"):
		base, sign, rest = rtMax, -1, name[len("SIGRTMAX"):]
	default:
		return 0
	}
	if rest == "" {
		return syscall.Signal(base)
	}
	op := "+"
	if sign < 0 {
		op = "-"
	}
	digits, ok := strings.CutPrefix(rest, op)
	if !ok || digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 2 {
		return 0
	}
	off, _ := strconv.Atoi(digits)
	n := base + sign*off
	if n < rtMin || n > rtMax {
		return 0
	}
	return syscall.Signal(n)
}
