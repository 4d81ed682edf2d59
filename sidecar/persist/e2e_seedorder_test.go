//go:build unix

package persist_test

import (
	"fmt"
	"regexp"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// What a host that speaks only the seed protocol sees through the bridge
// is what the plain sidecar shows it, in these corners too.

// CLOSE lifts the credit also when the child has already exited: the
// output the host had no credit for, and then the EXIT, come at once. (The
// server reads a terminal's output into its journal whatever the credit,
// so its child often ends while the host is out of credit.)
func TestCloseAfterTheExitLiftsTheCredit(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	zero := uint64(0)
	h.Open(proto.Open{TerminalID: "c0", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "printf abc; exit 9"}, Credit: &zero})
	h.WaitControl(proto.TypeOpened, "c0")
	listUntil(t, h, "c0 exited", func(l proto.Listed) bool {
		e, ok := entry(l, "c0")
		return ok && e.Exited
	})
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "c0"})
	ex := h.WaitControl(proto.TypeExit, "c0")
	if ex.Fields["exitCode"] != float64(9) || h.Now().Output("c0") != "abc" {
		t.Fatalf("EXIT %s after output %q; want exit 9 after abc", ex.Raw, h.Now().Output("c0"))
	}
}

// An OPEN for an id just opened is refused after the first OPEN's
// OPENED, never before it.
func TestDuplicateOpenAnsweredAfterOpened(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	const n = 20
	for i := range n {
		o := proto.Open{TerminalID: fmt.Sprint("d", i), Cols: 80, Rows: 24, Cmd: "/bin/cat"}
		h.Open(o)
		h.Open(o)
	}
	h.MustUntil("an OPENED and an ERROR for every id", func(sn hosttest.Snapshot) bool {
		for i := range n {
			if len(sn.Controls(fmt.Sprint("d", i))) < 2 {
				return false
			}
		}
		return true
	})
	sn := h.Now()
	for i := range n {
		cs := sn.Controls(fmt.Sprint("d", i))
		if cs[0].Type != proto.TypeOpened || cs[1].Type != proto.TypeError || cs[1].Fields["message"] != "terminal id already exists" {
			t.Errorf("d%d: %v then %s; want OPENED, then the refusal", i, cs[0].Type, cs[1].Raw)
		}
	}
}

// A host that writes its OPENs and closes its input at once reads an
// answer to every one before the end of its stream (the terminals stay
// on the server, detached).
func TestOpensThenEndOfInputAllAnswered(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for round := range 5 {
		h := s.host()
		var ids []string
		for i := range 5 {
			id := fmt.Sprintf("r%d-%d", round, i)
			ids = append(ids, id)
			h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/cat"})
		}
		bad := fmt.Sprintf("r%d-bad", round)
		h.Open(proto.Open{TerminalID: bad, Cols: 80, Rows: 24, Cmd: "/nonexistent/program"})
		h.CloseStdin()
		if _, err := h.WaitExit(hosttest.Timeout); err != nil {
			t.Fatalf("round %d: the bridge: %v", round, err)
		}
		sn := h.Now()
		for _, id := range ids {
			cs := sn.Controls(id)
			if len(cs) == 0 || cs[0].Type != proto.TypeOpened {
				t.Errorf("round %d: %s got %v before the end of the stream; want its OPENED", round, id, cs)
			}
		}
		if cs := sn.Controls(bad); len(cs) != 1 || cs[0].Type != proto.TypeError {
			t.Errorf("round %d: the failing OPEN got %v", round, cs)
		}
	}
}

// A bridge sent SIGTERM (or SIGINT, SIGHUP) ends as the plain sidecar
// does, with status 0 and a line saying why, instead of dying of the
// signal; its terminal stays on the server.
func TestBridgeEndsCleanlyOnSignals(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
		name := unix.SignalName(sig)
		h := s.host()
		h.Open(proto.Open{TerminalID: name, Cols: 80, Rows: 24, Cmd: "/bin/cat"})
		h.WaitControl(proto.TypeOpened, name)
		h.Cmd.Process.Signal(sig)
		code, err := h.WaitExit(hosttest.Timeout)
		if err != nil || code != 0 {
			t.Fatalf("%s: the bridge ended with %d, %v; want status 0", name, code, err)
		}
		h.WaitStderr(regexp.MustCompile(`exiting with status 0: received ` + name))
		waitDetached(t, s.host(), name)
	}
}
