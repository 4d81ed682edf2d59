package ptyhost

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Linux's process table is /proc. Both backends use it on Linux; macOS and
// FreeBSD have their own (procs_darwin.go, procs_freebsd.go) behind the
// same three functions: sessionProcs, holderProcs and startTime.

// killSessionProc is KillSession as one pass over /proc.
func killSessionProc(sid int, pts string, sig syscall.Signal, holders bool) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == sid || pid == self {
			continue
		}
		if s, _ := statFields(pid); s == sid || (holders && holdsFile(pid, pts)) {
			if unix.Kill(pid, sig) == nil {
				n++
			}
		}
	}
	return n
}

// sessionProcs lists the processes whose session id is in sids.
func sessionProcs(sids map[int]bool) ([]procInfo, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if sid, state := statFields(pid); sids[sid] {
			out = append(out, procInfo{pid: pid, sid: sid, zombie: state == 'Z' || state == 'X'})
		}
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
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var out []procInfo
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if sid, err := unix.Getsid(pid); err == nil && sids[sid] {
			out = append(out, procInfo{pid: pid, sid: sid})
		}
	}
	return out, nil
}

// holderProcs lists the processes that have a file open for which match
// (given the /proc/PID/fd/N path and the link's target) returns true.
func holderProcs(match func(fdPath, target string) bool) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		dir := "/proc/" + e.Name() + "/fd/"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if target, err := os.Readlink(dir + fd.Name()); err == nil && match(dir+fd.Name(), target) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// statFields reads the session id and the state letter from
// /proc/PID/stat, or -1 and 0.
//
// It runs for every process on the machine each time a terminal ends, so
// it uses bare open/read/close: os.ReadFile adds an fstat, an fcntl and a
// failed epoll registration per file, which made this scan the largest
// cost of the sidecar in an open/close loop.
func statFields(pid int) (sid int, state byte) {
	var buf [1024]byte
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, 0
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return -1, 0
	}
	b := buf[:n]
	// The command name may contain spaces and parentheses; fields resume
	// after the last ')'. Then: state ppid pgrp session.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1, 0
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return -1, 0
	}
	sid, err = strconv.Atoi(string(f[3]))
	if err != nil {
		return -1, 0
	}
	return sid, f[0][0]
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
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	// After the name: state(3) ... starttime is field 22, the 20th here.
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: too short", pid)
	}
	return strconv.ParseUint(string(f[19]), 10, 64)
}

// trimDeleted strips what a /proc fd link gains once its file is unlinked;
// a PTY slave's node goes when the master closes.
func trimDeleted(target string) string { return strings.TrimSuffix(target, " (deleted)") }
