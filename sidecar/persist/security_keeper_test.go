//go:build linux

package persist_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/internal/testing/testsize"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
)

// racer, run as the server's user, opens every descriptor of the server
// and of its children (the keeper of an upgrade) it can, through
// /proc/PID/fd, until the stop file exists, and prints what each opened
// one was. A non-dumpable process's entries are root's: only while a
// process is dumpable does it get anywhere.
const racer = `
import os, sys
server, stop = sys.argv[1], sys.argv[2]
got = set()
def targets():
    out = [server]
    try:
        for t in os.listdir('/proc/%s/task' % server):
            with open('/proc/%s/task/%s/children' % (server, t)) as f:
                out += f.read().split()
    except OSError:
        pass
    return out
n = 0
ts = [server]
while not os.path.exists(stop):
    n += 1
    if n % 64 == 0:
        ts = targets()
    for pid in ts:
        d = '/proc/%s/fd' % pid
        try:
            names = os.listdir(d)
        except OSError:
            continue
        for name in names:
            try:
                fd = os.open(d + '/' + name, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
            except OSError:
                continue
            try:
                got.add(os.readlink('/proc/self/fd/%d' % fd))
            except OSError:
                pass
            os.close(fd)
print('\n'.join(sorted(got)))
`

// During a live upgrade the server hands its terminals' PTY masters and
// the state (every terminal's journal) to its next image. A process of
// the server's own user (a program in one of its terminals) that opens
// /proc/SERVER/fd/N while that image is still dumpable (from the execve
// until its main makes it non-dumpable) must find neither: they are with
// a keeper process that made itself non-dumpable before it took them,
// and come back to the new image only once it is non-dumpable too.
//
// The server and the racer run as a second user: root opens a
// non-dumpable process's descriptors all the same.
func TestUpgradeExposesNoDescriptor(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that acts as a second user")
		}
		t.Fatal("this test acts as a second local user and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it")
	}
	uid, gid := otherUser(t)
	dir := t.TempDir()
	for p := dir; p != "/" && p != os.TempDir(); p = filepath.Dir(p) {
		if err := os.Chmod(p, 0o711); err != nil {
			t.Fatal(err)
		}
	}
	own := func(p string) {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, int(uid), int(gid)); err != nil {
			t.Fatal(err)
		}
	}
	runtime, bins := filepath.Join(dir, "rt"), filepath.Join(dir, "bin")
	own(runtime)
	own(bins)
	img, err := os.ReadFile(sidecarBin)
	if err != nil {
		t.Fatal(err)
	}
	bin, next := filepath.Join(bins, "ptyplex-sidecar"), filepath.Join(bins, "ptyplex-sidecar-next")
	for _, p := range []string{bin, next} {
		if err := testproc.WriteExecutable(p, img, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=/", "PTYPLEX_RUNTIME_DIR=" + runtime}
	as := func(prog string, args ...string) *exec.Cmd {
		cmd := exec.Command(prog, args...)
		cmd.Dir = "/"
		cmd.Env = env
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		return cmd
	}
	s := &server{t: t, name: "t", env: env, dir: runtime}
	t.Cleanup(func() {
		as(bin, "--persist", "t", "--stop").Run()
		if t.Failed() {
			t.Logf("server log:\n%s", s.log())
		}
	})
	h := hosttest.StartCmd(t, as(bin, "--persist", "t"))
	h.Open(proto.Open{TerminalID: "victim", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo top-secret; exec cat"}})
	h.WaitOutput("victim", "top-secret")
	server := s.pid()

	stop := filepath.Join(dir, "stop")
	r := as("/usr/bin/python3", "-c", racer, fmt.Sprint(server), stop)
	var out strings.Builder
	r.Stdout, r.Stderr = &out, &out
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	// Eight under make soak; four in make test (each is a race-built
	// execve, keeper and watchdog: about 7 s).
	upgrades := testsize.Pick(4, 8)
	for i := 0; i < upgrades; i++ {
		target := next
		if i%2 == 1 {
			target = bin
		}
		up := as(target, "--persist", "t", "--upgrade")
		if b, err := up.CombinedOutput(); err != nil || !strings.Contains(string(b), fmt.Sprintf("(pid %d)", server)) {
			t.Fatalf("upgrade %d: %v\n%s", i, err, b)
		}
	}
	if err := os.WriteFile(stop, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(); err != nil {
		t.Fatalf("the racer: %v\n%s", err, out.String())
	}
	var exposed []string
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, "ptyplex-persist-state") || l == "/dev/ptmx" || strings.HasPrefix(l, "/dev/pts/ptmx") {
			exposed = append(exposed, l)
		}
	}
	if len(exposed) > 0 {
		t.Fatalf("over %d upgrades a process of the server's user opened %q through /proc (everything it opened: %q)", upgrades, exposed, out.String())
	}
	// The terminal went through it all.
	h2 := hosttest.StartCmd(t, as(bin, "--persist", "t"))
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "victim", Offset: 0})
	h2.WaitOutput("victim", "top-secret")
	t.Logf("the racer opened: %q", out.String())
}

