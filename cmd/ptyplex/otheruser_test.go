//go:build unix

package main

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/testproc"
)

// The security tests act as a second local user, the attacker of issue
// 16, so they need root to create one. CI runs as root; elsewhere they
// fail rather than skip, so that a run without them is never mistaken for
// a green one. PTYPLEX_NO_ROOT_TESTS=1 skips them, explicitly.
func requireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
		t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user")
	}
	t.Fatal("this test acts as a second local user and must run as root (CI does); " +
		"set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly")
}

// account is a throwaway local user.
type account struct {
	name     string
	uid, gid uint32
}

// useraddMu serialises our own useradd/userdel calls; other processes on
// the machine may still hold the passwd lock, which run retries.
var useraddMu sync.Mutex

// otherUser creates a fresh system user for the test and deletes it when
// the test ends.
func otherUser(t testing.TB) account {
	t.Helper()
	requireRoot(t)
	var b [4]byte
	rand.Read(b[:])
	name := "ptyx" + hex.EncodeToString(b[:])
	runAdmin(t, "useradd", "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", name)
	u, err := user.Lookup(name)
	if err != nil {
		runAdmin(t, "userdel", name)
		t.Fatalf("look up the user just created: %v", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	t.Cleanup(func() {
		// userdel refuses a user with processes: what a test's own
		// cleanup waited for is gone, but the account may still have a
		// persistent server's watchdog or a terminal's child on its way
		// out. The account is this test's alone: all of it goes.
		endProcessesOf(t, uint32(uid))
		runAdmin(t, "userdel", name)
		// What the account's sessions made under the shared /tmp
		// (a registry, when XDG_RUNTIME_DIR was unset) goes too: the
		// uid is given to the next test's account.
		os.RemoveAll("/tmp/ptyplex-" + strconv.FormatUint(uid, 10))
	})
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return account{name: name, uid: uint32(uid), gid: uint32(gid)}
}

// runAdmin runs useradd or userdel, retrying while another process holds
// the lock on /etc/passwd (exit status 1 or 10 with "lock" in the text).
func runAdmin(t testing.TB, prog string, args ...string) {
	t.Helper()
	useraddMu.Lock()
	defer useraddMu.Unlock()
	end := time.Now().Add(deadline)
	for {
		out, err := testproc.Admin(prog, args...).CombinedOutput()
		if err == nil {
			return
		}
		if !strings.Contains(string(out), "lock") || time.Now().After(end) {
			t.Fatalf("%s %v: %v\n%s", prog, args, err, out)
		}
		// Lock contention with another process: try again once it had a
		// chance to finish (there is no event to wait on for a lock file).
		time.Sleep(50 * time.Millisecond)
	}
}

// command prepares prog to run as the account, with a neutral working
// directory and environment.
func (a account) command(prog string, args ...string) *exec.Cmd {
	// Look the program up in the system directories: ours (a pyenv shim
	// under /root, say) may not be reachable for the account.
	if !strings.Contains(prog, "/") {
		for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			if p := filepath.Join(dir, prog); fileExists(p) {
				prog = p
				break
			}
		}
	}
	cmd := exec.Command(prog, args...)
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "LANG=C"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: a.uid, Gid: a.gid}}
	return cmd
}

// run runs a shell script as the account and fails the test if it fails.
func (a account) run(t testing.TB, script string) {
	t.Helper()
	if out, err := a.command("sh", "-c", script).CombinedOutput(); err != nil {
		t.Fatalf("as %s: %s: %v\n%s", a.name, script, err, out)
	}
}

// sharedDir makes a directory everybody may write in, like /tmp (sticky)
// or a careless project directory (not sticky), removed after the test.
func sharedDir(t testing.TB, mode os.FileMode) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", "ptyplex-shared-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	return dir
}

// privateFile creates a file of ours that stands for something valuable
// (a key, a configuration) in a directory only we can reach.
func privateFile(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// endProcessesOf kills every process whose real uid is uid and waits
// until none is left (or the deadline passes: userdel then says which).
func endProcessesOf(t testing.TB, uid uint32) {
	t.Helper()
	for end := time.Now().Add(deadline); ; {
		left := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			status, err := os.ReadFile("/proc/" + e.Name() + "/status")
			if err != nil || !hasRealUID(status, uid) {
				continue
			}
			if left++; !strings.Contains(string(status), "State:\tZ") {
				cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
				t.Logf("ending pid %d of the test's account: %q", pid, strings.ReplaceAll(string(cmdline), "\x00", " "))
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if left == 0 || time.Now().After(end) {
			return
		}
		// A killed process leaves the table when its parent reaps it,
		// which has no event to wait on from here.
		time.Sleep(10 * time.Millisecond)
	}
}

// hasRealUID reports whether a /proc/PID/status text's real uid is uid
// (a zombie's too: its parent has yet to reap it, and userdel counts it).
func hasRealUID(status []byte, uid uint32) bool {
	for _, line := range strings.Split(string(status), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "Uid:" {
			return f[1] == strconv.FormatUint(uint64(uid), 10)
		}
	}
	return false
}
