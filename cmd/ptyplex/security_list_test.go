//go:build unix

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// publicBin copies the binary under test where every user may run it (the
// build directory is private to us), for tests whose victim is a second
// user.
func publicBin(t *testing.T) string { t.Helper(); return publicCopy(t, bin) }

// publicCopy copies the program at path into a directory of its own that
// every user may read, and returns the copy's path.
func publicCopy(t *testing.T, path string) string {
	t.Helper()
	p := filepath.Join(sharedDir(t, 0o755), filepath.Base(path))
	copyExecutable(t, path, p)
	return p
}

// copyExecutable copies the program at src to dst (a new file), for tests
// that then execute dst (testproc.CopyExecutable: no "text file busy").
func copyExecutable(t *testing.T, src, dst string) {
	t.Helper()
	if _, err := os.Lstat(dst); err == nil {
		t.Fatalf("%s exists already", dst)
	}
	if err := testproc.CopyExecutable(src, dst, 0o755); err != nil {
		t.Fatal(err)
	}
}

// asUser runs the ptyplex at path as a, with env as its whole environment.
func asUser(t *testing.T, a account, env []string, path string, args ...string) result {
	t.Helper()
	cmd := a.command(path, args...)
	cmd.Env = env
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ptyplex %v as %s: %v", args, a.name, err)
	}
	return result{out.String(), errb.String(), code}
}

// TestListSurvivesPlantedRegistryDir: with XDG_RUNTIME_DIR unset the
// registry used to be /tmp/ptyplex-<uid> and nothing else, so another user
// who created that directory first (mode 0777) made every later `start`
// skip registering and `list` fail. Now the victim's sessions go to a
// directory under their home, which nobody else can create, and list says
// why. The victim is a second user here, not us, so that the planted
// directory never gets in the way of other tests run as root.
func TestListSurvivesPlantedRegistryDir(t *testing.T) {
	t.Parallel()
	victim, attacker := otherUser(t), otherUser(t)
	planted := "/tmp/ptyplex-" + strconv.Itoa(int(victim.uid))
	// One there now is stale: an earlier account's of the same uid (a
	// run that was killed before its cleanup).
	os.RemoveAll(planted)
	t.Cleanup(func() { os.RemoveAll(planted) })
	attacker.run(t, "mkdir -m 0777 "+planted)

	home := t.TempDir()
	if err := os.Chown(home, int(victim.uid), int(victim.gid)); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(home, 0o700); err != nil {
		t.Fatal(err)
	}
	// t.TempDir's parent is ours and private: the victim must be able to
	// reach its home through it.
	os.Chmod(filepath.Dir(home), 0o711)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C"}
	exe := publicBin(t)

	r := asUser(t, victim, env, exe, "start", "--", "sh", "-c", "echo READY; exec cat")
	if r.code != 0 {
		t.Fatalf("start as %s: %v", victim.name, r)
	}
	var sock string
	var pid int
	for _, line := range strings.Split(r.stdout, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Socket":
			sock = v
		case "PID":
			pid, _ = strconv.Atoi(v)
		}
	}
	if sock == "" || pid == 0 {
		t.Fatalf("start printed no socket or pid: %v", r)
	}
	t.Cleanup(func() {
		asUser(t, victim, env, exe, "stop", "--socket", sock)
		if !waitGone(pid, deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})

	r = asUser(t, victim, env, exe, "list", "--json")
	if r.code != 0 {
		t.Fatalf("list as %s with %s planted by %s: %v", victim.name, planted, attacker.name, r)
	}
	var list []struct {
		Socket     string `json:"socket"`
		Registered bool   `json:"registered"`
		State      string `json:"state"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("list --json: %v\n%v", err, r)
	}
	found := false
	for _, l := range list {
		if l.Socket == sock {
			found = true
			if !l.Registered || l.State != "running" {
				t.Errorf("the session is listed as %+v, want registered and running", l)
			}
		}
	}
	if !found {
		t.Errorf("list does not show the session %s: %v", sock, r)
	}
	fallback := filepath.Join(home, ".cache", "ptyplex", "sessions")
	for _, want := range []string{planted, "it belongs to user " + attacker.name, "using " + fallback + " instead"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("list's note does not say %q:\n%v", want, r)
		}
	}
	if entries, _ := filepath.Glob(filepath.Join(planted, "*")); len(entries) != 0 {
		t.Errorf("the daemon registered in the directory the attacker made: %v", entries)
	}
}
