//go:build unix

package client

import (
	"bufio"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A second client views a terminal (Attach with View): it reads the same
// lines as the holder, its Write is refused without reaching the server,
// and once the holder hands the terminal over to it (HandOver) it is the
// holder: its keys reach the program and the old holder's Read ends with
// ErrDetached.
func TestPersistentViewerAndHandOver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "v")
	c1, err := Persistent("v", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	held, err := c1.Open(ctx, OpenOptions{ID: "cat", Cmd: "/bin/sh", Args: []string{"-c", "stty -echo; echo ready; exec cat"}})
	if err != nil {
		t.Fatal(err)
	}
	hr := bufio.NewReader(held)
	if line, err := hr.ReadString('\n'); err != nil || line != "ready\r\n" {
		t.Fatalf("holder: %q, %v", line, err)
	}
	c2, err := Persistent("v", Options{SidecarPath: sidecarBin, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	viewed, err := c2.Attach(ctx, "cat", 0, AttachOptions{View: true})
	if err != nil {
		t.Fatal(err)
	}
	if viewed.Pid() == 0 || viewed.Pid() != held.Pid() {
		t.Fatalf("the viewer's Pid %d, the holder's %d", viewed.Pid(), held.Pid())
	}
	if !viewed.Viewing() || viewed.ViewerNumber() == 0 || held.Viewing() {
		t.Fatalf("Viewing: viewer %v (number %d), holder %v", viewed.Viewing(), viewed.ViewerNumber(), held.Viewing())
	}
	vr := bufio.NewReader(viewed)
	if line, err := vr.ReadString('\n'); err != nil || line != "ready\r\n" {
		t.Fatalf("viewer: %q, %v", line, err)
	}
	if _, err := viewed.Write([]byte("no\n")); !errors.Is(err, ErrViewing) {
		t.Fatalf("a viewer's Write: %v, want ErrViewing", err)
	}
	if err := viewed.Resize(10, 10); !errors.Is(err, ErrViewing) {
		t.Fatalf("a viewer's Resize: %v, want ErrViewing", err)
	}
	list, err := c2.List(ctx)
	if err != nil || len(list) != 1 || !list[0].Attached || len(list[0].Viewers) != 1 || list[0].Viewers[0].Viewer != viewed.ViewerNumber() {
		t.Fatalf("List: %+v, %v", list, err)
	}
	if _, err := held.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*bufio.Reader{"holder": hr, "viewer": vr} {
		if line, err := r.ReadString('\n'); err != nil || line != "one\r\n" {
			t.Fatalf("%s: %q, %v", name, line, err)
		}
	}

	// A number that is no viewer's is refused, and nothing changes: the
	// refusal was taken for dropped input once, and the next Write
	// reported it instead of sending its bytes.
	var se *ServerError
	if err := held.HandOver(viewed.ViewerNumber() + 1000); !errors.As(err, &se) {
		t.Fatalf("HandOver to no viewer: %v, want a *ServerError", err)
	}
	if _, err := held.Write([]byte("still\n")); err != nil {
		t.Fatalf("Write after a refused HandOver: %v", err)
	}
	for name, r := range map[string]*bufio.Reader{"holder": hr, "viewer": vr} {
		if line, err := r.ReadString('\n'); err != nil || line != "still\r\n" {
			t.Fatalf("%s: %q, %v", name, line, err)
		}
	}

	if err := held.HandOver(viewed.ViewerNumber()); err != nil {
		t.Fatal(err)
	}
	if _, err := hr.ReadString('\n'); !errors.Is(err, ErrDetached) {
		t.Fatalf("the old holder's Read after HandOver: %v, want ErrDetached", err)
	}
	// The viewer is the holder once the server's ATTACHED came: its
	// Write is refused locally until then, so it retries on ErrViewing.
	for viewed.Viewing() {
		select {
		case <-ctx.Done():
			t.Fatal("the viewer never became the holder")
		case <-time.After(time.Millisecond):
		}
	}
	if _, err := viewed.Write([]byte("two\n")); err != nil {
		t.Fatal(err)
	}
	if line, err := vr.ReadString('\n'); err != nil || line != "two\r\n" {
		t.Fatalf("the new holder: %q, %v", line, err)
	}
	if viewed.Lost() != 0 {
		t.Fatalf("Lost %d", viewed.Lost())
	}
}

// HandOver of a terminal that has ended (exited, or detached) fails and
// sends nothing: it returned nil, as if it had handed the terminal over.
func TestHandOverOfEndedTerminalFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "hoe")
	c, err := Persistent("hoe", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	exited, err := c.Open(ctx, OpenOptions{Cmd: "true"})
	if err != nil {
		t.Fatal(err)
	}
	<-exited.Done()
	if err := exited.HandOver(1); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Fatalf("HandOver of an exited terminal: %v", err)
	}
	detached, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := detached.Detach(); err != nil {
		t.Fatal(err)
	}
	<-detached.Done()
	if err := detached.HandOver(1); !errors.Is(err, ErrDetached) {
		t.Fatalf("HandOver of a detached terminal: %v", err)
	}
}
