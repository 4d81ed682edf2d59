//go:build linux

package mcpserver_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
	"golang.org/x/sys/unix"
)

// The pid reuse test turns a pid counter back (ns_last_pid). Done in the
// machine's pid namespace, that hands recently freed pids to whatever
// other tests start at that moment, which then fail in odd ways. So the
// test runs the MCP server in a pid namespace of its own: the test binary
// re-executes itself (reaperEnv) with CLONE_NEWPID and CLONE_NEWNS, as the
// namespace's init, mounts a /proc of the namespace, and starts the
// server, whose daemons and the bystanders all live there, with pids of
// that namespace. ns_last_pid is then the namespace's own.

// lastPidFile sets the pid the kernel handed out last in the pid
// namespace of the process that writes it: the next process gets the one
// after it (what checkpoint and restore tools use to give a process back
// its pid). Root only.
const lastPidFile = "/proc/sys/kernel/ns_last_pid"

// runReaper is the namespace's init. args are the server's command line.
// Descriptor 3 brings the test's requests, one a line, and descriptor 4
// takes the answers:
//
//	gone PID   wait (within the deadline) until PID has ended: "ok" or "alive"
//	spawn PID  start a bystander, `sleep 1000`, with that pid: "ok TRIES" or "fail WHY"
//	alive PID  "yes" or "no"
//
// As init it reaps every orphan at once (the session daemons, once
// `ptyplex start` has exited), so that their pids are free for reuse. When
// the server exits it writes "exit STATUS" and "bystander PID alive|dead"
// for each bystander, and exits, which ends everything in the namespace.
func runReaper(args []string) int {
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "reaper: %s: %v\n", what, err)
		return 1
	}
	if os.Getpid() != 1 {
		return fail("setup", fmt.Errorf("pid %d: not the init of a new pid namespace", os.Getpid()))
	}
	// Our mounts must not reach the machine's: a /proc of this namespace
	// over ours, in our own mount namespace.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("make / private", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fail("mount /proc", err)
	}
	server, err := os.StartProcess(args[0], args, &os.ProcAttr{Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		return fail("start the server", err)
	}
	os.Stdin.Close()
	os.Stdout.Close()
	reqs, answers := os.NewFile(3, "requests"), os.NewFile(4, "answers")

	var mu sync.Mutex
	var bystanders []int
	exited := make(chan int)
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil {
				exited <- -1
				return
			}
			if pid == server.Pid {
				exited <- ws.ExitStatus()
				return
			}
		}
	}()
	go func() {
		sc := bufio.NewScanner(reqs)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) != 2 {
				continue
			}
			pid, _ := strconv.Atoi(f[1])
			var ans string
			switch f[0] {
			case "gone":
				ans = "alive"
				if procwait.Gone(pid, deadline) {
					ans = "ok"
				}
			case "alive":
				ans = "no"
				if procwait.Alive(pid) {
					ans = "yes"
				}
			case "spawn":
				tries, err := spawnAt(pid)
				if err != nil {
					ans = "fail " + err.Error()
				} else {
					ans = "ok " + strconv.Itoa(tries)
					mu.Lock()
					bystanders = append(bystanders, pid)
					mu.Unlock()
				}
			}
			fmt.Fprintln(answers, ans)
		}
	}()
	code := <-exited
	mu.Lock()
	defer mu.Unlock()
	fmt.Fprintf(answers, "exit %d\n", code)
	for _, pid := range bystanders {
		state := "dead"
		if procwait.Alive(pid) {
			state = "alive"
		}
		fmt.Fprintf(answers, "bystander %d %s\n", pid, state)
	}
	return 0
}

// spawnAt starts a bystander, `sleep 1000`, with the given pid of our
// namespace, which must be free. Another process started in the
// namespace at the same moment (a daemon) takes a pid too, so it tries
// until the bystander gets that one. The init's reaper collects the
// failed tries.
func spawnAt(pid int) (int, error) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		return 0, err
	}
	end := time.Now().Add(deadline)
	for tries := 1; ; tries++ {
		if err := os.WriteFile(lastPidFile, []byte(strconv.Itoa(pid-1)), 0); err != nil {
			return tries, fmt.Errorf("write %s: %w", lastPidFile, err)
		}
		p, err := os.StartProcess(sleep, []string{"sleep", "1000"}, &os.ProcAttr{})
		if err != nil {
			return tries, err
		}
		if p.Pid == pid {
			return tries, nil
		}
		p.Kill()
		if time.Now().After(end) {
			return tries, fmt.Errorf("could not start a process with pid %d in %d tries (is it still taken?)", pid, tries)
		}
	}
}

