package ptyhost

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's process table is /proc. Both backends use it on Linux; macOS and
// FreeBSD have their own (procs_darwin.go, procs_freebsd.go) behind the
// same three functions: sessionProcs, holderProcs and startTime.

// killSessionProc is KillSession as one pass over /proc.
func killSessionProc(sid int, pts string, sig syscall.Signal, holders bool) int {
	self := os.Getpid()
	n := 0
	eachPid(func(pid int) {
		if pid == sid || pid == self {
			return
		}
		if s, _ := statFields(pid); s == sid || (holders && holdsFile(pid, pts)) {
			if unix.Kill(pid, sig) == nil {
				n++
			}
		}
	})
	return n
}

// sessionProcs lists the processes whose session id is in sids.
func sessionProcs(sids map[int]bool) ([]procInfo, error) {
	var out []procInfo
	err := eachPid(func(pid int) {
		if sid, state := statFields(pid); sids[sid] {
			out = append(out, procInfo{pid: pid, sid: sid, zombie: state == 'Z' || state == 'X'})
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// sessionMembers lists the live processes whose session id is in sids
// (zombies may be among them). It asks getsid(2) for each process: one
// system call where reading /proc/PID/stat is three, and one that does not
// have the kernel gather the target's memory figures (stat does), which on
// a machine of busy processes made each stat read cost 10–50 µs. Session
// kills use it; sessionProcs, which also reports the state, is for callers
// that must tell zombies apart.
func sessionMembers(sids map[int]bool) ([]procInfo, error) {
	var out []procInfo
	err := eachPid(func(pid int) {
		if sid, err := unix.Getsid(pid); err == nil && sids[sid] {
			out = append(out, procInfo{pid: pid, sid: sid})
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// direntBufs recycles eachPid's getdents buffers.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// eachPid calls fn with the id of every process in /proc, in the kernel's
// order. It reads the directory with getdents64 into a recycled buffer and
// parses the ids in place: os.ReadDir allocates an entry and a name per
// process and sorts them, which was a quarter of a session scan's cost.
func eachPid(fn func(pid int)) error {
	fd, err := unix.Open("/proc", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("list processes: %w", err)
	}
	defer unix.Close(fd)
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	for {
		n, err := unix.Getdents(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("list processes: %w", err)
		}
		if n <= 0 {
			return nil
		}
		for rec := buf[:n]; len(rec) >= direntNameOff; {
			// struct linux_dirent64: ino u64, off s64, reclen u16,
			// type u8, then the NUL-terminated name.
			reclen := int(binary.NativeEndian.Uint16(rec[16:18]))
			if reclen < direntNameOff || reclen > len(rec) {
				return fmt.Errorf("list processes: malformed directory entry")
			}
			if pid, ok := parsePid(rec[direntNameOff:reclen]); ok {
				fn(pid)
			}
			rec = rec[reclen:]
		}
	}
}

// direntNameOff is where the name starts in a linux_dirent64.
const direntNameOff = 19

// parsePid reads a NUL-terminated run of decimal digits: a process's
// directory in /proc. Anything else (self, sys, a name with letters) is not
// a process.
func parsePid(name []byte) (int, bool) {
	pid := 0
	for i, c := range name {
		switch {
		case c == 0:
			return pid, i > 0
		case c < '0' || c > '9' || pid > 1<<30:
			return 0, false
		default:
			pid = pid*10 + int(c-'0')
		}
	}
	return 0, false
}

// holderProcs lists the processes that have a file open for which match
// (given the /proc/PID/fd/N path and the link's target) returns true.
func holderProcs(match func(fdPath, target string) bool) []int {
	var out []int
	eachPid(func(pid int) {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, fd := range fds {
			if target, err := os.Readlink(dir + fd.Name()); err == nil && match(dir+fd.Name(), target) {
				out = append(out, pid)
				return
			}
		}
	})
	return out
}

// statFields reads the session id and the state letter from
// /proc/PID/stat, or -1 and 0.
func statFields(pid int) (sid int, state byte) {
	var buf [1024]byte
	f := statAfterName(pid, buf[:])
	if len(f) < 4 {
		return -1, 0
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return -1, 0
	}
	return sid, f[0][0]
}

// statAfterName returns the fields of /proc/PID/stat that follow the
// command name (state, ppid, pgrp, session, ...), read into buf, or nil.
//
// Session scans read it for every process on the machine and each spawn
// reads it once, so it uses bare open/read/close: os.ReadFile adds an
// fstat, an fcntl and a failed epoll registration per file, which made
// the scan the largest cost of the sidecar in an open/close loop.
func statAfterName(pid int, buf []byte) [][]byte {
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	n, err := unix.Read(fd, buf)
	unix.Close(fd)
	if err != nil || n <= 0 {
		return nil
	}
	b := buf[:n]
	// The command name may contain spaces and parentheses; fields resume
	// after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// holdsFile reports whether pid has path open on any descriptor.
func holdsFile(pid int, path string) bool {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd/"
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		if target, err := os.Readlink(dir + fd.Name()); err == nil && target == path {
			return true
		}
	}
	return false
}

// startTime reads a process's start time (clock ticks since boot) from
// /proc/PID/stat.
func startTime(pid int) (uint64, error) {
	var buf [1024]byte
	// After the name: state(3) ... starttime is field 22, the 20th here.
	f := statAfterName(pid, buf[:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: unreadable or too short", pid)
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// trimDeleted strips what a /proc fd link gains once its file is unlinked;
// a PTY slave's node goes when the master closes.
func trimDeleted(target string) string { return strings.TrimSuffix(target, " (deleted)") }
