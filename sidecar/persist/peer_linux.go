package persist

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// insideTerminal reports whether the process on the other end of c runs in
// one of this server's terminals: a descendant of the server (every
// terminal's program is a child of ours), or a process in the session of
// one of them (sids: each terminal's program leads a session of its own),
// which a program that forked and let its parent exit still is. A program
// that also made a session of its own and was reparented is not caught:
// docs/security.md says so.
func insideTerminal(c *net.UnixConn, sids []int) (pid int, inside bool, err error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return 0, false, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return 0, false, err
	}
	if cerr != nil {
		return 0, false, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	pid = int(cred.Pid)
	if sid, err := unix.Getsid(pid); err == nil {
		for _, s := range sids {
			if s == sid {
				return pid, true, nil
			}
		}
	}
	me := os.Getpid()
	for p, steps := pid, 0; p > 1 && steps < 4096; steps++ {
		if p == me {
			return pid, true, nil
		}
		pp, err := parentOf(p)
		if err != nil {
			// Gone meanwhile: a peer that vanished asks for nothing.
			return pid, false, fmt.Errorf("the process of the peer (pid %d): %w", pid, err)
		}
		p = pp
	}
	return pid, false, nil
}

// parentOf reads pid's parent from /proc/PID/stat ("pid (comm) state ppid
// ..."; comm may hold spaces and parentheses, hence the last ')').
func parentOf(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, fmt.Errorf("malformed /proc/%d/stat", pid)
	}
	return strconv.Atoi(string(f[1]))
}

// inspectable reports whether another process of our user could open our
// descriptors through /proc/PID/fd: whether we are dumpable.
func inspectable() bool {
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err != nil || d != 0
}
