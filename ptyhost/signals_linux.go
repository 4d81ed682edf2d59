package ptyhost

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ignoredSignals is the set of signals this process ignores, bit sig-1.
func ignoredSignals() (uint64, error) { return procSigMask("SigIgn") }

// procSigMask reads one of the hexadecimal signal sets (SigBlk, SigIgn,
// SigCgt) of the calling thread group from /proc/self/status.
func procSigMask(field string) (uint64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		}
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", field)
}

// reexecEnv marks a process that already re-executed itself to shed an
// inherited signal mask, so that a mask that cannot be cleared does not
// loop.
const reexecEnv = "PTYPLEX_SIGMASK_REEXEC"

// ClearInheritedSignalMask makes sure children start with an empty signal
// mask and default dispositions for the signals the Go runtime cannot
// catch. Call it first thing in main of a program that spawns children
// with this package.
//
// The Go runtime restores its startup mask in every child it forks and
// offers no way to change that mask. It also will not let os/signal catch
// signals 32 and up that it keeps for the C library, so an ignored one of
// those (GNU make ignores 32 and 33 in the commands it runs) would stay
// ignored in children; resetInheritedSignals covers the others. The only
// fix is to re-execute the program once with the mask cleared and those
// signals back at SIG_DFL. When there is nothing to fix this does nothing;
// otherwise it does not return unless the exec fails.
func ClearInheritedSignalMask() error {
	if _, again := os.LookupEnv(reexecEnv); again {
		os.Unsetenv(reexecEnv)
		return nil
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var cur unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, nil, &cur); err != nil {
		return fmt.Errorf("read signal mask: %w", err)
	}
	blocked, err := procSigMask("SigBlk")
	if err != nil {
		return err
	}
	ignored, err := procSigMask("SigIgn")
	if err != nil {
		return err
	}
	const runtimeOnly = uint64(0xffffffff80000000) // signals 32..64
	if blocked == 0 && cur == (unix.Sigset_t{}) && ignored&runtimeOnly == 0 {
		return nil
	}
	// The image we run, whatever its path now holds: a server that a
	// live upgrade started from a sealed memfd has no path at all.
	const exe = "/proc/self/exe"
	for sig := 32; sig <= 64; sig++ {
		if ignored&(1<<(sig-1)) != 0 {
			if err := setDefault(sig); err != nil {
				return fmt.Errorf("reset signal %d: %w", sig, err)
			}
		}
	}
	var empty unix.Sigset_t
	if err := unix.PthreadSigmask(unix.SIG_SETMASK, &empty, nil); err != nil {
		return fmt.Errorf("clear signal mask: %w", err)
	}
	// execve keeps the calling thread's mask, which is now empty.
	err = syscall.Exec(exe, os.Args, append(os.Environ(), reexecEnv+"=1"))
	return fmt.Errorf("re-exec %s to clear the signal mask: %w", exe, err)
}

// setDefault sets sig's disposition to SIG_DFL with a bare rt_sigaction,
// behind the runtime's back. Only for signals the runtime leaves alone, and
// only right before execve.
func setDefault(sig int) error {
	var act struct { // struct kernel_sigaction: handler, flags, restorer, mask
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	act.handler = 0 // SIG_DFL
	_, _, errno := unix.RawSyscall6(unix.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&act)), 0, 8, 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}
