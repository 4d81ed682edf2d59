//go:build unix

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/version"
	"golang.org/x/sys/unix"
)

// copyEnv, set to 1, makes the bridge copy frames as it did before it
// could hand the host's descriptors over: the tests use it to run the
// copying bridge against a server that offers the handoff.
const copyEnv = "PTYPLEX_BRIDGE_COPY"

// handOffBound is how long the bridge waits for each answer of the
// server before it hands over (HELLO, HANDOFF).
const handOffBound = 10 * time.Second

// handOff gives our stdin and stdout to the server on c, so that it reads
// and writes the host's frames itself (see sidecar/persist/handoff.go),
// and then waits for the server to say how the host's connection ended:
// done is true and code is our exit status. done is false when the
// descriptors stay ours, and we are to copy: the server does not offer
// the handoff (an older one), refused it, or our stdin or stdout is not
// a pipe or a socket (a terminal's open file is shared with the user's
// shell, and the server would put it in non-blocking mode).
func handOff(c *net.UnixConn) (code int, done bool) {
	if os.Getenv(copyEnv) == "1" || !handOffable(0) || !handOffable(1) {
		return 0, false
	}
	fail := func(err error) (int, bool) {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar: %v\n", err)
		return 1, true
	}
	h, leftover, err := client.HandOff(c, 0, 1, client.HandOffOptions{Version: version.Version, Bound: handOffBound})
	if err != nil {
		return fail(err)
	}
	if h == nil {
		// Not handed over (an older server, or it refused): what it
		// sent past its answers is the host's, and we copy from here.
		if len(leftover) > 0 {
			if _, err := os.Stdout.Write(leftover); err != nil {
				fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the host: %v\n", err)
				return 1, true
			}
		}
		return 0, false
	}
	// The server holds the host's pipes now. Ours are closed (/dev/null
	// takes their numbers, so that nothing else is opened there): the
	// host sees the end of its stdout when the server closes its copy,
	// and no process that could open our /proc/PID/fd finds the pipes.
	if err := releaseStdio(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
	}
	e, err := h.Wait()
	if err != nil {
		// The server went away without a word (an upgrade's exec, a
		// crash): a bridge that copies ends quietly then too.
		if err != io.EOF {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar: %v\n", err)
		}
		return 0, true
	}
	if e.Code != 0 && e.Reason != "" {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s\n", printable(e.Reason))
	}
	return e.Code, true
}

// handOffable reports whether descriptor fd is a pipe or a socket.
func handOffable(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false
	}
	t := st.Mode & unix.S_IFMT
	return t == unix.S_IFIFO || t == unix.S_IFSOCK
}

// releaseStdio puts /dev/null at descriptors 0 and 1.
func releaseStdio() error {
	null, err := unix.Open(os.DevNull, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer unix.Close(null)
	for _, fd := range []int{0, 1} {
		if err := unix.Dup2(null, fd); err != nil {
			return fmt.Errorf("release descriptor %d: %w", fd, err)
		}
	}
	return nil
}
