//go:build unix

package ptyhost

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ptyplex/ptyplex/internal/nbwrite"
	"golang.org/x/sys/unix"
)

// Process is one child running in its own PTY. Read, Write, Resize and
// Signal may be called from different goroutines.
type Process struct {
	pid    int
	master *os.File // PTY master; pollable, so Read parks a goroutine only
	pts    string   // slave device path, e.g. /dev/pts/7
	child  child    // the backend's handle on the child

	reapOnce sync.Once
	status   Status
	reapErr  error
}

// Start runs cfg.Cmd in a new PTY as a session leader with the PTY as its
// controlling terminal.
func Start(cfg Config) (*Process, error) {
	if cfg.CmdLine != "" {
		return nil, fmt.Errorf("cannot start %s: a command line (CmdLine) is only for Windows: give Args", cfg.Cmd)
	}
	resetInheritedSignals()
	env := cfg.environ()
	path, err := resolve(cfg.Cmd, env, cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, err)
	}
	if cfg.Dir != "" {
		fi, err := os.Stat(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("cwd %s: %w", cfg.Dir, err)
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("cwd %s is not a directory", cfg.Dir)
		}
	}

	spec := spawnSpec{
		path: path,
		argv: append([]string{cfg.Cmd}, cfg.Args...),
		dir:  cfg.Dir,
		env:  env,

		noPdeath: cfg.NoParentDeathSignal,
	}
	p, err := startIn(cfg, spec)
	if errors.Is(err, syscall.ENOEXEC) {
		// An executable the kernel cannot run (a script without a #!
		// line): execvp hands it to the shell (POSIX), as glibc does, so
		// node-pty's children and a shell's run it. In a new PTY: on the
		// BSDs the failed child, a session leader, revoked the first one
		// as it exited.
		spec.path = shell
		spec.argv = append([]string{shell, path}, cfg.Args...)
		p, err = startIn(cfg, spec)
	}
	return p, err
}

// shell runs what execvp hands to the shell.
const shell = "/bin/sh"

// startIn opens a PTY for cfg and starts spec in it.
func startIn(cfg Config, spec spawnSpec) (*Process, error) {
	master, tty, err := openPTY()
	if err != nil {
		return nil, err
	}
	// The slave is the child's; we only need it until the child has it.
	defer tty.Close()
	if err := setSize(master, cfg.Cols, cfg.Rows); err != nil {
		master.Close()
		return nil, err
	}
	if cfg.NodePtyTermios {
		if err := setNodePtyTermios(tty, cfg.UTF8); err != nil {
			master.Close()
			return nil, err
		}
	} else if cfg.UTF8 && iutf8 != 0 {
		if err := setInputFlag(tty, iutf8); err != nil {
			master.Close()
			return nil, err
		}
	}
	spec.tty = tty
	c, err := host.spawn(spec)
	if err != nil {
		master.Close()
		return nil, fmt.Errorf("cannot start %s: %w", cfg.Cmd, err)
	}
	return &Process{pid: c.pid(), master: master, pts: tty.Name(), child: c}, nil
}

// Adopt takes over a child of this process that another image of it
// started before it re-executed itself (execve keeps children and, once
// their close-on-exec flag is cleared, descriptors): master is the PTY
// master it inherited, pts the slave's path. The child may have exited
// already and be waiting, a zombie, to be reaped; WaitExit, Reap, Signal
// and KillSession work as for a child Start returned.
func Adopt(pid int, master *os.File, pts string) (*Process, error) {
	if pid <= 0 {
		return nil, fmt.Errorf("adopt: bad pid %d", pid)
	}
	c, err := host.adopt(pid)
	if err != nil {
		return nil, err
	}
	return &Process{pid: pid, master: master, pts: pts, child: c}, nil
}

// MasterFD is the number of the PTY master's descriptor, for handing it to
// another image of this process. It leaves the descriptor's mode alone
// (os.File.Fd would make it blocking).
func (p *Process) MasterFD() (int, error) {
	n := -1
	err := control(p.master, func(fd int) error { n = fd; return nil })
	return n, err
}

// Pid is the child's process id, which is also its process group and
// session id.
func (p *Process) Pid() int { return p.pid }

