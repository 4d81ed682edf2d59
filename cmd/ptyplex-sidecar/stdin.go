//go:build unix

package main

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pollableStdin returns stdin switched to non-blocking mode and registered
// with the runtime's poller, when stdin is a pipe or a socket.
//
// Why: a blocking read(2) of stdin keeps a P attached to the thread parked
// in the syscall, so a goroutine the dispatch loop has just woken (a
// terminal's input writer) can wait until sysmon takes the P back, anywhere
// from 20 µs to 10 ms when every other P is busy (with one P, always).
// Read through the poller, the dispatch goroutine parks instead and the
// woken one runs at once. Measured from Node on one P (keystroke echo,
// interleaved runs on a loaded 2-core VM): p50 303 -> 197 µs, p90 651 ->
// 281 µs, p99 6.3 -> 3.6 ms.
//
// Only pipes and sockets: O_NONBLOCK belongs to the open file, which a
// terminal shares with the shell that started us (it would find its own
// stdin non-blocking after we exit). A pipe's read end is ours alone.
//
// A socket may be our stdout (and stderr) as well: one socket for both
// directions is what socat's EXEC, inetd and systemd's Accept=yes give a
// program. Its O_NONBLOCK is then stdout's too, and os.Stdout, made while
// the socket blocked, writes outside the poller: a write to a socket the
// host has not emptied yet would fail with EAGAIN, which we take for a
// host that is gone, and every terminal would be killed. So when making
// stdin non-blocking turns stdout or stderr non-blocking with it, stdin
// stays as it was.
func pollableStdin() io.Reader {
	var st unix.Stat_t
	if err := unix.Fstat(0, &st); err != nil {
		return os.Stdin
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return os.Stdin
	}
	blocking := func(fd int) bool {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		return err == nil && fl&unix.O_NONBLOCK == 0
	}
	if !blocking(0) {
		// The host gave it to us non-blocking: the runtime saw that at
		// start-up and registered os.Stdin with the poller already. A
		// second File for fd 0 could not register, and its reads would
		// fail with EAGAIN at once, which ended the sidecar.
		return os.Stdin
	}
	outBlocks, errBlocks := blocking(1), blocking(2)
	if err := unix.SetNonblock(0, true); err != nil {
		return os.Stdin
	}
	if outBlocks && !blocking(1) || errBlocks && !blocking(2) {
		unix.SetNonblock(0, false)
		return os.Stdin
	}
	// NewFile sees the non-blocking flag and uses the poller.
	return os.NewFile(0, "/dev/stdin")
}

// watchStdout calls gone once the host has closed its end of our stdout
// (it exited, or closed the pipe), when stdout is a pipe or a socket:
// poll(2) reports that as POLLERR or POLLHUP without our writing. Until
// then we learned it only at our next write, which idle terminals never
// make, nor a sidecar that holds back the host's frames for a child that
// does not read its input: the sidecar and every terminal outlived their
// host.
func watchStdout(gone func()) {
	var st unix.Stat_t
	if err := unix.Fstat(1, &st); err != nil {
		return
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return
	}
	go func() {
		// No events asked for: only the error and hang-up conditions,
		// which poll always reports, wake it. The thread it blocks is
		// the price of hearing of a host that is gone without writing.
		fds := []unix.PollFd{{Fd: 1}}
		for {
			_, err := unix.Poll(fds, -1)
			if err == unix.EINTR {
				continue
			}
			if err == nil && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
				gone()
			}
			// Anything else (a system that reports other events even
			// so) ends the watch rather than spin.
			return
		}
	}()
}
