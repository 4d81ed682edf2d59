//go:build unix

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/session/wire"
)

func TestStartAutoSocketPermissionsAndCleanup(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "sh", "-c", "echo hi; exec cat")
	if !s.auto {
		t.Fatal("Auto-generated: want true")
	}
	dir := filepath.Dir(s.sock)
	if !strings.HasPrefix(dir, "/tmp/interminai-") || filepath.Base(s.sock) != "socket" {
		t.Fatalf("auto socket %s: want /tmp/interminai-*/socket", s.sock)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, s.sock: 0o600} {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %o, want %o", path, got, want)
		}
	}
	// The daemon is detached: a session of its own, not ours.
	if sid, _ := getsid(s.pid); sid != s.pid {
		t.Errorf("daemon session id %d, want its own pid %d", sid, s.pid)
	}
	s.waitText("hi")
	s.ok("stop")
	if !waitGone(s.pid, deadline) {
		t.Fatal("daemon still running after stop")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("socket directory %s still there after stop (err %v)", dir, err)
	}
	r := s.run("status")
	if r.code != 1 || !strings.Contains(r.stderr, "No such file") {
		t.Errorf("status after stop: want exit 1 and 'No such file': %v", r)
	}
}

func TestStartUserSocketLeftInPlaceAndReusable(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "my.sock")
	s := start(t, "--socket", sock, "--", "cat")
	if s.auto || s.sock != sock {
		t.Fatalf("socket %s auto %v; want %s, false", s.sock, s.auto, sock)
	}
	// A second daemon on a live socket is refused.
	r := ptyplex(t, "", "start", "--socket", sock, "--", "cat")
	if r.code == 0 || !strings.Contains(r.stderr, "in use") {
		t.Errorf("second start on a live socket: %v", r)
	}
	s.ok("stop")
	if !waitGone(s.pid, deadline) {
		t.Fatal("daemon still running after stop")
	}
	if _, err := os.Stat(sock); err != nil {
		t.Errorf("user-given socket removed on stop: %v", err)
	}
	// The stale socket is replaced by the next start.
	s2 := start(t, "--socket", sock, "--", "cat")
	s2.ok("status")
}

// TestStartIsReady checks that start returns only once the socket serves:
// the very next request must never see "connection refused". (How fast
// start is, is measured by BenchmarkStart, not asserted here.)
func TestStartIsReady(t *testing.T) {
	t.Parallel()
	for i := 0; i < 5; i++ {
		s := start(t, "--", "cat")
		s.ok("status")
	}
}

func TestStartErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"start", "--size", "80by24", "--", "cat"}, "Invalid size"},
		{[]string{"start", "--size", "0x24", "--", "cat"}, "Invalid size"},
		{[]string{"start"}, "the following required arguments were not provided"},
		{[]string{"start", "--size", "80x24"}, "the following required arguments were not provided"},
		{[]string{"start", "--emulator", "vt52", "--", "cat"}, "Invalid emulator"},
		{[]string{"start", "--", "/nonexistent/program"}, "no such file"},
		{[]string{"start", "--bogus"}, "bogus"},
	} {
		r := ptyplex(t, "", tc.args...)
		if r.code == 0 || !strings.Contains(strings.ToLower(r.stderr), strings.ToLower(tc.want)) {
			t.Errorf("%v: want failure mentioning %q; got %v", tc.args, tc.want, r)
		}
		if tc.want == "Invalid size" && r.code != exitFail {
			t.Errorf("%v: exit %d, want 1 as interminai's", tc.args, r.code)
		}
	}
	// A program that cannot start leaves no dead socket behind, at a path
	// given or generated: the next client hears "No such file".
	sock := filepath.Join(t.TempDir(), "s.sock")
	if r := ptyplex(t, "", "start", "--socket", sock, "--", "/nonexistent/program"); r.code == 0 {
		t.Fatalf("start of a missing program: %v", r)
	}
	if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed start left %s behind (%v)", sock, err)
	}
	if r := ptyplex(t, "", "status", "--socket", sock); r.code == 0 || !strings.Contains(r.stderr, "No such file") {
		t.Errorf("status after the failed start: %v", r)
	}
}

func TestStartNoDaemon(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "fg.sock")
	cmd := exec.Command(bin, "start", "--no-daemon", "--socket", sock, "--", "cat")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	buf := make([]byte, 4096)
	var got string
	for !strings.Contains(got, "Auto-generated: false\n") {
		n, err := stdout.Read(buf)
		if err != nil {
			t.Fatalf("reading start output: %v (so far %q)", err, got)
		}
		got += string(buf[:n])
	}
	if !strings.Contains(got, "Socket: "+sock+"\n") || !strings.Contains(got, "PID: ") {
		t.Fatalf("start --no-daemon printed %q", got)
	}
	ok(t, "status", "--socket", sock)
	ok(t, "stop", "--socket", sock)
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("foreground daemon exited with %v", waitErr)
		}
	case <-time.After(deadline):
		t.Fatal("foreground daemon still running after stop")
	}
}