// TTY is the path of the PTY slave device.
func (p *Process) TTY() string { return p.pts }

// Read reads output from the PTY. It returns io.EOF once every holder of the
// slave side has closed it (the kernel reports EIO then).
//
// A PTY hands out at most a few KiB per read(2), so Read keeps reading until
// b is full or nothing more is buffered, and parks only when there is no
// byte at all. One call thus returns everything the child has written so far
// (up to len(b)), which keeps per-chunk costs off a flooding terminal.
func (p *Process) Read(b []byte) (int, error) { return p.readSpan(b, nil, true, unix.Read) }

// ReadSpan is Read into a and then b, as if they were one buffer: a
// reader whose buffer is a ring of chunks (the persistent server's
// journal) reads past the end of one chunk into the next in one call,
// instead of taking a short read there. Its reads keep the goroutine's
// P while they wait in the kernel (quickRead): a server of many
// flooding terminals, which reads them all with it, does not grow a
// thread for each.
func (p *Process) ReadSpan(a, b []byte) (int, error) { return p.readSpan(a, b, true, quickRead) }

// TryRead is Read that never waits: with nothing buffered it returns 0
// and no error. A reader that already holds output to send uses it to
// take what else is there without holding that output back.
func (p *Process) TryRead(b []byte) (int, error) { return p.readSpan(b, nil, false, unix.Read) }

// readSpan is ReadSpan, with read for read(2); with park false it
// returns at once when nothing is buffered.
func (p *Process) readSpan(a, b []byte, park bool, read func(int, []byte) (int, error)) (int, error) {
	if len(a) == 0 {
		a, b = b, nil
	}
	if len(a) == 0 {
		return 0, nil
	}
	rc, err := p.master.SyscallConn()
	if err != nil {
		return 0, err
	}
	got := 0
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		for {
			buf := a
			if got >= len(a) {
				buf = b[got-len(a):]
			} else {
				buf = a[got:]
			}
			if len(buf) == 0 {
				return true
			}
			n, err := read(int(fd), buf)
			switch {
			case n > 0:
				got += n
			case err == unix.EINTR:
			case err == unix.EAGAIN:
				return got > 0 || !park // nothing buffered: park unless we have data
			case err == unix.EIO || (err == nil && n == 0):
				rerr = io.EOF
				return true
			default:
				rerr = err
				return true
			}
		}
	})
	if got > 0 {
		// Report data now; a pending EOF or error shows up on the next call.
		return got, nil
	}
	if err != nil {
		return 0, err
	}
	return 0, rerr
}

// Write sends input to the PTY. It blocks while the PTY's input buffer is
// full (the child is not reading), until the write deadline if one is set.
func (p *Process) Write(b []byte) (int, error) { return p.master.Write(b) }

// TryWrite writes as much of b as the PTY's input buffer takes now, without
// waiting, and returns how much that was: all of it when the child keeps
// up, none when the buffer is full. It is for callers that must not block
// but want a keystroke on its way at once; the rest is theirs to queue.
func (p *Process) TryWrite(b []byte) (int, error) {
	rc, err := p.master.SyscallConn()
	if err != nil {
		return 0, err
	}
	return nbwrite.Write(rc, b)
}

// SetReadDeadline bounds Read calls, present and future; a zero time
// removes the bound. A Read past the deadline returns what it had read,
// or, with nothing read, an error matching os.ErrDeadlineExceeded: a
// caller can stop its reader at a known point without closing the PTY.
func (p *Process) SetReadDeadline(t time.Time) error { return p.master.SetReadDeadline(t) }

// SetWriteDeadline bounds Write calls, present and future; a zero time
// removes the bound. A Write past the deadline fails with an error
// matching os.ErrDeadlineExceeded after writing what fitted.
func (p *Process) SetWriteDeadline(t time.Time) error { return p.master.SetWriteDeadline(t) }

// Resize changes the PTY window size; the kernel sends SIGWINCH to the
// foreground process group.
func (p *Process) Resize(cols, rows int) error { return setSize(p.master, cols, rows) }

