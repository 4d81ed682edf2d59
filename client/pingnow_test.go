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

// A reconnecting client with a keepalive pastes past the server's input
// bound into a program that reads nothing for longer than the keepalive's
// timeout: the paste waits, and the pacing PINGs with it, but the
// keepalive's PING is answered at once, so the connection is not taken
// for dead (it was: the keepalive killed the transport and the resume
// lost what was in flight). Once the program reads, the paste arrives
// whole.
func TestKeepaliveLivesThroughAHeldPaste(t *testing.T) {
	name := "heldpaste"
	env := persistEnv(t, name)
	ev := newEvents()
	p := ReconnectPolicy{InitialDelay: time.Millisecond, KeepaliveInterval: 50 * time.Millisecond, KeepaliveTimeout: 500 * time.Millisecond, OnEvent: ev.on}
	c, err := Start(Options{Transport: []string{sidecarBin, "--persist", name}, Env: env, Stderr: testLog{t}, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*resumeBound)
	defer cancel()

	fifo := filepath.Join(t.TempDir(), "go")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	const n = 20 << 20 // past the 16 MiB the server queues
	term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Args: []string{"-c",
		fmt.Sprintf("stty raw -echo; echo READY; cat %s >/dev/null; head -c %d >/dev/null; echo GOT", fifo, n)}})
	if err != nil {
		t.Fatal(err)
	}
	out := drain(term)
	out.until(t, "READY", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("READY")) })
	written := make(chan error, 1)
	go func() {
		_, err := term.Write(bytes.Repeat([]byte("x"), n))
		written <- err
	}()
	// Four keepalive timeouts with the paste held: the keepalive would
	// have killed the connection within one.
	hold := time.NewTimer(4 * p.KeepaliveTimeout)
	defer hold.Stop()
	select {
	case err := <-written:
		t.Fatalf("the paste was taken whole by a program that reads nothing: %v", err)
	case <-hold.C:
	}
	if k := ev.count(EventDisconnected); k != 0 {
		t.Fatalf("the connection was taken for dead while the paste was held (%d disconnects)", k)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := <-written; err != nil {
		t.Fatalf("the paste: %v", err)
	}
	out.until(t, "GOT (the whole paste reached the program)", func(b []byte, _ error) bool { return bytes.Contains(b, []byte("GOT")) })
	if k := ev.count(EventDisconnected); k != 0 {
		t.Fatalf("%d disconnects", k)
	}
}