// nsInit is the test's side of runReaper.
type nsInit struct {
	t       *testing.T
	req     *os.File
	answers *bufio.Scanner
}

// ask sends one request and returns the answer.
func (n *nsInit) ask(format string, args ...any) string {
	n.t.Helper()
	if _, err := fmt.Fprintf(n.req, format+"\n", args...); err != nil {
		n.t.Fatalf("to the namespace's init: %v", err)
	}
	return n.next()
}

func (n *nsInit) next() string {
	n.t.Helper()
	if !n.answers.Scan() {
		n.t.Fatalf("the namespace's init did not answer (%v)", n.answers.Err())
	}
	return n.answers.Text()
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
// Making the kernel reuse a pid on purpose: the server runs in a pid
// namespace of its own (see runReaper), whose init reaps the exited
// daemon at once, and the namespace's ns_last_pid then hands its pid to
// the bystander. Both are real: a real daemon exits, and a real process
// holds its pid when the server acts.
func TestStopNeverSignalsReusedPID(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that needs root to make a pid namespace and choose a pid")
		}
		t.Fatal("this test needs root to make a pid namespace and write its " + lastPidFile + " (CI runs as root); set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	reqR, reqW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ansR, ansW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reqW.Close(); ansR.Close() })
	cmd := exec.Command(self, bin, "mcp", "--idle-exit", "1s")
	cmd.Env = append(os.Environ(), reaperEnv+"=1")
	cmd.ExtraFiles = []*os.File{reqR, ansW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID | syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	c := connectCmd(t, cmd)
	reqR.Close()
	ansW.Close()
	ns := &nsInit{t: t, req: reqW, answers: bufio.NewScanner(ansR)}

	// Two sessions whose programs exit at once; their daemons follow after
	// the idle exit, with no request in between.
	// Not c.start: its cleanup would look for the daemons' pids, which are
	// the namespace's, in ours. Everything in the namespace ends with its
	// init, when the server has exited.
	byTool := ok[started](c, "start", map[string]any{"command": []string{"true"}})
	byDisconnect := ok[started](c, "start", map[string]any{"command": []string{"true"}})
	for _, s := range []started{byTool, byDisconnect} {
		if a := ns.ask("gone %d", s.PID); a != "ok" {
			t.Fatalf("daemon %d did not end by itself after its idle exit (%s)", s.PID, a)
		}
	}
	for _, pid := range []int{byTool.PID, byDisconnect.PID} {
		a := ns.ask("spawn %d", pid)
		if !strings.HasPrefix(a, "ok ") {
			t.Fatalf("bystander with pid %d: %s", pid, a)
		}
		t.Logf("bystander has pid %d (in the test's pid namespace) after %s tries", pid, strings.TrimPrefix(a, "ok "))
	}

	ok[map[string]any](c, "stop", map[string]any{"session": byTool.Session})
	if a := ns.ask("alive %d", byTool.PID); a != "yes" {
		t.Errorf("stop signalled pid %d, which had passed from the session's daemon to another process", byTool.PID)
	}
	c.close() // the server stops its remaining session and exits; init reports
	if a := ns.next(); a != "exit 0" {
		t.Errorf("the server: %s", a)
	}
	for range 2 {
		var pid int
		var state string
		if _, err := fmt.Sscanf(ns.next(), "bystander %d %s", &pid, &state); err != nil {
			t.Fatal(err)
		}
		if state != "alive" {
			what := "stop"
			if pid == byDisconnect.PID {
				what = "disconnecting"
			}
			t.Errorf("%s signalled pid %d, which had passed from the session's daemon to another process", what, pid)
		}
	}
}
