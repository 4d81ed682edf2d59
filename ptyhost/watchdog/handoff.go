//go:build unix

package watchdog

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The watchdog is dumpable from its execve until its Go runtime is up and
// it has called ptyhost.ForbidInspection. In that window a program of the
// same user (one inside a terminal, after it killed the previous
// watchdog) could open /proc/WATCHDOG/fd/N: read the token from the
// announcement pipe, or hold the pipe open for writing so that the
// watchdog never sees its parent's end of file. So the watchdog starts
// without that pipe. Its only extra descriptor is one end of a Unix
// socket pair (a socket cannot be opened through /proc at all); once it
// is not dumpable it writes one byte there, and the parent, which waits
// for that byte (at most readyTimeout), only then makes the pipe, writes
// the token, and passes the pipe's read end over the socket
// (SCM_RIGHTS). The watchdog puts it on its standard input.

// handoffEnv names the descriptor of the watchdog's end of the socket.
const handoffEnv = "PTYPLEX_WATCHDOG_HANDOFF"

// readyTimeout bounds the wait for a new watchdog to say it is not
// dumpable: its Go runtime starting, on a loaded machine with a race
// build, takes well under a second.
const readyTimeout = 10 * time.Second

// ready is the byte the watchdog sends once it is not dumpable.
const ready = 'R'

// handoffPair makes the socket pair: ours, and the watchdog's (for
// cmd.ExtraFiles, so it is descriptor 3 there).
func handoffPair() (ours *net.UnixConn, theirs *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	unix.CloseOnExec(fds[0])
	unix.CloseOnExec(fds[1])
	f := os.NewFile(uintptr(fds[0]), "watchdog handoff")
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		unix.Close(fds[1])
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return c.(*net.UnixConn), os.NewFile(uintptr(fds[1]), "watchdog handoff"), nil
}

// handOver waits for the watchdog's ready byte, then sends it pipe.
func handOver(c *net.UnixConn, pipe *os.File) error {
	c.SetDeadline(time.Now().Add(readyTimeout))
	var b [1]byte
	if _, err := c.Read(b[:]); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return fmt.Errorf("it did not say it was ready (not dumpable) within %v", readyTimeout)
		}
		return fmt.Errorf("waiting for it to be ready: %w", err)
	}
	if b[0] != ready {
		return fmt.Errorf("it sent %q instead of its ready byte", b[0])
	}
	if _, _, err := c.WriteMsgUnix([]byte{ready}, unix.UnixRights(int(pipe.Fd())), nil); err != nil {
		return fmt.Errorf("passing the announcement pipe: %w", err)
	}
	return nil
}

// receivePipe is the watchdog's side: called once it is not dumpable, it
// says so, receives the announcement pipe and makes it descriptor 0.
// Without handoffEnv (a watchdog started some other way) it does nothing.
func receivePipe() error {
	v := os.Getenv(handoffEnv)
	if v == "" {
		return nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("%s=%q: %w", handoffEnv, v, err)
	}
	f := os.NewFile(uintptr(fd), "watchdog handoff")
	defer f.Close()
	if _, err := f.Write([]byte{ready}); err != nil {
		return fmt.Errorf("saying ready: %w", err)
	}
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(fd, b[:], oob, 0)
	for err == syscall.EINTR {
		_, oobn, _, _, err = unix.Recvmsg(fd, b[:], oob, 0)
	}
	if err != nil {
		return fmt.Errorf("receiving the announcement pipe: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return fmt.Errorf("receiving the announcement pipe: no descriptor came (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		return fmt.Errorf("receiving the announcement pipe: no descriptor came (%v)", err)
	}
	if err := unix.Dup2(fds[0], 0); err != nil {
		return fmt.Errorf("receiving the announcement pipe: dup2: %w", err)
	}
	unix.Close(fds[0])
	return nil
}
