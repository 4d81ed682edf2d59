//go:build unix

package client

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A reconnect whose transport hangs (the machine unreachable, ssh still
// connecting) is reported as such, not as a sidecar to reinstall: the
// sidecar there answered HELLO on the connection before. One whose
// transport exits says so, with what the transport said last.
func TestReconnectUnreachable(t *testing.T) {
	rig := newLocalRig(t, "unreach")
	ev := newEvents()
	p := ReconnectPolicy{InitialDelay: time.Millisecond, MaxDelay: time.Millisecond, Attempts: 2, OnEvent: ev.on}
	c, err := Start(Options{Transport: rig.argv, Env: rig.env, Stderr: testLog{t}, HelloTimeout: 3 * time.Second, Reconnect: &p})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	if _, err := c.Open(ctx, OpenOptions{Cmd: "cat"}); err != nil {
		t.Fatal(err)
	}
	// The next transport hangs at the gate, and after it fails.
	os.WriteFile(rig.gate, nil, 0o600)
	os.WriteFile(rig.fail, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	f := ev.next(t, EventReconnectFailed, 1)
	t.Logf("%v", f.Err)
	if !errors.Is(f.Err, ErrNoReply) || !strings.Contains(f.Err.Error(), "has not reached the sidecar") ||
		!strings.Contains(f.Err.Error(), "unreachable") || strings.Contains(f.Err.Error(), "install") {
		t.Errorf("a hanging reconnect: %v", f.Err)
	}
	os.Remove(rig.gate)
	g := ev.next(t, EventGaveUp, 1)
	t.Logf("%v", g.Err)
	if !strings.Contains(g.Err.Error(), "the transport (sh) exited: exit status 1: no way through") {
		t.Errorf("a refused reconnect: %v", g.Err)
	}
}

// findSidecarEnv makes the test binary print what FindSidecar returns
// (main_test.go), run from a copy placed where a test wants it.
const findSidecarEnv = "PTYPLEX_TEST_FINDSIDECAR"

func runFindSidecar() int {
	p, err := FindSidecar()
	if err != nil {
		os.Stdout.WriteString("error: " + err.Error())
		return 0
	}
	os.Stdout.WriteString("found: " + p)
	return 0
}

// A sidecar beside the host binary is used only if no other user could
// have put it there or changed it; otherwise the one in PATH, or an error
// that says why.
func TestFindSidecarRefusesSharedDirectory(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		dirMode, mode os.FileMode
		stranger      bool // the planted sidecar belongs to another user (nobody)
		inPath        bool
		want          string
	}{
		{name: "own", dirMode: 0o755, mode: 0o755, want: "found: DIR/"},
		{name: "sticky", dirMode: 0o777 | os.ModeSticky, mode: 0o755, want: "found: DIR/"},
		{name: "shareddir", dirMode: 0o777, mode: 0o755, want: "error: DIR/ptyplex-sidecar next to this program was not used: other users may write to its directory"},
		{name: "groupdir", dirMode: 0o775, mode: 0o755, want: "error: DIR/ptyplex-sidecar next to this program was not used: other users may write to its directory"},
		{name: "sharedfile", dirMode: 0o755, mode: 0o757, want: "error: DIR/ptyplex-sidecar next to this program was not used: other users may write to it"},
		{name: "stickyplanted", dirMode: 0o777 | os.ModeSticky, mode: 0o755, stranger: true, want: "error: DIR/ptyplex-sidecar next to this program was not used: it belongs to uid 65534"},
		{name: "fallback", dirMode: 0o777, mode: 0o755, inPath: true, want: "found: " + sidecarBin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.stranger && os.Getuid() != 0 {
				t.Skip("needs root to plant a file of another user")
			}
			dir := filepath.Join(t.TempDir(), "bin")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			host := filepath.Join(dir, "host")
			if err := os.WriteFile(host, self, 0o755); err != nil {
				t.Fatal(err)
			}
			planted := filepath.Join(dir, SidecarName)
			if err := os.WriteFile(planted, []byte("#!/bin/sh\necho planted\n"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(planted, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.stranger {
				if err := os.Lchown(planted, 65534, 65534); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Chmod(dir, tc.dirMode); err != nil {
				t.Fatal(err)
			}
			path := "/nonexistent"
			if tc.inPath {
				path = filepath.Dir(sidecarBin)
			}
			cmd := exec.Command(host, "-test.run=^$")
			cmd.Env = append(os.Environ(), findSidecarEnv+"=1", "PATH="+path)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			want := strings.ReplaceAll(tc.want, "DIR", dir)
			if !strings.HasPrefix(string(out), want) {
				t.Fatalf("FindSidecar from %s (mode %v, sidecar mode %v): %s\nwant %s...", dir, tc.dirMode, tc.mode, out, want)
			}
		})
	}
}
