package ptyhost

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// On Linux the kernel says, per thread, what each task is blocked in:
// /proc/PID/task/TID/stat has its state letter and /proc/PID/task/TID/syscall
// the system call it sleeps in with its arguments. A foreground program
// waiting for its user sleeps in read(2) on the terminal, or in poll,
// select or epoll with the terminal among the descriptors it watches; the
// watched descriptors are in its memory (/proc/PID/mem) or, for epoll, in
// /proc/PID/fdinfo. Reading a task's syscall and memory needs the same
// access as a debugger, which the parent of the session has for its own
// children unless they are setuid; otherwise the answer is "unknown".

// waitKind says how a system call names the descriptors it waits on.
type waitKind int

const (
	waitRead   waitKind = iota + 1 // fd in the first argument
	waitPoll                       // struct pollfd array, count in the second
	waitSelect                     // nfds first, read fd_set pointer second
	waitEpoll                      // epoll descriptor first
)

// Bits of the wait calls' event masks that mean "readable".
const (
	pollIn  = 0x1
	epollIn = 0x1
)

// maxWatched bounds how many watched descriptors are inspected per task,
// so a program polling thousands of sockets costs a bounded scan.
const maxWatched = 1024

// errNoAccess: a foreground task's syscall or memory is not readable by us
// (a setuid program, or a process that made itself non-dumpable).
var errNoAccess = errors.New("a foreground task cannot be inspected")

// errForcedQuiet is the answer of a test build (forceQuietInput).
var errForcedQuiet = errors.New("built with ptyplex_inputquiet: the process table is not read")

func groupInputState(pgrp int, tty string) (InputState, error) {
	if forceQuietInput {
		return InputUnknown, errForcedQuiet
	}
	var pids []int
	err := eachPid(func(pid int) {
		var buf [1024]byte
		// After the name: state(0) ppid(1) pgrp(2).
		if f := statAfterName(pid, buf[:]); len(f) > 2 {
			if g, err := strconv.Atoi(string(f[2])); err == nil && g == pgrp && f[0][0] != 'Z' && f[0][0] != 'X' {
				pids = append(pids, pid)
			}
		}
	})
	if err != nil {
		return InputUnknown, err
	}
	if len(pids) == 0 {
		return InputUnknown, ErrNoForeground
	}
	waiting := false
	for _, pid := range pids {
		st, err := processInputState(pid, tty)
		if err != nil {
			return InputUnknown, err
		}
		switch st {
		case InputBusy:
			return InputBusy, nil
		case InputWaiting:
			waiting = true
		}
	}
	if waiting {
		return InputWaiting, nil
	}
	return InputBusy, nil
}

// processInputState is InputWaiting when one of pid's threads waits on the
// terminal and none runs, InputBusy when one runs (or is in
// uninterruptible sleep, or stopped), and InputUnknown (with a nil error)
// when all sleep on something else.
func processInputState(pid int, tty string) (InputState, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task/"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return InputUnknown, nil // it exited meanwhile
		}
		return InputUnknown, fmt.Errorf("pid %d: %w", pid, err)
	}
	waiting := false
	for _, task := range tasks {
		tdir := dir + task.Name() + "/"
		state, ok := taskState(tdir + "stat")
		if !ok {
			continue // the thread ended meanwhile
		}
		switch state {
		case 'S':
		case 'Z', 'X':
			continue
		default: // R running, D disk, T/t stopped, ...
			return InputBusy, nil
		}
		w, err := taskWaitsOn(pid, tdir+"syscall", tty)
		if err != nil {
			return InputUnknown, fmt.Errorf("pid %d: %w", pid, err)
		}
		waiting = waiting || w
	}
	if waiting {
		return InputWaiting, nil
	}
	return InputUnknown, nil
}

func taskState(path string) (byte, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}

