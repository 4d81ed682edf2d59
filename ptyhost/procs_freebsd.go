package ptyhost

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/sys/unix"
)

// The FreeBSD process table is sysctl kern.proc, which x/sys returns as
// raw struct kinfo_proc records (sys/user.h). Only the fields below are
// read, at their offsets in the 64-bit layout (1088 bytes per record); a
// record of another size is refused rather than misread.
const (
	kinfoSize      = 1088
	kiPid          = 72  // pid_t ki_pid
	kiSid          = 88  // pid_t ki_sid
	kiSigignore    = 136 // sigset_t ki_sigignore (first word: signals 1-32)
	kiXstat        = 304 // u_short ki_xstat, a wait(2) status
	kiStartSec     = 336 // struct timeval ki_start
	kiStartUsec    = 344
	kiStat         = 388 // char ki_stat
	kiStructsizeAt = 0   // int ki_structsize
)

type kinfo []byte

func (k kinfo) i32(off int) int32  { return int32(binary.LittleEndian.Uint32(k[off:])) }
func (k kinfo) u64(off int) uint64 { return binary.LittleEndian.Uint64(k[off:]) }

// kinfos splits a sysctl answer into records.
func kinfos(name string, args ...int) ([]kinfo, error) {
	b, err := unix.SysctlRaw(name, args...)
	if err != nil {
		return nil, fmt.Errorf("sysctl %s: %w", name, err)
	}
	var out []kinfo
	for len(b) >= kinfoSize {
		k := kinfo(b[:kinfoSize])
		if k.i32(kiStructsizeAt) != kinfoSize {
			return nil, fmt.Errorf("sysctl %s: kinfo_proc of %d bytes, want %d", name, k.i32(kiStructsizeAt), kinfoSize)
		}
		out = append(out, k)
		b = b[kinfoSize:]
	}
	return out, nil
}

// sessionProcs lists the processes whose session id is in sids.
func sessionProcs(sids map[int]bool) ([]procInfo, error) {
	all, err := kinfos("kern.proc.proc")
	if err != nil {
		return nil, err
	}
	var out []procInfo
	for _, k := range all {
		if sids[int(k.i32(kiSid))] {
			out = append(out, procInfo{pid: int(k.i32(kiPid)), sid: int(k.i32(kiSid)), zombie: k[kiStat] == szomb})
		}
	}
	return out, nil
}

func procByPid(pid int) (kinfo, error) {
	ks, err := kinfos("kern.proc.pid", pid)
	if err != nil {
		return nil, err
	}
	if len(ks) == 0 || int(ks[0].i32(kiPid)) != pid {
		return nil, fmt.Errorf("no process %d", pid)
	}
	return ks[0], nil
}

// startTime is a process's start time in microseconds since the epoch.
func startTime(pid int) (uint64, error) {
	k, err := procByPid(pid)
	if err != nil {
		return 0, err
	}
	return k.u64(kiStartSec)*1e6 + k.u64(kiStartUsec), nil
}

// exitedStatus reports whether pid, a child of ours, has exited, and how,
// without reaping it: a zombie's kinfo_proc holds its wait status.
func exitedStatus(pid int) (Status, bool, error) {
	k, err := procByPid(pid)
	if err != nil {
		return Status{}, false, err
	}
	if k[kiStat] != szomb {
		return Status{}, false, nil
	}
	return statusOf(unix.WaitStatus(binary.LittleEndian.Uint16(k[kiXstat:]))), true, nil
}

// ignoredSignals is the set of signals 1-32 this process ignores, bit
// sig-1.
func ignoredSignals() (uint64, error) {
	k, err := procByPid(unix.Getpid())
	if err != nil {
		return 0, err
	}
	return uint64(binary.LittleEndian.Uint32(k[kiSigignore:])), nil
}
