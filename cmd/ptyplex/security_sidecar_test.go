//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
)

// TestSecuritySidecarNotDumpable: a program inside a terminal runs as the
// sidecar's user, so it could open any of the sidecar's descriptors
// through /proc/$PPID/fd: the watchdog's pipe (70,000 bytes there made the
// watchdog kill every terminal), the host's frame stream, the PTY masters
// of the other terminals. The sidecar now makes itself non-dumpable at
// startup, which gives those entries to root: the open is refused. The
// programs it starts are dumpable again after their execve, so a
// terminal's own processes can still inspect each other. Root can open
// anything, so the sidecar runs as a second user here.
func TestSecuritySidecarNotDumpable(t *testing.T) {
	t.Parallel()
	victim := otherUser(t)
	sc := publicCopy(t, sidecarBinary(t))
	h := hosttest.StartCmd(t, victim.command(sc))
	sidecar := h.Cmd.Process.Pid

	survivor := `(trap '' HUP; exec sleep 1000) & echo bg=$!; exec cat`
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", survivor}})
	// From the first OPENED on, a program in a terminal runs: the
	// watchdog must be non-dumpable already (the sidecar waits for it to
	// say so), not some moment later.
	h.WaitControl(proto.TypeOpened, "a")
	wd := watchdogChild(t, sidecar)
	notInspectable(t, victim, wd, "the watchdog, at the first OPENED")
	bg := pidAfter(t, h.WaitOutput("a", "bg=").Output("a"), "bg=")
	// The attacker: told which descriptor is the watchdog's pipe, it
	// writes garbage there. Then the terminal's shell checks that its own
	// child may look at it (it is dumpable again).
	attack := `read n; if head -c 70000 /dev/zero | tr '\0' A > /proc/$PPID/fd/$n; then echo WROTE; else echo REFUSED; fi; ` +
		`sh -c 'echo "own=$(readlink /proc/$PPID/fd/0)"'; exec cat`
	h.Open(proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", attack}})
	leader := h.WaitControl(proto.TypeOpened, "b")
	t.Cleanup(func() {
		// The user is deleted after this: nothing of theirs may be left.
		h.Cmd.Process.Kill()
		for _, pid := range []int{bg, wd, sidecar} {
			if !waitGone(pid, deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, deadline)
			}
		}
	})

	// Root (the test) can still find the descriptor: the sidecar's end of
	// the pipe that is the watchdog's stdin.
	pipe, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", wd))
	if err != nil {
		t.Fatal(err)
	}
	fd := fdLinkedTo(t, sidecar, pipe)
	h.Input("b", strconv.Itoa(fd)+"\n")
	out := h.MustUntil("the attack's verdict", func(s hosttest.Snapshot) bool {
		o := s.Output("b")
		return strings.Contains(o, "own=") && strings.Contains(o[strings.Index(o, "own="):], "\n")
	}).Output("b")
	if !strings.Contains(out, "REFUSED") || !strings.Contains(out, "Permission denied") {
		t.Errorf("a program in a terminal opened the sidecar's descriptor %d through /proc:\n%s", fd, out)
	}
	if !regexp.MustCompile(`own=/dev/pts/\d+`).MatchString(out) {
		t.Errorf("a terminal's program cannot read its own child's /proc entries (not dumpable after execve?):\n%s", out)
	}
	if !hosttest.Alive(bg) {
		t.Errorf("terminal a's job died while the sidecar runs")
	}
	for pid, wantRoot := range map[int]bool{sidecar: true, wd: true, int(leaderPID(t, leader)): false} {
		var st syscall.Stat_t
		if err := syscall.Stat(fmt.Sprintf("/proc/%d/fd", pid), &st); err != nil {
			t.Fatal(err)
		}
		if owner := st.Uid; (owner == 0) != wantRoot {
			t.Errorf("/proc/%d/fd belongs to uid %d; want root's only for the sidecar and its watchdog", pid, owner)
		}
	}

	// And the watchdog still does its job for a sidecar running as a user.
	h.Cmd.Process.Signal(syscall.SIGKILL)
	if !waitGone(bg, deadline) {
		t.Errorf("terminal a's job outlived the SIGKILLed sidecar")
	}
}

