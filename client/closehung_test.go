//go:build linux

package client

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hungCloseBound is how long Close may take with a hung transport: the
// probe's bound, the kill, the reaping, and slack for a loaded machine
// (3 s of slack was too little under the race detector beside CPU hogs,
// once in a stress round). Close took 15 s and more before it had the
// probe, so the bound still tells the two apart.
const hungCloseBound = probeBound + 8*time.Second

// closeWithin closes c; the test fails if that takes longer than bound.
func closeWithin(t *testing.T, c *Client, bound time.Duration) {
	t.Helper()
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close took %v (%v)", time.Since(start), err)
	case <-time.After(bound):
		t.Fatalf("Close did not return within %v", bound)
	}
}

// A reconnecting client whose transport hangs (stopped: it reads nothing
// and sends nothing) closes within the probe's bound and a little more. Close waited for the
// keepalive to give the transport up (10 s and more) or its own 15 s.
// The transport is a bridge that copies frames, as ssh does (one that
// hands our pipes over to the server would go on talking while stopped).
func TestCloseOfHungTransportIsBounded(t *testing.T) {
	env := append(persistEnv(t, "hungclose"), "PTYPLEX_BRIDGE_COPY=1")
	c, err := Start(Options{Transport: []string{sidecarBin, "--persist", "hungclose"}, Env: env, Stderr: testLog{t},
		Reconnect: &ReconnectPolicy{InitialDelay: 10 * time.Millisecond}})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	require.NoError(t, err)
	pid := c.Pid()
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	closeWithin(t, c, hungCloseBound)
	select {
	case <-term.Done():
	case <-time.After(waitBound):
		t.Fatal("the terminal did not finish with the client")
	}
}

// A write blocked on a hung transport holds Close up for about a second,
// not for the 15 s Close gives a sidecar to end. Here the transport is
// a plain sidecar, stopped, with a paste in its pipe.
func TestCloseWithWriteBlockedOnHungTransport(t *testing.T) {
	c, err := Start(Options{Transport: []string{sidecarBin}, Stderr: testLog{t}, Hello: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	term := rawReady(t, c, OpenOptions{Raw: true}, "exec cat >/dev/null")
	pid := c.Pid()
	require.NotZero(t, pid)
	require.NoError(t, syscall.Kill(pid, syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGCONT) })
	go term.Write(make([]byte, 4<<20))
	// The pipe fills: the write stays blocked.
	waitWriteBlocked(t, c)
	closeWithin(t, c, hungCloseBound)
}
