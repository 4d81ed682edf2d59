package ptyhost

import (
	"bytes"
	"os"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// KillSession sends sig to every process of the child's session other than
// the child itself: background jobs in other process groups outlive the
// foreground group otherwise. With holders set it also signals any process
// that holds the PTY slave open, which catches daemons that left the session
// with setsid(2) but kept the terminal as stdio. It returns how many
// processes it signalled.
//
// Call it before reaping the child: until then the session id cannot be
// reused by an unrelated process.
func (p *Process) KillSession(sig syscall.Signal, holders bool) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	self := os.Getpid()
	n := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == p.pid || pid == self {
			continue
		}
		if sessionOf(pid) == p.pid || (holders && holdsFile(pid, p.pts)) {
			if unix.Kill(pid, sig) == nil {
				n++
			}
		}
	}
	return n
}

// sessionOf reads the session id from /proc/PID/stat, or -1.
//
// It runs for every process on the machine each time a terminal ends, so
// it uses bare open/read/close: os.ReadFile adds an fstat, an fcntl and a
// failed epoll registration per file, which made this scan the largest
// cost of the sidecar in an open/close loop.
func sessionOf(pid int) int {
	var buf [1024]byte
	fd, err := unix.Open("/proc/"+strconv.Itoa(pid)+"/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1
	}
	n, err := unix.Read(fd, buf[:])
	unix.Close(fd)
	if err != nil || n <= 0 {
		return -1
	}
	b := buf[:n]
	// The command name may contain spaces and parentheses; fields resume
	// after the last ')'. Then: state ppid pgrp session.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 4 {
		return -1
	}
	sid, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return -1
	}
	return sid
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