// A new image that cannot take the state over executes the previous
// binary with the keeper's socket, which takes the descriptors back from
// the keeper: the terminal goes on, same pid, same server pid, and the
// keeper is gone afterwards.
// The new image fails either way: an error, or a panic while it takes the
// state over (which used to end the server and every terminal).
func TestUpgradeGoesBackThroughTheKeeper(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"error", "panic"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			testUpgradeGoesBackThroughTheKeeper(t, how)
		})
	}
}

func testUpgradeGoesBackThroughTheKeeper(t *testing.T, how string) {
	fail := filepath.Join(t.TempDir(), "fail-once")
	s := newUpgradeServer(t)
	s.env = append(s.env, "PTYPLEX_TEST_FAIL_RESUME="+fail)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	pid := int(h.WaitControl(proto.TypeOpened, "c").Fields["pid"].(float64))
	server := s.pid()
	if err := os.WriteFile(fail, []byte(how), 0o644); err != nil {
		t.Fatal(err)
	}
	newPid, n := s.upgradeTo(copyBinary(t))
	if newPid != server || n != 1 {
		t.Fatalf("after the upgrade: server pid %d (want %d), %d terminals", newPid, server, n)
	}
	if _, err := os.Stat(fail); err == nil {
		t.Fatal("the new image did not fail (the test tests nothing)")
	}
	for _, want := range []string{"failing once", "going back to the previous binary", "took over 1 terminal from"} {
		if !strings.Contains(s.log(), want) {
			t.Fatalf("the server's log does not say %q:\n%s", want, s.log())
		}
	}
	h.WaitExit(hosttest.Timeout)
	h2 := s.host()
	if got := pids(t, h2)["c"]; got != pid {
		t.Fatalf("terminal c has pid %d, want %d", got, pid)
	}
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c", Offset: 0})
	h2.WaitControl(proto.TypeAttached, "c")
	h2.Input("c", "still here\n")
	h2.WaitOutput("c", "still here\r\nstill here")
	// The keeper was reaped: the server has no child but the terminal's
	// and its watchdog.
	waitFor(t, "the keeper gone", func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", server))
		var kids []string
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, k := range strings.Fields(string(b)) {
				if env, _ := os.ReadFile("/proc/" + k + "/environ"); !slices.Contains(strings.Split(string(env), "\x00"), watchdog.Env+"=1") {
					kids = append(kids, k)
				}
			}
		}
		return len(kids) == 1 && kids[0] == fmt.Sprint(pid)
	})
}

// A new image that dies before it has taken the terminals over (here it
// exits at once, as no code of ours could catch) ends the server, and the
// terminals' programs with it: those that ignore the PTY hangup too, which
// the watchdog would have killed had it not been told goodbye for the
// execve. The keeper, told which terminals are live, ends them.
func TestUpgradeDeathEndsTheTerminalsProcesses(t *testing.T) {
	t.Parallel()
	fail := filepath.Join(t.TempDir(), "fail-once")
	s := newUpgradeServer(t)
	s.env = append(s.env, "PTYPLEX_TEST_FAIL_RESUME="+fail)
	h := s.host()
	h.Open(proto.Open{TerminalID: "deaf", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", "trap '' HUP; echo ready; exec sleep 1000"}})
	pid := int(h.WaitControl(proto.TypeOpened, "deaf").Fields["pid"].(float64))
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	h.WaitOutput("deaf", "ready")
	server := s.pid()
	if err := os.WriteFile(fail, []byte("exit"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(copyBinary(t), "--persist", s.name, "--upgrade")
	cmd.Env = s.env
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Fatalf("--upgrade to an image that dies at its start succeeded:\n%s", out)
	}
	if _, err := os.Stat(fail); err == nil {
		t.Fatal("the new image did not die (the test tests nothing)")
	}
	waitFor(t, "the server gone", func() bool { return syscall.Kill(server, 0) != nil })
	waitFor(t, "the program that ignores SIGHUP gone", func() bool { return syscall.Kill(pid, 0) != nil })
	if !strings.Contains(s.log(), "ending their processes") {
		t.Errorf("the log does not say the keeper ended the terminals' processes:\n%s", s.log())
	}
}
