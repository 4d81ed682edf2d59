//go:build linux

package lockwait

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Free returns once the process holding the lock ends, and reports the
// lock held when its context ends first; a missing file is free.
func TestFree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	if err := Free(context.Background(), path); err != nil {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A real holder: flock(1) keeps the lock while its child runs, and
	// ends when we close its stdin.
	holder := exec.Command("flock", path, "sh", "-c", "echo held; read x")
	in, err := holder.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatalf("flock(1), from util-linux: %v", err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf) != "held\n" {
		t.Fatalf("holder: %q %v", buf, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := Free(ctx, path); !errors.Is(err, ErrHeld) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("held lock: %v, want ErrHeld and the deadline", err)
	}
	done := make(chan error, 1)
	go func() { done <- Free(context.Background(), path) }()
	in.Close()
	holder.Wait()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("after the holder ended: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Free did not return once the holder ended")
	}
}

// A mark tells the file it was taken of from one put in its place, and
// says nothing of a path with no file.
func TestMarkTellsAReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s")
	if m := MarkOf(path); m.Valid() || m.Replaced(path) {
		t.Fatalf("no file: mark %+v, valid or replaced", m)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	m := MarkOf(path)
	if !m.Valid() || m.Replaced(path) {
		t.Fatalf("the same file: valid %v, replaced %v", m.Valid(), m.Replaced(path))
	}
	if err := os.WriteFile(path+".new", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	if !m.Replaced(path) {
		t.Fatal("another file in its place: not replaced")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if m.Replaced(path) {
		t.Fatal("no file in its place: replaced")
	}
}
