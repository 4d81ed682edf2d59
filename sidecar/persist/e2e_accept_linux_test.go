package persist_test

import (
	"fmt"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// TestServerSurvivesDescriptorExhaustion runs the server out of
// descriptors (its limit lowered with prlimit, then connections made until
// an accept fails with EMFILE). A failed accept used to end Serve, and
// with it the server and every terminal; now the server waits, accepts
// again once descriptors are free, and its terminals never notice.
func TestServerSurvivesDescriptorExhaustion(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "keep", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "keep")
	h.Input("keep", "before\n")
	h.WaitOutput("keep", "before\r\n")
	pid := s.pid()

	// Only the soft limit: raising a hard limit back needs CAP_SYS_RESOURCE.
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatalf("prlimit on the server: %v", err)
	}
	low := unix.Rlimit{Cur: 64, Max: old.Max}
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil); err != nil {
		t.Fatalf("prlimit on the server: %v", err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil && err != syscall.ESRCH {
				t.Errorf("prlimit back: %v", err)
			}
		}
	}
	defer restore()

	sock := s.dir + "/sidecar/" + s.name + ".sock"
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.log(), "accept: ") {
		if time.Now().After(deadline) {
			t.Fatalf("%d connections and no failed accept in the server's log:\n%s", len(conns), s.log())
		}
		if len(conns) < 1000 {
			c, err := net.DialTimeout("unix", sock, time.Second)
			if err == nil {
				conns = append(conns, c)
				continue
			}
		}
		time.Sleep(5 * time.Millisecond) // the backlog is full: let the server try
	}
	// The server ran out; give the descriptors back.
	for _, c := range conns {
		c.Close()
	}
	conns = nil
	restore()

	// A new host reaches the server, which still has its terminal, and
	// the terminal still echoes to the first host.
	out, err := s.run("--list")
	if err != nil || !strings.Contains(out, "keep") {
		t.Fatalf("--list after the server ran out of descriptors: %v\n%s\nserver log:\n%s", err, out, s.log())
	}
	h.Input("keep", "after\n")
	h.WaitOutput("keep", "after\r\n")
	if got := s.pid(); got != pid {
		t.Fatalf("the server's pid is %d, was %d", got, pid)
	}
}

// An upgrade whose trial run of the binary cannot even start (the server
// at its descriptor limit) is refused saying so, not blaming the binary's
// age ("does not accept this server's flags ... too old or too new"),
// and the terminals go on. The limit is set just above what the server
// holds, counted in its /proc/PID/fd, which only root may read.
func TestUpgradeTrialThatCannotStart(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
			t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that reads the non-dumpable server's /proc/PID/fd")
		}
		t.Fatal("this test reads the non-dumpable server's /proc/PID/fd and must run as root (CI does); set PTYPLEX_NO_ROOT_TESTS=1 to skip it")
	}
	s := newUpgradeServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "keep", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "keep")
	pid := s.pid()
	bin := copyBinary(t)
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatal(err)
	}
	defer unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil)
	hit := false
	for extra := 1; extra <= 8 && !hit; extra++ {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
		if err != nil {
			t.Fatal(err)
		}
		low := unix.Rlimit{Cur: uint64(len(fds) + extra), Max: old.Max}
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &low, nil); err != nil {
			t.Fatal(err)
		}
		msg := upgradeError(t, h, bin)
		if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "too many open files") {
			continue
		}
		if strings.Contains(msg, "too old or too new") {
			t.Errorf("with %d descriptors free: ERROR %q blames the binary", extra, msg)
		}
		hit = strings.Contains(msg, "could not try "+bin+" before the upgrade")
	}
	if !hit {
		t.Fatal("no limit made the trial run fail to start")
	}
	h.Input("keep", "still\n")
	h.WaitOutput("keep", "still\r\n")
}
