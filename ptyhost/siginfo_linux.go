package ptyhost

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// statusOfSiginfo decodes the SIGCHLD siginfo that waitid(2) fills in.
// x/sys does not name the SIGCHLD union fields; si_status follows si_pid
// and si_uid at the start of the union, which begins after three int32s,
// padded to pointer alignment.
func statusOfSiginfo(info *unix.Siginfo) Status {
	unionOff := uintptr(12)
	if unsafe.Sizeof(uintptr(0)) == 8 {
		unionOff = 16
	}
	status := *(*int32)(unsafe.Add(unsafe.Pointer(info), unionOff+8))
	switch info.Code {
	case 1: // CLD_EXITED
		return Status{Code: int(status)}
	default: // CLD_KILLED, CLD_DUMPED
		return Status{Code: 128 + int(status), Signal: unix.Signal(status)}
	}
}

// exitedStatus reports whether pid, a child of ours, has exited, and how,
// without reaping it.
func exitedStatus(pid int) (Status, bool, error) {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return Status{}, false, err
		}
		break
	}
	if info.Signo == 0 {
		return Status{}, false, nil
	}
	return statusOfSiginfo(&info), true, nil
}
