package client

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// persistEnv runs the test's persistent servers in a runtime directory of
// their own, and stops server name when the test ends.
func persistEnv(t *testing.T, name string) []string {
	env := append(os.Environ(), "PTYPLEX_RUNTIME_DIR="+t.TempDir())
	t.Cleanup(func() {
		cmd := exec.Command(sidecarBin, "--persist", name, "--stop")
		cmd.Env = env
		cmd.Run()
	})
	return env
}

// A host saves a terminal's Offset, goes away, and a new host attaches at
// it: Read continues with exactly the bytes the first did not read.
func TestPersistentAttachContinues(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "c")
	c1, err := Persistent("c", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	term, err := c1.Open(ctx, OpenOptions{ID: "keep", Cmd: "/bin/sh", Args: []string{"-c", "stty -echo; echo one; read x; echo two $x"}})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(term)
	if line, err := r.ReadString('\n'); err != nil || line != "one\r\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	saved := term.Offset() - uint64(r.Buffered())
	if saved != 5 {
		t.Fatalf("Offset after one line: %d, want 5", saved)
	}
	// Close ends the connection only.
	if err := c1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	c2, err := Persistent("c", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	list, err := c2.List(ctx)
	if err != nil || len(list) != 1 || list[0].TerminalID != "keep" || list[0].Produced != 5 {
		t.Fatalf("List: %+v, %v", list, err)
	}
	if _, err := c2.Attach(ctx, "nope", 0); err == nil || !strings.Contains(err.Error(), `no terminal "nope"`) {
		t.Fatalf("Attach of an unknown id: %v", err)
	}
	t2, err := c2.Attach(ctx, "keep", saved)
	if err != nil {
		t.Fatal(err)
	}
	if off, lost, snap := t2.Replay(); off != 5 || lost != 0 || snap != "" {
		t.Fatalf("Replay: %d %d %q", off, lost, snap)
	}
	if _, err := t2.Write([]byte("x\n")); err != nil {
		t.Fatal(err)
	}
	r2 := bufio.NewReader(t2)
	if line, err := r2.ReadString('\n'); err != nil || line != "two x\r\n" {
		t.Fatalf("after Attach: %q, %v", line, err)
	}
	st, err := t2.Wait()
	if err != nil || st.Code != 0 {
		t.Fatalf("Wait: %v, %v", st, err)
	}
	if t2.Offset() != 5+7 {
		t.Fatalf("Offset at the end: %d", t2.Offset())
	}
}

// A second connection's Attach takes the terminal over: the first sees it
// end with ErrDetached, and the terminal goes on.
func TestPersistentTakeover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "d")
	c1, err := Persistent("d", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	t1, err := c1.Open(ctx, OpenOptions{ID: "x", Cmd: "/bin/cat", Journal: 8192, Detached: "park"})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c1.List(ctx); err != nil || len(l) != 1 || l[0].Detached != "park" {
		t.Fatalf("List after an OPEN asking for park: %+v, %v", l, err)
	}
	if _, err := c1.Open(ctx, OpenOptions{ID: "y", Cmd: "/bin/cat", Detached: "sometimes"}); err == nil || !strings.Contains(err.Error(), "detached must be") {
		t.Fatalf("Open with a bad Detached: %v", err)
	}
	c2, err := Persistent("d", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	t2, err := c2.Attach(ctx, "x", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := t1.Wait(); !errors.Is(err, ErrDetached) {
		t.Fatalf("the first holder's terminal ended with %v, want ErrDetached", err)
	}
	t2.Write([]byte("hi\n"))
	r := bufio.NewReader(t2)
	if line, _ := r.ReadString('\n'); line != "hi\r\n" {
		t.Fatalf("echo after the takeover: %q", line)
	}
	t2.Close()
	t2.Wait()
}

// The persistent server answers HELLO like the plain sidecar, announcing
// persistence, and LIST still works after it (their frame types differ).
func TestHelloPersistentServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "hello")
	c, err := Persistent("hello", Options{SidecarPath: sidecarBin, Env: env, Hello: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	peer, ok := c.Peer()
	if !ok || !peer.Has("hello") || !peer.Has("persist") {
		t.Fatalf("peer %+v", peer)
	}
	if _, err := c.List(ctx); err != nil {
		t.Fatalf("List after HELLO: %v", err)
	}
}

// Stop and Upgrade speak STOP and UPGRADE: an UPGRADE the server refuses
// comes back as a *ServerError and leaves the connection in use; Stop
// returns once the server ended, its terminals with it.
func TestServerStopAndRefusedUpgrade(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "ctl")
	c, err := Persistent("ctl", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	// /bin/sh is no ptyplex-sidecar: the server refuses to run it.
	_, err = c.Upgrade(ctx, "/bin/sh", "0.0.0-test")
	var se *ServerError
	if !errors.As(err, &se) || se.Message == "" {
		t.Fatalf("Upgrade to /bin/sh: %v (%T), want a *ServerError with the server's reason", err, err)
	}
	if ts, err := c.List(ctx); err != nil || len(ts) != 1 {
		t.Fatalf("List after the refused UPGRADE: %v, %v", ts, err)
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-term.Done():
	case <-ctx.Done():
		t.Fatal("the terminal did not end with the server")
	}
	if st, err := term.Wait(); err == nil && st.Signal == "" {
		t.Fatalf("the terminal ended by itself (%+v), not by STOP", st)
	}
	out, _ := exec.Command(sidecarBin, "--persist", "ctl", "--list").CombinedOutput()
	if !strings.Contains(string(out), "no persistent sidecar") {
		t.Fatalf("--list after Stop: %s", out)
	}
}