// TestSecurityRestartedWatchdogNotDumpable: a program in a terminal
// kills the watchdog (it runs as the same user; nothing forbids that), and
// the sidecar starts a new one. The new one is dumpable from its execve
// until its runtime makes it not dumpable, and in that window the program
// could open /proc/WATCHDOG/fd: read the token from the announcement pipe
// or hold the pipe open for writing, so that the sidecar's death no longer
// reaches the watchdog. The new watchdog gets the pipe only once it is not
// dumpable, and the sidecar announces it only then: checked at once, with
// no waiting, its /proc/PID/fd is root's.
func TestSecurityRestartedWatchdogNotDumpable(t *testing.T) {
	t.Parallel()
	victim := otherUser(t)
	sc := publicCopy(t, sidecarBinary(t))
	h := hosttest.StartCmd(t, victim.command(sc))
	sidecar := h.Cmd.Process.Pid
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo up; exec cat"}})
	h.WaitControl(proto.TypeOpened, "a")
	old := watchdogChild(t, sidecar)
	fresh := 0
	t.Cleanup(func() {
		h.Cmd.Process.Kill()
		for _, pid := range []int{fresh, old, sidecar} {
			if pid > 0 && !waitGone(pid, deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				waitGone(pid, deadline)
			}
		}
	})
	notInspectable(t, victim, old, "the first watchdog")
	if err := syscall.Kill(old, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	m := h.WaitStderr(regexp.MustCompile(`new watchdog \(pid (\d+)\) started, watching 1 terminal\n`))
	fresh, _ = strconv.Atoi(m[1])
	notInspectable(t, victim, fresh, "the restarted watchdog, as soon as the sidecar announced it")
}

// TestSecurityPersistServerNotDumpable: the persistent server
// (ptyplex-sidecar --persist NAME --serve, which the bridge starts in the
// background) holds every persistent terminal's PTY master, its socket
// and the watchdog's pipe. A program inside one of its terminals, running
// as the same user, must not open them through /proc/SERVER/fd: the
// server is not dumpable either. The server runs as a second user, since
// root can open anything.
func TestSecurityPersistServerNotDumpable(t *testing.T) {
	t.Parallel()
	victim := otherUser(t)
	sc := publicCopy(t, sidecarBinary(t))
	dir, err := os.MkdirTemp("", "ptyplex-persist-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, int(victim.uid), int(victim.gid)); err != nil {
		t.Fatal(err)
	}
	bridge := func(args ...string) *exec.Cmd {
		cmd := victim.command(sc, append([]string{"--persist", "t"}, args...)...)
		cmd.Env = append(cmd.Env, "PTYPLEX_RUNTIME_DIR="+dir)
		return cmd
	}
	h := hosttest.StartCmd(t, bridge())
	attack := `echo "server=$PPID"; if ls /proc/$PPID/fd >/dev/null; then echo LISTED; fi; ` +
		`for n in 0 1 2 3 4 5 6 7 8 9 10 11 12; do if (: </proc/$PPID/fd/$n); then echo OPENED-$n; fi; done 2>/dev/null; ` +
		`echo verdict-done; exec cat`
	h.Open(proto.Open{TerminalID: "p", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", attack}})
	out := h.WaitOutput("p", "verdict-done").Output("p")
	server := pidAfter(t, out, "server=")
	t.Cleanup(func() {
		// The user is deleted after this: nothing of theirs may be left.
		if o, err := bridge("--stop").CombinedOutput(); err != nil {
			t.Logf("--stop: %v\n%s", err, o)
		}
		h.Cmd.Process.Kill()
		if !waitGone(server, deadline) {
			syscall.Kill(server, syscall.SIGKILL)
			waitGone(server, deadline)
		}
	})
	if cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", server)); !strings.Contains(string(cmdline), "--serve") {
		t.Fatalf("the terminal's parent %d is not the persistent server: %q", server, cmdline)
	}
	if !strings.Contains(out, "Permission denied") || strings.Contains(out, "LISTED") || strings.Contains(out, "OPENED-") {
		t.Errorf("a program in a persistent terminal reached the server's /proc/%d/fd:\n%s", server, out)
	}
	notInspectable(t, victim, server, "the persistent server")
}

// notInspectable checks that the account cannot open /proc/PID/fd: its
// owner is root (the process is not dumpable), checked at once, and the
// account's own attempt to list it is refused.
func notInspectable(t *testing.T, a account, pid int, what string) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d/fd", pid), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 0 {
		t.Errorf("%s (pid %d) is dumpable: its /proc/%d/fd belongs to uid %d, not root", what, pid, pid, st.Uid)
	}
	out, err := a.command("ls", fmt.Sprintf("/proc/%d/fd", pid)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("as %s, listing /proc/%d/fd of %s: %v\n%s", a.name, pid, what, err, out)
	}
}

