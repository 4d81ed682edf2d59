package persist_test

import (
	"net"
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
