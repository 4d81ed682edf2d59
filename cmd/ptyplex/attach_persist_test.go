//go:build unix

package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
)

// `ptyplex attach --persist NAME --id ID --view` shows a persistent
// terminal another host holds, on a real PTY, and types nothing into it;
// without --view it takes the terminal over, and its keys reach the
// program.
func TestAttachPersistentViewAndHold(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv("PTYPLEX_RUNTIME_DIR", dir) // for attach too
	env := os.Environ()
	t.Cleanup(func() {
		cmd := exec.Command(sidecar, "--persist", "w", "--stop")
		cmd.Env = env
		cmd.Run()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*deadline)
	defer cancel()
	c, err := client.Persistent("w", client.Options{SidecarPath: sidecar, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	held, err := c.Open(ctx, client.OpenOptions{ID: "c", Cmd: "/bin/sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	hr := bufio.NewReader(held)
	if line, err := hr.ReadString('\n'); err != nil || line != "ready\r\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}

	v := attachPTY(t, 80, 24, "--persist", "w", "--id", "c", "--view")
	v.waitText("ready")
	v.typeKeys("secret\r")
	if _, err := held.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	v.waitText("hello")
	if line, err := hr.ReadString('\n'); err != nil || line != "hello\r\n" {
		t.Fatalf("the holder read %q, %v: a viewer's keys reached the program?", line, err)
	}
	v.typeKeys("\x1c") // Ctrl-\ detaches
	if code := v.waitExit(); code != 0 {
		t.Fatalf("attach --view exited %d", code)
	}
	v.waitText("(as a viewer)")

	h := attachPTY(t, 80, 24, "--persist", "w", "--id", "c")
	h.waitText("hello")
	if _, err := hr.ReadString('\n'); !errors.Is(err, client.ErrDetached) {
		t.Fatalf("the Go host after attach took the terminal over: %v, want ErrDetached", err)
	}
	h.typeKeys("typed\r")
	h.waitText("typed")
	h.typeKeys("\x1c")
	if code := h.waitExit(); code != 0 {
		t.Fatalf("attach exited %d", code)
	}
	text := h.waitText("(as its holder)")
	if strings.Contains(text, "secret") {
		t.Fatalf("the viewer's keys reached the program:\n%s", text)
	}
}

// attach --persist with no server running says how one is started
// (ptyplex-sidecar --persist NAME), not 'ptyplex start', which starts a
// session.
func TestAttachPersistentNoServer(t *testing.T) {
	t.Setenv("PTYPLEX_RUNTIME_DIR", t.TempDir())
	a := attachPTY(t, 300, 24, "--persist", "nosrv", "--id", "build") // wide: one line
	if code := a.waitExit(); code != exitFail {
		t.Fatalf("attach exited %d, want 1", code)
	}
	text := a.waitText("no persistent sidecar")
	if !strings.Contains(text, "ptyplex-sidecar --persist nosrv") || strings.Contains(text, "ptyplex start") {
		t.Fatalf("attach --persist without a server:\n%s", text)
	}
}
