//go:build linux

package client

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A paste queued while a reconnecting client was down, larger than the
// server takes (16 MiB) for a child that does not read it yet: the resume
// wrote the whole queue at once holding the lock every frame about a
// terminal takes, CREDIT included, so that reading another terminal's
// output (which grants credit) blocked until that child read. The queue
// goes out paced now, without the lock while it waits: another
// terminal's output is read meanwhile, and its keystrokes follow the
// queue.
func TestQueuedPasteHoldsNoReadUpOnResume(t *testing.T) {
	rig := newLocalRig(t, "qpace")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, QueueLimit: 32 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	openReady := func(script string) *Terminal {
		term, err := c.Open(ctx, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "stty raw -echo; echo READY; " + script}, Window: 16 << 10})
		require.NoError(t, err)
		ready := make([]byte, len("READY\n"))
		_, err = io.ReadFull(term, ready)
		require.NoError(t, err)
		return term
	}
	slow := openReady("exec cat >/dev/null")
	// other prints 8 KiB, which stays buffered here until the test
	// reads it, and then echoes.
	other := openReady("head -c 8192 /dev/zero | tr '\\0' y; exec cat")
	require.Eventually(t, func() bool { return other.Buffered() == 8192 }, waitBound, 10*time.Millisecond)

	require.NoError(t, os.WriteFile(rig.gate, nil, 0o600))
	require.NoError(t, syscall.Kill(c.Pid(), syscall.SIGKILL))
	ev.next(t, EventDisconnected, 1)
	// The slow child reads nothing until the test lets it go on.
	require.NoError(t, syscall.Kill(slow.Pid(), syscall.SIGSTOP))
	t.Cleanup(func() { syscall.Kill(slow.Pid(), syscall.SIGCONT) })
	const size = 20 << 20
	wrote := make(chan error, 1)
	go func() {
		_, err := slow.Write(make([]byte, size))
		wrote <- err
	}()
	select {
	case err := <-wrote:
		require.NoError(t, err, "queued while down")
	case <-time.After(waitBound):
		t.Fatal("a write while down did not queue")
	}
	require.NoError(t, os.Remove(rig.gate))
	ev.next(t, EventReconnected, 1)
	// The flush is held up: waiting for a PONG (paced) or in a blocked
	// write (unpaced).
	waitWriteBlocked(t, c)

	read := make(chan error, 1)
	got := make([]byte, 8192)
	go func() {
		_, err := io.ReadFull(other, got)
		read <- err
	}()
	select {
	case err := <-read:
		require.NoError(t, err)
		require.Equal(t, strings.Repeat("y", 8192), string(got))
	case <-time.After(waitBound):
		t.Fatal("reading another terminal's output waited for the flush of the queued paste")
	}

	// Once the child reads, the flush ends and keystrokes go out.
	require.NoError(t, syscall.Kill(slow.Pid(), syscall.SIGCONT))
	typed := make(chan error, 1)
	go func() {
		_, err := other.Write([]byte("typed"))
		typed <- err
	}()
	echo := make([]byte, len("typed"))
	echoed := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(other, echo)
		echoed <- err
	}()
	for _, ch := range []chan error{typed, echoed} {
		select {
		case err := <-ch:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("the keystrokes after the flush did not come back")
		}
	}
	require.True(t, bytes.Equal([]byte("typed"), echo))
}