// taskWaitsOn reads a sleeping task's system call and reports whether it
// waits to read tty.
func taskWaitsOn(pid int, syscallPath, tty string) (bool, error) {
	b, err := os.ReadFile(syscallPath)
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return false, errNoAccess
		}
		return false, nil // gone meanwhile
	}
	f := strings.Fields(string(b))
	// "running", or "-1 sp pc" when it sleeps outside a system call (a
	// page fault), or "NR arg0 ... arg5 sp pc".
	if len(f) < 7 || f[0] == "running" || f[0] == "-1" {
		return false, nil
	}
	nr, err := strconv.ParseUint(f[0], 10, 64)
	if err != nil {
		return false, nil
	}
	kind := ttyWaitCalls[nr]
	if kind == 0 {
		return false, nil
	}
	var args [3]uint64
	for i := range args {
		if args[i], err = strconv.ParseUint(strings.TrimPrefix(f[1+i], "0x"), 16, 64); err != nil {
			return false, nil
		}
	}
	isTTY := func(fd uint64) bool { return fdIsTTY(pid, fd, tty) }
	switch kind {
	case waitRead:
		return isTTY(args[0]), nil
	case waitPoll:
		return pollWatches(pid, args[0], args[1], isTTY)
	case waitSelect:
		return selectWatches(pid, args[0], args[1], isTTY)
	case waitEpoll:
		return epollWatches(pid, args[0], isTTY), nil
	}
	return false, nil
}

// fdIsTTY reports whether pid's descriptor fd is the terminal: its slave
// device, or /dev/tty (less and others open the controlling terminal by
// that name, and a foreground process's controlling terminal is ours).
func fdIsTTY(pid int, fd uint64, tty string) bool {
	target, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatUint(fd, 10))
	if err != nil {
		return false
	}
	target = trimDeleted(target)
	return target == tty || target == "/dev/tty"
}

// readMem reads n bytes of pid's memory at addr.
func readMem(pid int, addr uint64, n int) ([]byte, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, errNoAccess
		}
		return nil, nil
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, int64(addr)); err != nil {
		return nil, nil // the task moved on and the buffer went with it
	}
	return buf, nil
}

// pollWatches reads poll's struct pollfd array: int fd, short events,
// short revents, 8 bytes each on every Linux architecture.
func pollWatches(pid int, addr, nfds uint64, isTTY func(uint64) bool) (bool, error) {
	if nfds == 0 {
		return false, nil
	}
	nfds = min(nfds, maxWatched)
	b, err := readMem(pid, addr, int(nfds)*8)
	if err != nil || b == nil {
		return false, err
	}
	for i := 0; i+8 <= len(b); i += 8 {
		fd := int32(binary.NativeEndian.Uint32(b[i:]))
		events := binary.NativeEndian.Uint16(b[i+4:])
		if fd >= 0 && events&pollIn != 0 && isTTY(uint64(fd)) {
			return true, nil
		}
	}
	return false, nil
}

// selectWatches reads select's read set, a bitmap of nfds bits in
// machine words; on little-endian machines its bytes are in bit order.
func selectWatches(pid int, nfds, addr uint64, isTTY func(uint64) bool) (bool, error) {
	if nfds == 0 || addr == 0 {
		return false, nil
	}
	nfds = min(nfds, maxWatched)
	words := (nfds + 63) / 64
	b, err := readMem(pid, addr, int(words*8))
	if err != nil || b == nil {
		return false, err
	}
	for fd := uint64(0); fd < nfds; fd++ {
		word := binary.NativeEndian.Uint64(b[fd/64*8:])
		if word&(1<<(fd%64)) != 0 && isTTY(fd) {
			return true, nil
		}
	}
	return false, nil
}

// epollWatches reads the epoll instance's registrations from fdinfo:
// lines "tfd: N events: HEX data: ...".
func epollWatches(pid int, epfd uint64, isTTY func(uint64) bool) bool {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.FormatUint(epfd, 10))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 0; sc.Scan() && n < maxWatched; {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[0] != "tfd:" || fields[2] != "events:" {
			continue
		}
		n++
		fd, err1 := strconv.ParseUint(fields[1], 10, 64)
		ev, err2 := strconv.ParseUint(fields[3], 16, 32)
		if err1 == nil && err2 == nil && ev&epollIn != 0 && isTTY(fd) {
			return true
		}
	}
	return false
}
