package sshtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// fakeTB records how Start ends a test, without ending this one.
type fakeTB struct {
	testing.TB
	how string
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Skip(args ...any) {
	f.how = "skip: " + fmt.Sprint(args...)
	runtime.Goexit()
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.how = "fail: " + fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func startWithout(t *testing.T) string {
	f := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(f)
	}()
	<-done
	return f.how
}

// Without sshd the tests skip, naming the package, unless
// PTYPLEX_REQUIRE_SSHD makes that a failure.
func TestMissingSshd(t *testing.T) {
	defer func(p string) { sshdPath = p }(sshdPath)
	sshdPath = "/nonexistent/sshd"
	t.Setenv(RequireEnv, "")
	if how := startWithout(t); !strings.HasPrefix(how, "skip: ") || !strings.Contains(how, "openssh-server") {
		t.Errorf("without sshd: %q, want a skip naming openssh-server", how)
	}
	t.Setenv(RequireEnv, "1")
	if how := startWithout(t); !strings.HasPrefix(how, "fail: ") || !strings.Contains(how, RequireEnv) {
		t.Errorf("without sshd, %s=1: %q, want a failure", RequireEnv, how)
	}
	if _, err := New(t.TempDir(), t.Logf); !errors.Is(err, ErrNoSshd) {
		t.Errorf("New without sshd: %v, want ErrNoSshd", err)
	}
}

// A login through the server works, and after Stop it does not.
func TestServer(t *testing.T) {
	s := Start(t)
	argv := s.Command(false, "echo", "over", "ssh")
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "over ssh" {
		t.Fatalf("ssh: %v %q", err, out)
	}
	s.Stop()
	if err := exec.Command(argv[0], argv[1:]...).Run(); err == nil {
		t.Error("a login after Stop worked")
	}
}

// A port taken between freePort and sshd's bind: sshd exits, and the
// server starts again on another port.
func TestPortTaken(t *testing.T) {
	if _, err := os.Stat(Sshd); err != nil {
		t.Skip(ErrNoSshd.Error())
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	defer func(f func() (int, error)) { pickPort = f }(pickPort)
	calls := 0
	pickPort = func() (int, error) {
		if calls++; calls == 1 {
			return taken, nil
		}
		return freePort()
	}
	var log strings.Builder
	s, err := New(t.TempDir(), func(format string, args ...any) { fmt.Fprintf(&log, format+"\n", args...) })
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	defer s.Stop()
	if s.Port == taken || calls != 2 {
		t.Errorf("port %d after %d picks (taken: %d)", s.Port, calls, taken)
	}
	if !strings.Contains(log.String(), "starting again on another port") {
		t.Errorf("log: %s", log.String())
	}
}
