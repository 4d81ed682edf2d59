package testproc

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
)

// childEnv makes the test binary play a test binary using the package:
// "leak" leaves a detached process behind and ends normally; "die" starts
// a detached process and a tied busy loop, then waits to be killed.
const childEnv = "TESTPROC_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "leak":
		finish := Start()
		fmt.Println(detached())
		os.Exit(finish(0))
	case "spare":
		finish := Start()
		server, sleep := spared()
		SpareDescendantsOf(server)
		fmt.Println(sleep, server)
		os.Exit(finish(0))
	case "die":
		Start()
		hog := exec.Command("/bin/sh", "-c", "while :; do :; done")
		TieToParent(hog)
		if err := hog.Start(); err != nil {
			panic(err)
		}
		fmt.Println(detached(), hog.Process.Pid)
		select {}
	}
	os.Exit(m.Run())
}

// detached starts a process that leaves its parent's session and is
// reparented away from it, as a daemon does, and returns its pid.
func detached() int {
	out, err := exec.Command("/bin/sh", "-c", "setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		panic(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		panic(err)
	}
	return pid
}

// spared starts an unmarked "server" (as one started before the run)
// that runs a marked program (as a terminal started with a host's
// environment), and returns both pids.
func spared() (server, prog int) {
	cmd := exec.Command("/bin/sh", "-c", `PTYPLEX_TEST_OWNER="$MARK" sleep 600 </dev/null >/dev/null 2>&1 & echo $!; exec sleep 600 >/dev/null`)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, OwnerEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "MARK="+os.Getenv(OwnerEnv))
	out, err := cmd.StdoutPipe()
	if err != nil {
		panic(err)
	}
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		panic(err)
	}
	prog, err = strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		panic(err)
	}
	return cmd.Process.Pid, prog
}

// child runs the test binary in one of the childEnv modes and returns it
// with the pids it printed.
func child(t *testing.T, mode string) (*exec.Cmd, []int) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child %s printed no pids: %v", mode, err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, _ := strconv.Atoi(f)
		pids = append(pids, pid)
		t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	}
	return cmd, pids
}

// A test binary killed outright: the sweeper ends its detached process,
// and the kernel its tied busy loop.
func TestKilledBinaryLeavesNothing(t *testing.T) {
	t.Parallel()
	cmd, pids := child(t, "die")
	for _, pid := range pids {
		if !procwait.Alive(pid) {
			t.Fatalf("pid %d is not running before the kill", pid)
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	for _, pid := range pids {
		if !procwait.Gone(pid, 20*time.Second) {
			t.Errorf("pid %d still running after its test binary was killed", pid)
		}
	}
}

// A test binary that ends normally with a process left: finish kills it
// and turns the exit code into a failure.
func TestFinishFailsOnLeftovers(t *testing.T) {
	t.Parallel()
	cmd, pids := child(t, "leak")
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("child with a leftover exited with %v, want status 1", err)
	}
	if !procwait.Gone(pids[0], 10*time.Second) {
		t.Errorf("leftover pid %d still running", pids[0])
	}
}

// A marked process under a spared one (a persistent server's terminal)
// is neither a leftover for finish nor the sweeper's to end.
func TestSpareDescendantsOf(t *testing.T) {
	t.Parallel()
	cmd, pids := child(t, "spare")
	if err := cmd.Wait(); err != nil {
		t.Errorf("child with a spared process exited with %v, want 0", err)
	}
	// The sweeper has run: finish waits for it.
	if !procwait.Alive(pids[0]) {
		t.Errorf("spared pid %d was ended", pids[0])
	}
	// And it carries the child's mark: without the exemption, it would
	// have been ended.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pids[0]))
	if err != nil {
		t.Fatal(err)
	}
	marked := false
	for _, kv := range strings.Split(string(env), "\x00") {
		if v, ok := strings.CutPrefix(kv, OwnerEnv+"="); ok {
			marked = len(strings.Fields(v)) > len(strings.Fields(os.Getenv(OwnerEnv)))
		}
	}
	if !marked {
		t.Errorf("spared pid %d does not carry the child's mark: %q", pids[0], env)
	}
}

func TestGorace(t *testing.T) {
	for _, c := range []struct{ env, log, want string }{
		{"", "", raceExit},
		{"", "/tmp/r", "log_path=/tmp/r " + raceExit},
		{"halt_on_error=1", "/tmp/r", "halt_on_error=1 log_path=/tmp/r " + raceExit},
		{"log_path=/x atexit_sleep_ms=500", "/tmp/r", "atexit_sleep_ms=500 log_path=/tmp/r"},
	} {
		t.Setenv("GORACE", c.env)
		if got := Gorace(c.log); got != c.want {
			t.Errorf("GORACE=%q, log %q: got %q, want %q", c.env, c.log, got, c.want)
		}
	}
}

func TestHasToken(t *testing.T) {
	if !hasToken("a b c", "b") || hasToken("a bb", "b") || hasToken("", "b") {
		t.Error("hasToken matches other than whole tokens")
	}
}
