//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/procwait"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"

	"github.com/ptyplex/ptyplex/internal/testing/buildtags"
)

// bin is the ptyplex binary under test, built once by TestMain.
var (
	bin     string
	raceDir string // GORACE log_path directory when built with -race
)

// deadline is how long any condition may take to come true; generous for
// a loaded 2-core CI machine. Nothing sleeps: every wait is on an event.
const deadline = 10 * time.Second

func TestMain(m *testing.M) {
	finish := testproc.Start()
	dir, err := os.MkdirTemp("", "ptyplex-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The sessions the tests start register in a directory of the run's,
	// not in the user's own registry, where `ptyplex list` would show
	// them stale afterwards.
	run := filepath.Join(dir, "run")
	os.Mkdir(run, 0o700)
	os.Setenv("XDG_RUNTIME_DIR", run)
	os.Unsetenv("PTYPLEX_RUNTIME_DIR")
	bin = filepath.Join(dir, "ptyplex")
	args := append([]string{"build", "-o", bin}, buildtags.GoBuildArgs()...)
	if raceEnabled {
		args = append(args, "-race")
		raceDir = filepath.Join(dir, "race")
		os.Mkdir(raceDir, 0o700)
		// Daemons run with stdio on /dev/null; race reports go to files.
		testproc.SetGorace(filepath.Join(raceDir, "report"))
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building ptyplex:", err)
		os.Exit(1)
	}
	code := m.Run()
	if raceDir != "" {
		reports, _ := filepath.Glob(filepath.Join(raceDir, "report*"))
		for _, r := range reports {
			b, _ := os.ReadFile(r)
			fmt.Fprintf(os.Stderr, "race report from a ptyplex process (%s):\n%s\n", r, b)
			code = 1
		}
	}
	code = finish(code)
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one ptyplex run printed and returned.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// ptyplex runs the binary with args and optional stdin.
func ptyplex(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("ptyplex %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// ok runs ptyplex and fails the test unless it exits 0.
func ok(t testing.TB, args ...string) string {
	t.Helper()
	r := ptyplex(t, "", args...)
	if r.code != 0 {
		t.Fatalf("ptyplex %s: %v", strings.Join(args, " "), r)
	}
	return r.stdout
}

// sess is a started daemon.
type sess struct {
	t    testing.TB
	sock string
	pid  int
	auto bool
}

// requireTool fails (not skips) when a program the tests drive is missing:
// CI installs them, and a silent skip would hide a gap.
func requireTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s is required by this test but not installed (apt-get install %s)", name, name)
	}
}

// start runs `ptyplex start` with args and registers a cleanup that stops
// the daemon, and kills it if STOP did not end it.
func start(t testing.TB, args ...string) *sess {
	t.Helper()
	out := ok(t, append([]string{"start"}, args...)...)
	s := &sess{t: t}
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		switch k {
		case "Socket":
			s.sock = v
		case "PID":
			s.pid, _ = strconv.Atoi(v)
		case "Auto-generated":
			s.auto = v == "true"
		}
	}
	if s.sock == "" || s.pid == 0 {
		t.Fatalf("start printed no socket or pid:\n%s", out)
	}
	t.Cleanup(func() {
		r := ptyplex(t, "", "stop", "--socket", s.sock)
		if !waitGone(s.pid, deadline) {
			syscall.Kill(s.pid, syscall.SIGKILL)
			t.Errorf("daemon %d still running after stop: %v", s.pid, r)
		}
	})
	return s
}

// waitGone waits (on a pidfd or kqueue, not by polling) until pid has
// exited; it may be a zombie until its parent reaps it.
func waitGone(pid int, limit time.Duration) bool { return procwait.Gone(pid, limit) }

func (s *sess) run(args ...string) result {
	s.t.Helper()
	return ptyplex(s.t, "", append(args[:1:1], append([]string{"--socket", s.sock}, args[1:]...)...)...)
}

func (s *sess) ok(args ...string) string {
	s.t.Helper()
	r := s.run(args...)
	if r.code != 0 {
		s.t.Fatalf("ptyplex %s: %v", strings.Join(args, " "), r)
	}
	return r.stdout
}

func (s *sess) input(text string) { s.t.Helper(); s.ok("input", "--text", text) }

func (s *sess) screen() string { s.t.Helper(); return s.ok("output", "--no-color") }

// waitFor returns the plain screen once pred holds for it. Between checks
// it blocks in `ptyplex wait` (activity mode), so it wakes on output.
func (s *sess) waitFor(what string, pred func(screen string) bool) string {
	s.t.Helper()
	end := time.Now().Add(deadline)
	for {
		scr := s.screen()
		if pred(scr) {
			return scr
		}
		left := time.Until(end)
		if left <= 0 {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, scr)
		}
		r := s.run("wait", "--timeout", left.String())
		if r.code != 0 && r.code != exitTimeout {
			s.t.Fatalf("wait: %v", r)
		}
	}
}

// waitText waits until the plain screen contains text.
func (s *sess) waitText(text string) string {
	s.t.Helper()
	return s.waitFor(strconv.Quote(text), func(scr string) bool { return strings.Contains(scr, text) })
}

// call speaks raw protocol: it sends line (a newline is added) and returns
// the decoded answer.
func rawCall(t testing.TB, sock, line string) map[string]any {
	t.Helper()
	resp := rawExchange(t, sock, line+"\n")
	var m map[string]any
	if err := json.Unmarshal([]byte(resp), &m); err != nil {
		t.Fatalf("answer to %q is not JSON: %q", line, resp)
	}
	return m
}

// rawExchange writes payload as is and returns the answer line.
func rawExchange(t testing.TB, sock, payload string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * deadline))
	if _, err := c.Write([]byte(payload)); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("reading answer to %.80q: %v", payload, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// shell starts bash without rc files and with a known prompt.
func shell(t testing.TB, extra ...string) *sess {
	t.Helper()
	args := append(extra, "--", "env", "PS1=$ ", "bash", "--norc", "--noprofile")
	s := start(t, args...)
	s.waitText("$")
	return s
}
