package persist_test

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// unreadOn is how many bytes wait in c's socket to be read.
func unreadOn(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	rc.Control(func(fd uintptr) {
		n, err = unix.IoctlGetInt(int(fd), unix.SIOCINQ)
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
