//go:build linux

package mcpserver_test

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/hosttest"
	"golang.org/x/sys/unix"
)

// runReaper runs args (the MCP server) as a child subreaper would: the
// session daemons, orphaned when `ptyplex start` exits, become our
// children and are reaped as soon as they exit, so that their pids are
// free for reuse at once. (This machine's init reaps late or never; a
// zombie keeps its pid.) It returns the server's exit status.
func runReaper(args []string) int {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		os.Stderr.WriteString("reaper: PR_SET_CHILD_SUBREAPER: " + err.Error() + "\n")
		return 1
	}
	p, err := os.StartProcess(args[0], args, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		os.Stderr.WriteString("reaper: " + err.Error() + "\n")
		return 1
	}
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return 1
		}
		if pid == p.Pid {
			return ws.ExitStatus()
		}
	}
}

// lastPidFile sets the pid the kernel handed out last in our pid
// namespace: the next process gets the one after it (what checkpoint and
// restore tools use to give a process back its pid). Root only.
const lastPidFile = "/proc/sys/kernel/ns_last_pid"

// spawnAt starts a bystander, `sleep 1000`, with the given pid, which must
// be free. Every other process started on the machine at the same moment
// takes a pid too, so it tries until the bystander gets that one.
func spawnAt(t *testing.T, pid int) *exec.Cmd {
	t.Helper()
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now().Add(deadline)
	for tries := 1; ; tries++ {
		if err := os.WriteFile(lastPidFile, []byte(strconv.Itoa(pid-1)), 0); err != nil {
			t.Fatalf("write %s: %v", lastPidFile, err)
		}
		cmd := exec.Command(sleep, "1000")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if cmd.Process.Pid == pid {
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			t.Logf("bystander has pid %d after %d tries", pid, tries)
			return cmd
		}
		cmd.Process.Kill()
		cmd.Wait()
		if time.Now().After(end) {
			t.Fatalf("could not start a process with pid %d in %d tries (is it still taken?)", pid, tries)
		}
	}
}

// TestStopNeverSignalsReusedPID is the recycled-pid attack: a session's
// daemon ends by itself (its idle exit), another process gets its pid,
// and then the session is stopped, with the tool and by disconnecting.
// STOP fails (the socket is gone), and the server used to find the pid
// "alive" and SIGTERM whatever held it now: another user's process, when
// the server runs as root. Now it signals only through the pidfd it took
// when it started the daemon, which still names the dead daemon, so the
// bystander lives.
//
// Making the kernel reuse a pid on purpose: the server runs under a
// subreaper (runReaper) so that the exited daemon is reaped at once, and
// ns_last_pid then hands its pid to the bystander. Both are real: a real
// daemon exits, and a real process holds its pid when the server acts.
func TestStopNeverSignalsReusedPID(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that needs root to choose a pid")
		}
		t.Fatal("this test needs root to write " + lastPidFile + " (CI runs as root); set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, bin, "mcp", "--idle-exit", "1s")
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	c := connectCmd(t, cmd)

	// Two sessions whose programs exit at once; their daemons follow after
	// the idle exit, with no request in between.
	byTool := c.start(map[string]any{"command": []string{"true"}})
	byDisconnect := c.start(map[string]any{"command": []string{"true"}})
	for _, s := range []started{byTool, byDisconnect} {
		if !hosttest.WaitGone(s.PID, deadline) {
			t.Fatalf("daemon %d did not end by itself after its idle exit", s.PID)
		}
	}
	victim1 := spawnAt(t, byTool.PID)
	victim2 := spawnAt(t, byDisconnect.PID)

	ok[map[string]any](c, "stop", map[string]any{"session": byTool.Session})
	if !hosttest.Alive(victim1.Process.Pid) {
		t.Errorf("stop signalled pid %d, which had passed from the session's daemon to another process", byTool.PID)
	}
	c.close() // the server stops its remaining session and exits
	if !hosttest.Alive(victim2.Process.Pid) {
		t.Errorf("disconnecting signalled pid %d, which had passed from the session's daemon to another process", byDisconnect.PID)
	}
}
