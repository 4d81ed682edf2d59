//go:build unix

package client

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A plain sidecar drops DETACH unanswered (it knows no such frame). Detach
// returned nil there and the terminal never finished; HandOver waited its
// 10 s for an answer. Both now fail at once with errors.ErrUnsupported,
// told by OPENED's features (no "persist"), and send nothing: the terminal
// runs on as before. On a persistent server, opened or attached without a
// handshake, both still act.
func TestDetachNeedsAPersistentServer(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "cat"})
	out := collect(term)
	start := time.Now()
	if err := term.Detach(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Detach on a plain sidecar: %v; want errors.ErrUnsupported", err)
	}
	if err := term.HandOver(1); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("HandOver on a plain sidecar: %v; want errors.ErrUnsupported", err)
	}
	if d := time.Since(start); d > waitBound/2 {
		t.Errorf("Detach and HandOver took %v", d)
	}
	if _, err := term.Write([]byte("on\n")); err != nil {
		t.Fatal(err)
	}
	out.waitText(t, "on\r\non\r\n")

	env := persistEnv(t, "detachfeat")
	opts := Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}}
	p1, err := Persistent("detachfeat", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	held := open(t, p1, OpenOptions{Cmd: "cat"})
	if err := held.Detach(); err != nil {
		t.Fatalf("Detach on a persistent server: %v", err)
	}
	if _, err := held.Wait(); !errors.Is(err, ErrDetached) {
		t.Fatalf("after Detach: %v", err)
	}
	p2, err := Persistent("detachfeat", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	attached, err := p2.Attach(ctx, held.ID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := attached.Detach(); err != nil {
		t.Fatalf("Detach of an attached terminal, no handshake made: %v", err)
	}
	if _, err := attached.Wait(); !errors.Is(err, ErrDetached) {
		t.Fatalf("after Detach: %v", err)
	}
}
