//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// swapper is a local attacker who swaps sockets: as soon as a socket appears
// at sock, it renames a symbolic link to victim over it.
const swapper = `
import os, stat, sys
sock, victim = sys.argv[1], sys.argv[2]
tmp = sock + ".link"
sys.stdout.write("ready\n"); sys.stdout.flush()
while True:
    try:
        if not os.path.lexists(tmp):
            os.symlink(victim, tmp)
        if stat.S_ISSOCK(os.lstat(sock).st_mode):
            os.replace(tmp, sock)
    except OSError:
        pass
`

// TestSocketBindRace starts daemons on a socket path in a directory every
// user may write (no sticky bit) while another user swaps each new socket
// for a symbolic link to a file of ours. A chmod by name after bind would
// make that file 0600 whenever the swap lands between the two calls; now
// nothing ever touches it, and a daemon whose socket was swapped before
// it checked says so instead of serving.
func TestSocketBindRace(t *testing.T) {
	t.Parallel()
	attacker := otherUser(t)
	dir := sharedDir(t, 0o777)
	sock := filepath.Join(dir, "s")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(victim, 0o644)
	py := attacker.command("python3", "-c", swapper, sock, victim)
	out, err := py.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := py.Start(); err != nil {
		t.Fatalf("python3 (the attacker): %v", err)
	}
	t.Cleanup(func() { py.Process.Kill(); py.Wait() })
	buf := make([]byte, 6)
	if _, err := out.Read(buf); err != nil {
		t.Fatalf("attacker did not start: %v", err)
	}

	// Without the fix the attacker won within the first 40 starts in
	// each of three runs; the race-detector build starts slowly, so it
	// tries fewer.
	attempts, caught := 60, 0
	if raceEnabled {
		attempts = 15
	}
	for i := 0; i < attempts; i++ {
		os.Remove(sock) // whatever the attacker left there
		r := ptyplex(t, "", "start", "--socket", sock, "--", "cat")
		if r.code == 0 {
			pid := startedPID(t, r.stdout)
			// The swap may come after the check, which is item 3's case
			// (clients refuse a socket that is not ours); end the daemon
			// by its pid, since its socket may be gone.
			syscall.Kill(pid, syscall.SIGTERM)
			if !waitGone(pid, deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("daemon %d did not end on SIGTERM", pid)
			}
		} else if strings.Contains(r.stderr, "was replaced by another file") {
			caught++
		} else if !strings.Contains(r.stderr, "exists and is not a socket") && !strings.Contains(r.stderr, "address already in use") {
			// Those two: the attacker's link was in place before bind.
			t.Fatalf("start failed for another reason: %v", r)
		}
		if fi, err := os.Stat(victim); err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("attempt %d: the victim file's mode changed: %v %v", i, fi.Mode(), err)
		}
	}
	t.Logf("%d of %d starts noticed their socket was swapped before serving", caught, attempts)
}

func startedPID(t testing.TB, out string) int {
	t.Helper()
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "PID: "); ok {
			pid, err := strconv.Atoi(v)
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("start printed no PID:\n%s", out)
	return 0
}

// TestStartKeepsAnotherUsersLiveSocket: in a directory every user may
// write (no sticky bit), another user's `start` at the path of our live
// session took it for stale, because it may not connect to our 0600
// socket, removed it and served its own there: our session lost its
// socket. Only a refused connection means that nobody listens now.
func TestStartKeepsAnotherUsersLiveSocket(t *testing.T) {
	t.Parallel()
	other := otherUser(t)
	exe := publicBin(t)
	dir := sharedDir(t, 0o777)
	sock := filepath.Join(dir, "s")
	s := start(t, "--socket", sock, "--", "cat")
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "XDG_RUNTIME_DIR=" + sharedDir(t, 0o777)}
	r := asUser(t, other, env, exe, "start", "--socket", sock, "--", "cat")
	if r.code == 0 {
		if pid := startedPID(t, r.stdout); pid > 0 {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("another user's start took over our live socket: %v", r)
	}
	if !strings.Contains(r.stderr, "cannot be reused") || !strings.Contains(r.stderr, "permission denied") {
		t.Errorf("another user's start at our live socket: %v", r)
	}
	if st := s.ok("status"); !strings.Contains(st, "Running: true") {
		t.Errorf("our session after another user's start at its socket: %s", st)
	}
}
