//go:build linux

package client

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A paste queued while a reconnecting client was down, larger than the
// server takes (16 MiB) for a child that does not read it yet: the resume
// wrote the whole queue before it returned, holding the lock every frame
// about a terminal takes (CREDIT included), so the reconnect did not
// complete, and nothing else moved, until the child read, or until the
// keepalive, which got no answer either, took the connection for dead
// (15 s) and started over. The queue goes out paced now, from a goroutine
// of its own: the reconnect completes at once, and once the child reads
// the rest follows, and then the keystrokes written after it.
func TestQueuedPasteDoesNotHoldTheResumeUp(t *testing.T) {
	rig := newLocalRig(t, "qpace")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, QueueLimit: 32 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	openReady := func(script string) *Terminal {
		term, err := c.Open(ctx, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "stty raw -echo; echo READY; " + script}})
		require.NoError(t, err)
		ready := make([]byte, len("READY\n"))
		_, err = io.ReadFull(term, ready)
		require.NoError(t, err)
		return term
	}
	const size = 20 << 20
	slow := openReady(fmt.Sprintf("head -c %d >/dev/null; echo DONE", size))
	other := openReady("exec cat")

	require.NoError(t, os.WriteFile(rig.gate, nil, 0o600))
	require.NoError(t, syscall.Kill(c.Pid(), syscall.SIGKILL))
	ev.next(t, EventDisconnected, 1)
	// The slow child (head, in the shell's group) reads nothing until
	// the test lets it go on.
	require.NoError(t, syscall.Kill(-slow.Pid(), syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(-slow.Pid(), syscall.SIGCONT) })
	n, err := slow.Write(make([]byte, size))
	require.NoError(t, err, "queued while down")
	require.Equal(t, size, n)

	start := time.Now()
	require.NoError(t, os.Remove(rig.gate))
	ev.next(t, EventReconnected, 1)
	took := time.Since(start)
	t.Logf("reconnected after %v", took)
	require.Less(t, took, waitBound, "the reconnect waited for the queued paste")

	// Once the child reads, the flush ends: all of the paste arrives,
	// then the keystrokes written after it.
	require.NoError(t, syscall.Kill(-slow.Pid(), syscall.SIGCONT))
	done := make([]byte, len("DONE\n"))
	read := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(slow, done)
		read <- err
	}()
	select {
	case err := <-read:
		require.NoError(t, err)
		require.Equal(t, "DONE\n", string(done))
	case <-time.After(resumeBound):
		t.Fatal("the queued paste did not all arrive")
	}
	_, err = other.Write([]byte("typed"))
	require.NoError(t, err)
	echo := make([]byte, len("typed"))
	go func() {
		_, err := io.ReadFull(other, echo)
		read <- err
	}()
	select {
	case err := <-read:
		require.NoError(t, err)
		require.Equal(t, "typed", string(echo))
	case <-time.After(waitBound):
		t.Fatal("the keystrokes after the flush did not come back")
	}
}