func TestEmulatorCustomIsPlain(t *testing.T) {
	t.Parallel()
	s := start(t, "--emulator", "custom", "--", "printf", `\033[31mred\033[0m\n`)
	s.waitText("red")
	if out := s.ok("output"); strings.Contains(out, "\x1b") {
		t.Errorf("custom emulator output has escapes: %q", out)
	}
	x := start(t, "--", "printf", `\033[31mred\033[0m\n`)
	x.waitText("red")
	if out := x.ok("output"); !strings.Contains(out, "\x1b[31m") {
		t.Errorf("xterm emulator output lost colour: %q", out)
	}
}

func TestPTYDump(t *testing.T) {
	t.Parallel()
	dump := filepath.Join(t.TempDir(), "dump.bin")
	os.WriteFile(dump, []byte("previous\n"), 0o600)
	s := start(t, "--pty-dump", dump, "--", "printf", `\033[1mbold\033[0m\n`)
	s.ok("wait", "--quiet")
	s.ok("stop")
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatal(err)
	}
	if want := "previous\n\x1b[1mbold\x1b[0m\r\n"; string(b) != want {
		t.Errorf("dump %q, want %q", b, want)
	}
}

func TestSizeAndScrollbackFlags(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "100x30", "--scrollback", "5", "--", "sh", "-c", "seq 1 50; exec cat")
	s.waitText("50")
	st := s.ok("status")
	for _, want := range []string{"Size: 100x30\n", "Scrollback: 5/5\n"} {
		if !strings.Contains(st, want) {
			t.Errorf("status lacks %q:\n%s", want, st)
		}
	}
}

// A clear (bash's Ctrl-L: ESC[H ESC[2J) keeps the erased screen in the
// scrollback with the xterm emulator, as interminai's (alacritty) does; the
// custom emulator erases it, as interminai's custom one does.
func TestClearKeepsScreenInScrollback(t *testing.T) {
	t.Parallel()
	prog := []string{"--size", "20x5", "--", "sh", "-c", `echo one; echo two; printf '\033[H\033[2J'; echo after; exec cat`}
	s := start(t, prog...)
	s.waitText("after")
	if st := s.ok("status"); !strings.Contains(st, "Scrollback: 2/10000\n") {
		t.Errorf("xterm: status after a clear:\n%s", st)
	}
	if out := s.ok("output", "--no-color", "--from", "-", "--to", "1"); out != "one\ntwo\nafter\n" {
		t.Errorf("xterm: output --from - after a clear: %q", out)
	}
	c := start(t, append([]string{"--emulator", "custom"}, prog...)...)
	c.waitText("after")
	if st := c.ok("status"); !strings.Contains(st, "Scrollback: 0/10000\n") {
		t.Errorf("custom: status after a clear:\n%s", st)
	}
}

// A socket path may hold any byte but NUL; start printed one with a
// newline cut at the newline (the daemon's readiness report is a line),
// naming a path where nothing listens.
func TestStartSocketPathWithNewline(t *testing.T) {
	t.Parallel()
	sock := filepath.Join(t.TempDir(), "a\nb s.sock")
	r := ptyplex(t, "", "start", "--socket", sock, "--", "cat")
	if r.code != 0 {
		t.Fatalf("start: %v", r)
	}
	t.Cleanup(func() { ptyplex(t, "", "stop", "--socket", sock) })
	if !strings.HasPrefix(r.stdout, "Socket: "+sock+"\nPID: ") || !strings.HasSuffix(r.stdout, "\nAuto-generated: false\n") {
		t.Errorf("start printed:\n%s", r.stdout)
	}
	if st := ok(t, "status", "--socket", sock); !strings.Contains(st, "Running: true") {
		t.Errorf("status: %s", st)
	}
}

// A relative --socket in a directory whose absolute name is too long for
// a socket address (107 bytes on Linux) works from that directory, as in
// interminai; start refused it, since it made the path absolute first.
// list, run elsewhere, shows such a session as unreachable, never stale.
func TestStartRelativeSocketInLongDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for len(dir) <= wire.MaxSocketPath {
		dir = filepath.Join(dir, strings.Repeat("d", 40))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	inDir := func(args ...string) result {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
	}
	env := registryEnv(t)
	start := exec.Command(bin, "start", "--socket", "s.sock", "--", "cat")
	start.Dir, start.Env = dir, env
	out, err := start.Output()
	if err != nil {
		t.Fatalf("start in a directory of %d bytes: %v\n%s", len(dir), err, out)
	}
	t.Cleanup(func() { inDir("stop", "--socket", "s.sock") })
	if !strings.HasPrefix(string(out), "Socket: s.sock\nPID: ") {
		t.Errorf("start printed:\n%s", out)
	}
	if r := inDir("status", "--socket", "s.sock"); r.code != 0 || !strings.Contains(r.stdout, "Running: true") {
		t.Errorf("status: %v", r)
	}
	abs := filepath.Join(dir, "s.sock")
	if l, ok := listJSON(t, env)[abs]; !ok || l.State != wire.StateUnreachable || !strings.Contains(l.Problem, "over the limit") {
		t.Errorf("list: %+v (present %v)", l, ok)
	}
	if r := ptyplexEnv(t, env, "list", "--prune"); strings.Contains(r.stdout, "Removed") {
		t.Errorf("list --prune removed a live session: %v", r)
	}
	if r := inDir("stop", "--socket", "s.sock"); r.code != 0 {
		t.Errorf("stop: %v", r)
	}
}
