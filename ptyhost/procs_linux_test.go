//go:build unix

package ptyhost

import (
	"os"
	"strconv"
	"testing"
)

func TestParsePid(t *testing.T) {
	for _, c := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"1\x00", 1, true},
		{"4194304\x00\x00\x00", 4194304, true},
		{"self\x00", 0, false},
		{"12a\x00", 0, false},
		{"\x00", 0, false},
		{"123", 0, false}, // no terminator: not a whole name
		{"99999999999999999999\x00", 0, false},
	} {
		pid, ok := parsePid([]byte(c.name))
		if pid != c.pid || ok != c.ok {
			t.Errorf("parsePid(%q) = %d, %v; want %d, %v", c.name, pid, ok, c.pid, c.ok)
		}
	}
}

// TestEachPid: the listing has this process and its parent, once each, and
// only ids of processes: each has its /proc entry (unless it ended since).
func TestEachPid(t *testing.T) {
	seen := map[int]int{}
	if err := eachPid(func(pid int) { seen[pid]++ }); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{os.Getpid(), os.Getppid()} {
		if seen[want] != 1 {
			t.Errorf("pid %d listed %d times, want once", want, seen[want])
		}
	}
	gone := 0
	for pid, n := range seen {
		if n != 1 {
			t.Errorf("pid %d listed %d times", pid, n)
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err != nil {
			gone++
		}
	}
	if gone > len(seen)/2 {
		t.Errorf("%d of %d listed ids have no /proc entry", gone, len(seen))
	}
}
