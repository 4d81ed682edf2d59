//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
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
//
// The HELLO carries our environment and working directory, which the
// server starts the host's terminals from (as a plain sidecar the host
// spawned would), and with
// --readopt asks for re-adoption; it is sent (its answer read) even when
// the bridge is to copy.
//
// An error says the exchange failed before the host's descriptors were
// the server's: the caller says so, or dials again (closedBeforeAnswer).
func handOff(c *net.UnixConn) (code int, done bool, err error) {
	if os.Getenv(copyEnv) == "1" || !handOffable(0) || !handOffable(1) {
		if err := bridgeHello(c); err != nil {
			return 0, false, err
		}
		return 0, false, nil
	}
	h, leftover, err := client.HandOff(c, 0, 1, client.HandOffOptions{Version: version.Version, Features: bridgeAsks(),
		Env: os.Environ(), Cwd: workDir(), Bound: handOffBound})
	if err != nil {
		return 0, false, err
	}
	if h == nil {
		// Not handed over (an older server, or it refused): what it
		// sent past its answers is the host's, and we copy from here.
		if len(leftover) > 0 {
			if _, err := os.Stdout.Write(leftover); err != nil {
				fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the host: %v\n", err)
				return 1, true, nil
			}
		}
		return 0, false, nil
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
		return 0, true, nil
	}
	if e.Code != 0 && e.Reason != "" {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s\n", printable(e.Reason))
	}
	return e.Code, true, nil
}

// bridgeTries bounds the dials of a bridge whose server closes the
// connection before it answers (closedBeforeAnswer).
const bridgeTries = 3

// closedBeforeAnswer reports whether err, from handOff, says the server
// closed the connection before it answered the HELLO: one that was going
// away as the bridge dialled it (a SIGKILL, a crash, a STOP) accepted
// the connection, or had it queued, and never read it. Nothing of the
// host's reached it, so the bridge can dial again.
func closedBeforeAnswer(err error) bool { return errors.Is(err, client.ErrHelloUnanswered) }

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

// bridgeAsks are the features the bridge's HELLO asks for.
func bridgeAsks() []string {
	if *readopt {
		return []string{proto.FeatureReadopt}
	}
	return nil
}

// bridgeHello sends our HELLO on c, which the bridge will copy: our
// environment and, with --readopt, the ask for re-adoption. Its answer
// the host did not ask for and does not get. It says on stderr when the
// server does not re-adopt (an older one, which refuses OPENs of ids it
// has, as before; it ignores the environment too).
func bridgeHello(c *net.UnixConn) error {
	c.SetDeadline(time.Now().Add(handOffBound))
	defer c.SetDeadline(time.Time{})
	hello := proto.SidecarHello(version.Version, bridgeAsks())
	hello.Env, hello.Cwd = os.Environ(), workDir()
	if err := proto.WriteFrame(c, proto.TypeHello, proto.Marshal(hello)); err != nil {
		return client.HelloUnanswered(err)
	}
	r := proto.NewReader(c)
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return fmt.Errorf("waiting for its HELLO: %w", client.HelloUnanswered(err))
		}
		if f.Type != proto.TypeHelloReply {
			continue // nothing else comes before it
		}
		if h, err := proto.ParseHello(f.Body); *readopt && (err != nil || !h.Has(proto.FeatureReadopt)) {
			fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --readopt: the persistent sidecar does not re-adopt terminals (an older version; --upgrade it)")
		}
		return nil
	}
}

// workDir is the bridge's working directory, where its host's terminals
// start when their OPEN names none; "" (the server's) when it is gone.
func workDir() string {
	wd, _ := os.Getwd()
	return wd
}
