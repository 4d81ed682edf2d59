//go:build unix

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStartIdleExit(t *testing.T) {
	t.Parallel()
	s := start(t, "--idle-exit", "300ms", "--", "sh", "-c", "read x; exit 4")
	if !s.auto {
		t.Fatal("expected an auto-generated socket")
	}
	// Requests are served up to the exit and right after it: this one is
	// pending when the program exits.
	r := s.run("input", "--text", `x\r`, "--wait-contains", "never printed", "--timeout", (3 * deadline).String())
	if r.code != 1 || r.stdout != "Application exited\n" {
		t.Fatalf("input and wait through the exit: %v", r)
	}
	// Then, with no more requests, the daemon ends by itself and takes its
	// socket directory with it.
	if !waitGone(s.pid, 3*deadline) {
		t.Fatal("daemon still running long after its --idle-exit")
	}
	if _, err := os.Stat(filepath.Dir(s.sock)); !os.IsNotExist(err) {
		t.Errorf("socket directory left behind: %v", err)
	}
}

func TestStartIdleExitNeedsAnExit(t *testing.T) {
	t.Parallel()
	// A running program is never idle-exited, however long nobody asks.
	s := start(t, "--idle-exit", "1ms", "--", "cat")
	s.input("still here\r")
	s.waitText("still here")
	if r := s.run("status", "--quiet"); r.code != 0 {
		t.Fatalf("status: %v", r)
	}
	if r := ptyplex(t, "", "start", "--idle-exit", "-1s", "--", "true"); r.code != exitUsage {
		t.Errorf("negative --idle-exit: %v", r)
	}
}