// pidAfter reads the number after prefix in s.
func pidAfter(t *testing.T, s, prefix string) int {
	t.Helper()
	m := regexp.MustCompile(regexp.QuoteMeta(prefix) + `(\d+)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in %q", prefix, s)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func leaderPID(t *testing.T, c hosttest.Control) float64 {
	t.Helper()
	pid, ok := c.Fields["pid"].(float64)
	if !ok {
		t.Fatalf("OPENED without a pid: %v", c.Fields)
	}
	return pid
}

// watchdogChild finds the sidecar's watchdog among its children by the
// environment variable it is started with.
func watchdogChild(t *testing.T, sidecar int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		i := strings.LastIndexByte(string(stat), ')')
		if f := strings.Fields(string(stat[i+1:])); i < 0 || len(f) < 2 || f[1] != strconv.Itoa(sidecar) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if strings.Contains(string(env), watchdog.Env+"=1") {
			return pid
		}
	}
	t.Fatalf("sidecar %d has no watchdog child", sidecar)
	return 0
}

// fdLinkedTo finds pid's descriptor whose /proc link reads target.
func fdLinkedTo(t *testing.T, pid int, target string) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, _ := os.Readlink(dir + "/" + e.Name()); l == target {
			n, _ := strconv.Atoi(e.Name())
			return n
		}
	}
	t.Fatalf("process %d holds no descriptor on %s", pid, target)
	return 0
}

// TestSecuritySessionDaemonNotDumpable: the process that serves a session
// holds the shell-integration key and the PTY master, and the session's
// program runs as the same user. Dumpable, that program could read the key
// from the daemon's memory and forge the marks run trusts, or open the
// master through /proc/PID/fd. Checked for the daemon and for --no-daemon,
// started as a second user, from outside and from inside the session.
func TestSecuritySessionDaemonNotDumpable(t *testing.T) {
	t.Parallel()
	victim := otherUser(t)
	pb := publicBin(t)
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "LANG=C"}
	for _, mode := range []string{"daemon", "no-daemon"} {
		t.Run(mode, func(t *testing.T) {
			dir := sharedDir(t, 0o700)
			if err := os.Chown(dir, int(victim.uid), int(victim.gid)); err != nil {
				t.Fatal(err)
			}
			sock := filepath.Join(dir, "s.sock")
			env := append(env, "XDG_RUNTIME_DIR="+dir) // the registry: not in the shared /tmp
			attack := `if ls /proc/$PPID/fd >/dev/null; then echo LISTED; fi; ` +
				`if (: </proc/$PPID/mem); then echo MEM-OPENED; fi; echo verdict-done; exec cat`
			args := []string{"start", "--socket", sock}
			if mode == "no-daemon" {
				args = append(args, "--no-daemon")
			}
			cmd := victim.command(pb, append(args, "--", "sh", "-c", attack)...)
			cmd.Env = env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
			pid := 0
			for br := bufio.NewReader(stdout); pid == 0; {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("start ended before printing its pid: %v", err)
				}
				if strings.HasPrefix(line, "PID: ") {
					pid = startedPID(t, line)
				}
			}
			t.Cleanup(func() {
				asUser(t, victim, env, pb, "stop", "--socket", sock)
				if !waitGone(pid, deadline) {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			var scr string
			for end := time.Now().Add(deadline); ; {
				r := asUser(t, victim, env, pb, "output", "--socket", sock, "--no-color")
				if scr = r.stdout; strings.Contains(scr, "verdict-done") {
					break
				}
				if time.Now().After(end) {
					t.Fatalf("the session's program did not finish its checks: %v", r)
				}
				asUser(t, victim, env, pb, "wait", "--socket", sock, "--timeout", time.Until(end).String())
			}
			if strings.Contains(scr, "LISTED") || strings.Contains(scr, "MEM-OPENED") {
				t.Errorf("the session's program reached its daemon's /proc/%d:\n%s", pid, scr)
			}
			notInspectable(t, victim, pid, "the session daemon")
		})
	}
}
