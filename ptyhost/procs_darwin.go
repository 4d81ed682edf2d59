package ptyhost

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// The macOS process table is sysctl kern.proc. Its kinfo_proc carries no
// session id (only a kernel pointer to the session), so sessionProcs asks
// getsid(2) for each live process.

// sessionProcs lists the processes whose session id is in sids.
func sessionProcs(sids map[int]bool) ([]procInfo, error) {
	all, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, fmt.Errorf("sysctl kern.proc.all: %w", err)
	}
	var out []procInfo
	for i := range all {
		pid := int(all[i].Proc.P_pid)
		zombie := all[i].Proc.P_stat == szomb
		if sids[pid] && zombie {
			// A zombie leader still names its session; getsid fails on
			// zombies, so match it by its pid.
			out = append(out, procInfo{pid: pid, sid: pid, zombie: true})
			continue
		}
		if sid, err := unix.Getsid(pid); err == nil && sids[sid] {
			out = append(out, procInfo{pid: pid, sid: sid, zombie: zombie})
		}
	}
	return out, nil
}

// startTime is a process's start time in microseconds since the epoch.
func startTime(pid int) (uint64, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return 0, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
	}
	if k.Proc.P_pid != int32(pid) {
		return 0, fmt.Errorf("no process %d", pid)
	}
	t := k.Proc.P_starttime
	return uint64(t.Sec)*1e6 + uint64(t.Usec), nil
}

// exitedStatus reports whether pid, a child of ours, has exited, and how,
// without reaping it: a zombie's kinfo_proc holds its wait status.
func exitedStatus(pid int) (Status, bool, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil {
		return Status{}, false, fmt.Errorf("sysctl kern.proc.pid.%d: %w", pid, err)
	}
	if k.Proc.P_pid != int32(pid) || k.Proc.P_stat != szomb {
		return Status{}, false, nil
	}
	return statusOf(unix.WaitStatus(k.Proc.P_xstat)), true, nil
}

// ignoredSignals is the set of signals this process ignores, bit sig-1.
func ignoredSignals() (uint64, error) {
	k, err := unix.SysctlKinfoProc("kern.proc.pid", unix.Getpid())
	if err != nil {
		return 0, fmt.Errorf("sysctl kern.proc.pid: %w", err)
	}
	return uint64(k.Proc.P_sigignore), nil
}
