package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// A process tree counted from the process table: what a test finds below
// the sidecar before it ends a terminal, held by handle so that a reused
// pid cannot pass for a survivor, and what it finds below it afterwards.

// proc is one live process below the sidecar.
type proc struct {
	pid, ppid int
	name      string
	h         windows.Handle // SYNCHRONIZE: gone when signalled
}

func (p proc) String() string { return fmt.Sprintf("%s(%d)", p.name, p.pid) }

// descendants lists the processes below root (its children, theirs, and
// so on) in one snapshot of the process table, each opened for waiting.
// The handles are closed when the test ends.
func descendants(t *testing.T, root int) []proc {
	t.Helper()
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		t.Fatalf("CreateToolhelp32Snapshot: %v", err)
	}
	defer windows.CloseHandle(snap)
	children := map[int][]proc{}
	var e windows.ProcessEntry32
	e.Size = uint32(unsafe.Sizeof(e))
	for err = windows.Process32First(snap, &e); err == nil; err = windows.Process32Next(snap, &e) {
		p := proc{pid: int(e.ProcessID), ppid: int(e.ParentProcessID), name: windows.UTF16ToString(e.ExeFile[:])}
		if p.pid != p.ppid { // the idle process is its own parent
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	rh, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(root))
	if err != nil {
		t.Fatalf("process %d: %v", root, err)
	}
	rootStart := started(rh)
	windows.CloseHandle(rh)
	var out []proc
	var walk func(pid int, after int64)
	walk = func(pid int, after int64) {
		for _, c := range children[pid] {
			h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(c.pid))
			if err != nil {
				continue // exited since the snapshot
			}
			// A process older than its parent names a parent that is
			// gone: its pid was reused.
			at := started(h)
			if ev, _ := windows.WaitForSingleObject(h, 0); ev == windows.WAIT_OBJECT_0 || at < after {
				windows.CloseHandle(h)
				continue
			}
			c.h = h
			t.Cleanup(func() { windows.CloseHandle(h) })
			out = append(out, c)
			walk(c.pid, at)
		}
	}
	walk(root, rootStart)
	return out
}

// started is when the process h was created (100 ns since 1601), or 0.
func started(h windows.Handle) int64 {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) != nil {
		return 0
	}
	return int64(created.HighDateTime)<<32 | int64(created.LowDateTime)
}

// survivors waits up to within for each of ps to end and returns those
// that did not.
func survivors(ps []proc, within time.Duration) []proc {
	deadline := time.Now().Add(within)
	var left []proc
	for _, p := range ps {
		ms := max(time.Until(deadline), 0) / time.Millisecond
		if ev, _ := windows.WaitForSingleObject(p.h, uint32(ms)); ev != windows.WAIT_OBJECT_0 {
			left = append(left, p)
		}
	}
	return left
}

// noDescendants waits until root has no live process below it, failing
// with the list of those that stay.
func noDescendants(t *testing.T, root int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := descendants(t, root)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d processes left below %d: %v", len(left), root, left)
		}
		// Each wait ends at a process's exit, or at the deadline.
		survivors(left, time.Until(deadline))
	}
}

func names(ps []proc) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, " ")
}
