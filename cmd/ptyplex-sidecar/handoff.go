//go:build unix

package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

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
// With --readopt the HELLO is sent (and its answer read) even when the
// bridge is to copy: it is how the connection asks for re-adoption.
func handOff(c *net.UnixConn) (code int, done bool) {
	copyOnly := os.Getenv(copyEnv) == "1" || !handOffable(0) || !handOffable(1)
	if copyOnly && !*readopt {
		return 0, false
	}
	c.SetDeadline(time.Now().Add(handOffBound))
	br := bufio.NewReader(c)
	r := proto.NewReader(br)
	fail := func(err error) (int, bool) {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar: %v\n", err)
		return 1, true
	}
	var asks []string
	if *readopt {
		asks = append(asks, proto.FeatureReadopt)
	}
	if err := proto.WriteFrame(c, proto.TypeHello, proto.Marshal(proto.SidecarHello(version.Version, asks))); err != nil {
		return fail(err)
	}
	h, err := readUntil(r, proto.TypeHelloReply)
	if err != nil {
		return fail(fmt.Errorf("waiting for its HELLO: %w", err))
	}
	hello, err := proto.ParseHello(h.Body)
	if *readopt && (err != nil || !hello.Has(proto.FeatureReadopt)) {
		// An older server: OPENs of ids it has are refused as before.
		fmt.Fprintln(os.Stderr, "ptyplex-sidecar: --readopt: the persistent sidecar does not re-adopt terminals (an older version; --upgrade it)")
	}
	if copyOnly || err != nil || !hello.Has(proto.FeatureHandoff) {
		// An older server: it sent nothing but the answer, which the
		// host did not ask for; copy from here.
		return keepCopying(c, br)
	}
	frame := proto.AppendFrame(nil, proto.TypeHandoff, []byte("{}"))
	if _, _, err := c.WriteMsgUnix(frame, unix.UnixRights(0, 1), nil); err != nil {
		return fail(fmt.Errorf("handing the host's descriptors over: %w", err))
	}
	a, err := readUntil(r, proto.TypeHandedOff, proto.TypeError)
	if err != nil {
		return fail(fmt.Errorf("waiting for the answer to HANDOFF: %w", err))
	}
	if a.Type == proto.TypeError {
		// Refused (its log says why): the descriptors are still ours.
		return keepCopying(c, br)
	}
	c.SetDeadline(time.Time{})
	// The server holds the host's pipes now. Ours are closed (/dev/null
	// takes their numbers, so that nothing else is opened there): the
	// host sees the end of its stdout when the server closes its copy,
	// and no process that could open our /proc/PID/fd finds the pipes.
	if err := releaseStdio(); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
	}
	for {
		f, err := r.ReadFrame()
		if err != nil {
			// The server went away without a word (an upgrade's exec,
			// a crash): a bridge that copies ends quietly then too.
			if err != io.EOF && !errors.Is(err, unix.ECONNRESET) {
				fmt.Fprintf(os.Stderr, "ptyplex-sidecar: the persistent sidecar: %v\n", err)
			}
			return 0, true
		}
		if f.Type != proto.TypeHostEnded {
			continue
		}
		var e proto.HostEnded
		if err := json.Unmarshal(f.Body, &e); err != nil {
			return fail(fmt.Errorf("malformed HOST_ENDED: %v", err))
		}
		if e.Code != 0 && e.Reason != "" {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s\n", printable(e.Reason))
		}
		return e.Code, true
	}
}

// keepCopying ends the handoff that did not happen: whatever the server
// sent past its answers (nothing, as the protocol goes) is the host's.
func keepCopying(c *net.UnixConn, br *bufio.Reader) (int, bool) {
	c.SetDeadline(time.Time{})
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		if _, err := os.Stdout.Write(b); err != nil {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: to the host: %v\n", err)
			return 1, true
		}
	}
	return 0, false
}

// readUntil reads frames until one of the types in want.
func readUntil(r *proto.Reader, want ...proto.Type) (proto.Frame, error) {
	for {
		f, err := r.ReadFrame()
		if err != nil {
			return f, err
		}
		for _, t := range want {
			if f.Type == t {
				return f, nil
			}
		}
	}
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
