//go:build unix

package client

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A resume's flush that waits for the pacer when its connection drops
// keeps the frame it was about to send: that frame was never written, so
// the next resume sends it. The flush took the frame off the queue before
// it waited, and it was lost, while the frames queued after it (none
// here) went out on the next connection.
//
// The first reconnect's relay drops every frame from the resume's
// ATTACHED on, the PONGs with them: the flush sends the queued paste's
// first 512 KiB (a piece: the server takes all of it, the child reads),
// then waits for a PONG before the last 8 KiB, until the keepalive ends
// that connection. The next attempt resumes, and the child must get the
// last 8 KiB too.
func TestFlushKeepsTheFrameADropInterrupted(t *testing.T) {
	name := "flushdrop"
	env := persistEnv(t, name)
	dir := t.TempDir()
	gate, swallow := filepath.Join(dir, "gate"), filepath.Join(dir, "swallow")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// The transport waits while the gate exists, then runs the relay,
	// which runs the bridge.
	argv := []string{"sh", "-c", `while [ -e "$0" ]; do sleep 0.01; done; exec "$@"`, gate, exe, sidecarBin, "--persist", name}
	ev := newEvents()
	p := ReconnectPolicy{InitialDelay: time.Millisecond, KeepaliveInterval: 50 * time.Millisecond, KeepaliveTimeout: time.Second, OnEvent: ev.on}
	c, err := Start(Options{Transport: argv, Env: append(env, relayEnv+"="+swallow), Stderr: testLog{t}, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*resumeBound)
	defer cancel()

	const piece, tail = pasteStep, 8 << 10 // tail > smallInput: no slack
	term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c",
		fmt.Sprintf("stty raw -echo; echo READY; head -c %d >/dev/null; echo GOT", piece+tail)}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	out.until(t, "READY", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("READY")) })

	for _, f := range []string{gate, swallow} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Kill(c.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	ev.next(t, EventDisconnected, 1)
	for _, n := range []int{piece, tail} {
		if _, err := term.Write(bytes.Repeat([]byte("x"), n)); err != nil {
			t.Fatalf("a write queued while down: %v", err)
		}
	}
	os.Remove(gate)
	ev.next(t, EventReconnected, 1)
	if n := ev.count(EventReconnectFailed); n == 0 {
		t.Fatal("the attempt whose answers the relay dropped did not fail")
	}
	out.until(t, "GOT (the whole paste reached the child)", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("GOT")) })
}
