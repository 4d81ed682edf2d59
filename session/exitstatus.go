package session

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// exitCodeOf reads the exit status of an exited child without reaping it
// (waitid with WNOWAIT). The zombie keeps the child's pid, and with it the
// session id, reserved until STOP, so ptyhost's KillSession can still find
// leftovers of that session without hitting a stranger that reused the pid.
// A signal death is reported as 128+signal, as shells do.
func exitCodeOf(pid int) (int, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, fmt.Errorf("waitid %d: %w", pid, err)
		}
		break
	}
	// x/sys does not name the SIGCHLD union fields; si_status follows
	// si_pid and si_uid at the start of the union, which begins after three
	// int32s, padded to pointer alignment.
	unionOff := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		unionOff = 16
	}
	status := *(*int32)(unsafe.Add(unsafe.Pointer(&info), unionOff+8))
	switch info.Code {
	case 1: // CLD_EXITED
		return int(status), nil
	default: // CLD_KILLED, CLD_DUMPED
		return 128 + int(status), nil
	}
}
