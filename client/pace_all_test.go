//go:build linux

package client

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// logWatch shows the sidecar's diagnostics in the test's log and lets a
// test wait for a line.
type logWatch struct {
	t    *testing.T
	mu   sync.Mutex
	text strings.Builder
	seen chan struct{} // closed and replaced at every write
}

func newLogWatch(t *testing.T) *logWatch { return &logWatch{t: t, seen: make(chan struct{})} }

func (l *logWatch) Write(p []byte) (int, error) {
	l.t.Logf("sidecar: %s", bytes.TrimRight(p, "\n"))
	l.mu.Lock()
	l.text.Write(p)
	close(l.seen)
	l.seen = make(chan struct{})
	l.mu.Unlock()
	return len(p), nil
}

// waitFor waits until the log holds s.
func (l *logWatch) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.NewTimer(waitBound)
	defer deadline.Stop()
	for {
		l.mu.Lock()
		found, seen := strings.Contains(l.text.String(), s), l.seen
		l.mu.Unlock()
		if found {
			return
		}
		select {
		case <-seen:
		case <-deadline.C:
			t.Fatalf("the sidecar did not log %q", s)
		}
	}
}

// holdingBack is the sidecar's line as it stops reading frames for a
// terminal's full input queue.
func holdingBack(id string) string {
	return fmt.Sprintf("terminal %q: holding back further frames", id)
}

// rawReady opens a terminal running script after `stty raw -echo; echo
// READY` and reads up to READY.
func rawReady(t *testing.T, c *Client, o OpenOptions, script string) *Terminal {
	t.Helper()
	o.Cmd, o.Args = "/bin/sh", []string{"-c", "stty raw -echo; echo READY; " + script}
	term := open(t, c, o)
	ready := make([]byte, len("READY\n"))
	_, err := io.ReadFull(term, ready)
	require.NoError(t, err)
	require.Equal(t, "READY\n", string(ready))
	return term
}

// A paste into a terminal without credit, on the connection of a credited
// terminal whose echoing child waits for a CREDIT while the sidecar holds
// its input: the uncredited paste was not paced, filled the sidecar's 1
// MiB look-ahead, and the CREDIT behind it was never read; both pastes
// and the echo waited for ever. Every terminal's INPUT counts against the
// connection's pieces now.
func TestUncreditedPasteBesideAnEchoingCreditedOne(t *testing.T) {
	logs := newLogWatch(t)
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: logs, Hello: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	echo := rawReady(t, c, OpenOptions{ID: "echo", Window: 16 << 10}, "exec cat")
	sink := rawReady(t, c, OpenOptions{ID: "sink", Raw: true}, "exec cat >/dev/null")

	const size = 20 << 20
	paste := make([]byte, size)
	for i := range paste {
		paste[i] = 'a' + byte((i+i/4099)%26)
	}
	wrote := make(chan error, 2)
	go func() {
		_, err := echo.Write(paste)
		wrote <- err
	}()
	// Nobody reads the echo yet: cat stops once its output waits for
	// credit, and the sidecar holds the rest of the paste.
	logs.waitFor(t, holdingBack("echo"))
	go func() {
		_, err := sink.Write(make([]byte, 4<<20))
		wrote <- err
	}()
	// Held: the sink's writer waits behind the echo's PONG (paced), or
	// its write is blocked (unpaced).
	waitWriters(t, c, 2)

	echoed := make(chan error, 1)
	got := make([]byte, size)
	go func() {
		_, err := io.ReadFull(echo, got)
		echoed <- err
	}()
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	for pending := 3; pending > 0; pending-- {
		select {
		case err := <-wrote:
			require.NoError(t, err, "Write")
		case err := <-echoed:
			require.NoError(t, err, "reading the echo")
		case <-deadline.C:
			t.Fatalf("the pastes and the echo did not finish in 60 s (%d of 3 pending): the CREDIT waits behind the uncredited paste", pending)
		}
	}
	require.True(t, bytes.Equal(paste, got), "the echo is the paste")
}

// A paste into a child that never reads waits for ever once the sidecar
// holds 16 MiB for it (the protocol's bound), but it holds up no other
// terminal of the client: another terminal's keystrokes are still
// written, and its CREDITs too, so that its output flows. Unpaced, the
// paste filled the pipe: every other write and every CREDIT waited
// behind it.
func TestStuckPasteHoldsUpNoOtherTerminal(t *testing.T) {
	logs := newLogWatch(t)
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: logs, Hello: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	stuck := rawReady(t, c, OpenOptions{ID: "stuck", Raw: true}, "exec sleep 1000")
	// other prints 256 KiB through a 16 KiB window once the test lets
	// it go on: sixteen CREDITs at least.
	const outSize = 256 << 10
	other := rawReady(t, c, OpenOptions{ID: "other", Window: 16 << 10},
		fmt.Sprintf("kill -STOP $$; head -c %d /dev/zero | tr '\\0' x", outSize))

	wrote := make(chan error, 1)
	go func() {
		_, err := stuck.Write(make([]byte, 18<<20))
		wrote <- err
	}()
	logs.waitFor(t, holdingBack("stuck"))
	waitWriteBlocked(t, c)

	start := time.Now()
	typed := make(chan error, 1)
	go func() {
		_, err := other.Write([]byte("x"))
		typed <- err
	}()
	select {
	case err := <-typed:
		require.NoError(t, err)
		t.Logf("a keystroke to another terminal took %v", time.Since(start))
	case <-time.After(waitBound):
		t.Fatal("a keystroke to another terminal waited behind the stuck paste")
	}

	require.NoError(t, syscall.Kill(other.Pid(), syscall.SIGCONT))
	out := make([]byte, outSize)
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(other, out)
		read <- err
	}()
	select {
	case err := <-read:
		require.NoError(t, err)
		require.Equal(t, bytes.Repeat([]byte("x"), outSize), out)
	case <-time.After(waitBound):
		t.Fatal("another terminal's output stopped: its CREDITs waited behind the stuck paste")
	}

	// The stuck paste ends with its terminal.
	require.NoError(t, syscall.Kill(stuck.Pid(), syscall.SIGKILL))
	select {
	case err := <-wrote:
		require.Error(t, err)
	case <-time.After(waitBound):
		t.Fatal("the stuck Write did not end with its terminal")
	}
}
