//go:build unix

package ptyhost

import (
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// TestOpenPTYNames: the slave's name is what /proc shows for a descriptor
// of it, since the holder search (holdsFile) compares the two, and the
// master is non-blocking (read through the poller) while the slave, the
// child's terminal, blocks.
func TestOpenPTYNames(t *testing.T) {
	m, s, err := openPTY()
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	defer s.Close()
	target, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(s.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	if target != s.Name() {
		t.Errorf("slave %q shows in /proc as %q", s.Name(), target)
	}
	rc, err := m.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	rc.Control(func(fd uintptr) { flags, err = fcntlFlags(int(fd)) })
	if err != nil || flags&unix.O_NONBLOCK == 0 {
		t.Errorf("master flags %#x (%v): want O_NONBLOCK", flags, err)
	}
	sf, err := fcntlFlags(int(s.Fd()))
	if err != nil || sf&unix.O_NONBLOCK != 0 {
		t.Errorf("slave flags %#x (%v): want blocking", sf, err)
	}
}

func fcntlFlags(fd int) (int, error) { return unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0) }
