//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/creack/pty"
)

// The plain baseline: what any host could do on its own, with nothing of
// ptyplex in it. Each child gets a PTY from creack/pty, and one goroutine
// per PTY reads its master with blocking 64 KiB read(2) calls (no poller,
// no frames, no second process) until the slave side is gone.

type plainChild struct {
	cmd    *exec.Cmd
	master *os.File
	fd     int
}

func startPlain(name string, args ...string) (*plainChild, error) {
	cmd := exec.Command(name, args...)
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return nil, fmt.Errorf("plain: start %s: %w", name, err)
	}
	// Fd puts the descriptor back in blocking mode and takes it out of
	// the runtime's poller: from here on every read is a plain read(2).
	return &plainChild{cmd: cmd, master: master, fd: int(master.Fd())}, nil
}

// drain reads to EOF (EIO once the child's side is closed on Linux),
// calling onData for each chunk, then reaps the child.
func (c *plainChild) drain(onData func([]byte)) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	var rerr error
	for {
		m, err := syscall.Read(c.fd, buf)
		if m > 0 {
			n += int64(m)
			if onData != nil {
				onData(buf[:m])
			}
			continue
		}
		if err == syscall.EINTR {
			continue
		}
		if err != nil && !errors.Is(err, syscall.EIO) {
			rerr = err
		}
		break
	}
	c.master.Close()
	werr := c.cmd.Wait()
	if rerr != nil {
		return n, rerr
	}
	var ee *exec.ExitError
	if errors.As(werr, &ee) && ee.ExitCode() > 0 {
		return n, fmt.Errorf("plain: pid %d exited with %d", c.cmd.Process.Pid, ee.ExitCode())
	}
	return n, nil
}

// plainThroughput is directThroughput with plain reads.
func plainThroughput(f flood, n int, raw bool) (float64, error) {
	return inProcessThroughput("plain", f, n, raw, func() (func() (int64, error), error) {
		c, err := startPlain("/bin/sh", f.script(raw)...)
		if err != nil {
			return nil, err
		}
		return func() (int64, error) { return c.drain(nil) }, nil
	})
}
