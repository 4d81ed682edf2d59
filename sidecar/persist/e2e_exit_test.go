//go:build unix

package persist_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
)

// An exit while nobody holds the terminal is kept, shown by LIST, and
// delivered after the rest of the output to the host that attaches.
func TestExitWhileDetachedIsKept(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	// The shell exits only once the test has seen the DETACHED that ends
	// the second host's hold: an exit while that host still held the
	// terminal would be an EXIT delivered, not one kept.
	release := filepath.Join(t.TempDir(), "release")
	h1 := s.host()
	h1.Open(proto.Open{TerminalID: "e", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		"stty -echo; echo ready; read x; echo bye; until [ -e '" + release + "' ]; do sleep 0.01; done; exit 7"}})
	h1.WaitOutput("e", "ready\r\n")
	h1.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "e"})
	h1.WaitControl(proto.TypeDetached, "e")
	have := len(h1.Now().Output("e"))
	h2 := s.host()
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "e", Offset: uint64(have)})
	h2.WaitControl(proto.TypeAttached, "e")
	h2.Input("e", "go\n")
	h2.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "e"})
	h2.WaitControl(proto.TypeDetached, "e")
	have += len(h2.Now().Output("e"))
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	l := listUntil(t, h2, "the exit while detached", func(l proto.Listed) bool { e, _ := entry(l, "e"); return e.Exited })
	e, _ := entry(l, "e")
	if e.ExitCode == nil || *e.ExitCode != 7 || e.Attached || e.Produced != uint64(len("ready\r\nbye\r\n")) {
		t.Fatalf("LISTED after the exit: %+v", e)
	}
	h3 := s.host()
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "e", Offset: uint64(have)})
	ex := h3.WaitControl(proto.TypeExit, "e")
	if ex.Fields["exitCode"] != float64(7) {
		t.Fatalf("EXIT %s", ex.Raw)
	}
	if got := h2.Now().Output("e") + h3.Now().Output("e"); got != "bye\r\n" {
		t.Fatalf("after the detach the hosts got %q, want %q", got, "bye\r\n")
	}
}

// --keep-exited bounds how long an unread exit is kept.
func TestKeepExitedExpires(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host("--keep-exited", "50ms")
	// With no credit, nothing is sent, so the EXIT is held back behind
	// the unsent output: the exit is read by nobody.
	zero := uint64(0)
	h.Open(proto.Open{TerminalID: "k", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo ready"}, Credit: &zero})
	listUntil(t, h, "the exit", func(l proto.Listed) bool { e, _ := entry(l, "k"); return e.Exited })
	h.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "k"})
	listUntil(t, h, "an unread exit to expire after --keep-exited", func(l proto.Listed) bool { _, ok := entry(l, "k"); return !ok })
	h.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "k"})
	if e := h.WaitControl(proto.TypeError, "k"); !strings.Contains(e.Raw, `no terminal \"k\"`) {
		t.Fatalf("ATTACH after the expiry: %s", e.Raw)
	}
}

// OPEN's journal and detached fields are checked, and the server's total
// caps the journals.
func TestOpenJournalFields(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host("--journal", "4096", "--journal-total", "10000")
	for _, c := range []struct {
		open map[string]any
		want string
	}{
		{map[string]any{"journal": 0}, "journal must be a whole number of bytes in 1..268435456, not 0"},
		{map[string]any{"journal": -5}, "not -5"},
		{map[string]any{"journal": 1 << 40}, "not 1099511627776"},
		{map[string]any{"detached": "keep"}, `detached must be \"ring\" or \"park\", not \"keep\"`},
	} {
		c.open["terminalId"], c.open["cmd"], c.open["cols"], c.open["rows"] = "x", "/bin/cat", 80, 24
		before := len(h.Now().Frames)
		h.SendJSON(proto.TypeOpen, c.open)
		sn := h.MustUntil("ERROR", func(sn hosttest.Snapshot) bool { _, ok := controlAfter(sn, before, proto.TypeError, "x"); return ok })
		m, _ := controlAfter(sn, before, proto.TypeError, "x")
		if !strings.Contains(m["message"].(string), strings.ReplaceAll(c.want, `\"`, `"`)) {
			t.Errorf("OPEN %v: ERROR %v, want %q", c.open, m["message"], c.want)
		}
	}
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "a")
	h.Open(proto.Open{TerminalID: "b", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "b")
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	if e := h.WaitControl(proto.TypeError, "c"); !strings.Contains(e.Raw, "already reserve 8192 of its 10000-byte total") {
		t.Fatalf("OPEN past the total: %s", e.Raw)
	}
	if l := list(t, h); len(l.Terminals) != 2 {
		t.Fatalf("refused OPENs left terminals behind: %+v", l)
	}
}