// ResizePixels is Resize with the window's size in pixels too, which
// programs read with TIOCGWINSZ (ws_xpixel, ws_ypixel; 0 means unknown,
// as after Resize).
func (p *Process) ResizePixels(cols, rows, xpixel, ypixel int) error {
	return setWinsize(p.master, cols, rows, xpixel, ypixel)
}

// Size reports the PTY window size.
func (p *Process) Size() (cols, rows int, err error) {
	var ws *unix.Winsize
	err = control(p.master, func(fd int) (err error) {
		ws, err = unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("get pty size: %w", err)
	}
	return int(ws.Col), int(ws.Row), nil
}

// UnreadOutput is how many bytes of output the kernel holds on the master
// that Read has not taken yet. A caller that has seen the program go quiet
// checks it is 0 before trusting the screen it has: the last bytes may
// still be on their way.
func (p *Process) UnreadOutput() (int, error) {
	var n int
	err := control(p.master, func(fd int) (err error) {
		n, err = unix.IoctlGetInt(fd, ioctlUnread)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pty unread output: %w", err)
	}
	return n, nil
}

// setInputFlag sets flag in the terminal's c_iflag (tcgetattr, tcsetattr).
// tty is the slave, blocking and not yet the child's.
func setInputFlag(tty *os.File, flag uint32) error {
	fd := int(tty.Fd())
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return fmt.Errorf("tcgetattr: %w", err)
	}
	t.Iflag |= iflagBits(flag)
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, t); err != nil {
		return fmt.Errorf("tcsetattr: %w", err)
	}
	return nil
}

// Termios returns the PTY's current terminal attributes.
func (p *Process) Termios() (*unix.Termios, error) {
	var t *unix.Termios
	err := control(p.master, func(fd int) (err error) {
		t, err = unix.IoctlGetTermios(fd, ioctlGetTermios)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("tcgetattr: %w", err)
	}
	return t, nil
}

// SignalGroup sends sig to the child's process group.
func (p *Process) SignalGroup(sig syscall.Signal) error {
	if err := unix.Kill(-p.pid, sig); err != nil {
		return fmt.Errorf("signal process group %d: %w", p.pid, err)
	}
	return nil
}

// Signal sends sig to the child alone. Before the child is reaped its pid
// cannot be reused, so this never hits a stranger.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := p.child.signal(sig); err != nil {
		return fmt.Errorf("signal process %d: %w", p.pid, err)
	}
	return nil
}

// WaitExit blocks until the child has exited, without reaping it, so the
// pid (and with it the session id) stays reserved while the caller cleans
// up the rest of the session. It returns early with an error if the
// Process is closed.
func (p *Process) WaitExit() error {
	_, err := p.child.waitExit()
	return err
}

// ExitStatus blocks like WaitExit and returns how the child ended, still
// without reaping it.
func (p *Process) ExitStatus() (Status, error) { return p.child.waitExit() }

// Reap collects the child's exit status. Call it after WaitExit: the Linux
// backend blocks a thread in wait4(2) while the child runs. Later calls
// return the first result.
func (p *Process) Reap() (Status, error) {
	p.reapOnce.Do(func() { p.status, p.reapErr = p.child.reap() })
	return p.status, p.reapErr
}

// KillSession sends sig to every process of the child's session other than
// the child itself: background jobs in other process groups outlive the
// foreground group otherwise. With holders set it also signals any process
// that holds the PTY slave open, which catches daemons that left the session
// with setsid(2) but kept the terminal as stdio (on Linux only; see
// procs_bsd.go). It returns how many processes it signalled.
//
// Call it before reaping the child: until then the session id cannot be
// reused by an unrelated process.
func (p *Process) KillSession(sig syscall.Signal, holders bool) int {
	return host.killSession(p.pid, p.pts, sig, holders)
}

// Hangup closes the PTY master, so blocked Read and Write calls return. It
// is the last resort for a PTY that something unknown keeps open.
func (p *Process) Hangup() error { return p.master.Close() }

// Close releases the PTY master and the backend's handle. It does not signal the child;
// Reap still works afterwards.
func (p *Process) Close() error {
	err := p.master.Close()
	if errors.Is(err, os.ErrClosed) {
		err = nil
	}
	p.child.close()
	return err
}
