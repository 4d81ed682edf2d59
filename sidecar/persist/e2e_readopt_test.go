//go:build unix

package persist_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// A host written for the plain sidecar reopens its ids after it died. With
// --readopt its OPEN of a detached terminal's id gives it that terminal:
// OPENED with the same pid, the screen repainted as OUTPUT, the OPEN's
// size applied, and live output. Without --readopt, and for a terminal
// another connection holds, the OPEN is refused as before.
func TestReadoptGivesTheDetachedTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	open := proto.Open{TerminalID: "t1", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		"stty -echo; echo first-run; while read l; do echo \"got $l\"; stty size; done"}}
	h1 := s.host("--readopt")
	h1.Open(open)
	pid := openedPIDOf(t, h1, "t1")
	h1.WaitOutput("t1", "first-run\r\n")
	h1.Input("t1", "one\n")
	h1.WaitOutput("t1", "24 80\r\n")
	killHost(h1) // its terminal goes on, detached

	plain := s.host()
	waitDetached(t, plain, "t1")
	plain.Open(open)
	if e := plain.WaitControl(proto.TypeError, "t1"); !strings.Contains(e.Fields["message"].(string), "terminal id already exists") {
		t.Fatalf("OPEN of a detached id without --readopt: %s", e.Raw)
	}

	h2 := s.host("--readopt")
	again := open
	again.Cols, again.Rows = 100, 30
	h2.Open(again)
	op := h2.WaitControl(proto.TypeOpened, "t1")
	if int(op.Fields["pid"].(float64)) != pid || op.Fields["readopted"] != true {
		t.Fatalf("re-adopting OPENED: %s, want pid %d and readopted", op.Raw, pid)
	}
	// The repaint: what the screen showed, before any new output.
	h2.WaitOutput("t1", "got one")
	h2.Input("t1", "two\n")
	h2.WaitOutput("t1", "got two\r\n30 100\r\n")
	if out := h2.Now().Output("t1"); strings.Index(out, "first-run") > strings.Index(out, "got two") {
		t.Fatalf("the repaint came after live output: %q", out)
	}
	e, _ := entry(list(t, h2), "t1")
	if !e.Attached || e.Cols != 100 || e.Rows != 30 || e.OrphanInMs != nil {
		t.Fatalf("LIST after the re-adoption: %+v", e)
	}

	// Held by h2: another re-adopting host is refused, h2 keeps it.
	h3 := s.host("--readopt")
	h3.Open(open)
	if e := h3.WaitControl(proto.TypeError, "t1"); !strings.Contains(e.Fields["message"].(string), "terminal id already exists") {
		t.Fatalf("OPEN of a held id with --readopt: %s", e.Raw)
	}
	h2.Input("t1", "three\n")
	h2.WaitOutput("t1", "got three")
	for _, h := range []*hosttest.Host{plain, h3} {
		if len(h.Now().Controls("t1")) != 1 {
			t.Fatalf("a refused host got more than its ERROR: %+v", h.Now().Controls("t1"))
		}
	}
}

// A terminal whose program ended while detached is re-adopted as OPENED,
// its last screen, then its EXIT.
func TestReadoptExitedTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	release := filepath.Join(t.TempDir(), "release")
	open := proto.Open{TerminalID: "t2", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		"echo ready; until [ -e '" + release + "' ]; do sleep 0.01; done; echo last-words; exit 7"}}
	h1 := s.host("--readopt")
	h1.Open(open)
	pid := openedPIDOf(t, h1, "t2")
	h1.WaitOutput("t2", "ready\r\n")
	killHost(h1)
	h2 := s.host()
	waitDetached(t, h2, "t2")
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	listUntil(t, h2, "the exit while detached", func(l proto.Listed) bool { e, _ := entry(l, "t2"); return e.Exited })

	h3 := s.host("--readopt")
	h3.Open(open)
	if op := h3.WaitControl(proto.TypeOpened, "t2"); int(op.Fields["pid"].(float64)) != pid {
		t.Fatalf("OPENED %s, want pid %d", op.Raw, pid)
	}
	if ex := h3.WaitControl(proto.TypeExit, "t2"); ex.Fields["exitCode"] != float64(7) {
		t.Fatalf("EXIT %s", ex.Raw)
	}
	if out := h3.Now().Output("t2"); !strings.Contains(out, "last-words") {
		t.Fatalf("no last screen before the EXIT: %q", out)
	}
	// Its EXIT delivered, the id is free: the next OPEN starts anew.
	h3.Open(open)
	if op := nthControl(h3, proto.TypeOpened, "t2", 2); int(op.Fields["pid"].(float64)) == pid || op.Fields["readopted"] != nil {
		t.Fatalf("second OPENED %s: want a new terminal", op.Raw)
	}
}

// openedPIDOf waits for OPENED of id and returns its pid.
func openedPIDOf(t *testing.T, h *hosttest.Host, id string) int {
	t.Helper()
	c := h.WaitControl(proto.TypeOpened, id)
	pid, ok := c.Fields["pid"].(float64)
	if !ok || pid <= 0 {
		t.Fatalf("OPENED without pid: %s", c.Raw)
	}
	return int(pid)
}

// killHost ends a host as SIGKILL does: its bridge is killed, and its
// ends of the bridge's pipes close.
func killHost(h *hosttest.Host) {
	h.Cmd.Process.Signal(syscall.SIGKILL)
	h.CloseStdin()
	h.CloseStdout()
}

// nthControl waits for the n-th control frame of type typ about id.
func nthControl(h *hosttest.Host, typ proto.Type, id string, n int) hosttest.Control {
	var c hosttest.Control
	h.MustUntil(fmt.Sprintf("%s number %d for %q", typ, n, id), func(s hosttest.Snapshot) bool {
		seen := 0
		for _, x := range s.Controls(id) {
			if x.Type == typ {
				if seen++; seen == n {
					c = x
					return true
				}
			}
		}
		return false
	})
	return c
}

// An OPEN of another program under a detached terminal's id replaces it:
// the old one is closed and forgotten, the new one starts under the id.
func TestReadoptReplacesAnotherProgram(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h1 := s.host("--readopt")
	h1.Open(proto.Open{TerminalID: "t3", Cols: 80, Rows: 24, Cmd: "cat"})
	old := openedPIDOf(t, h1, "t3")
	killHost(h1)
	h2 := s.host("--readopt")
	waitDetached(t, h2, "t3")
	h2.Open(proto.Open{TerminalID: "t3", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo new program; exit 3"}})
	op := h2.WaitControl(proto.TypeOpened, "t3")
	if int(op.Fields["pid"].(float64)) == old || op.Fields["readopted"] != nil {
		t.Fatalf("OPENED %s: want a new terminal, not pid %d", op.Raw, old)
	}
	if ex := h2.WaitControl(proto.TypeExit, "t3"); ex.Fields["exitCode"] != float64(3) {
		t.Fatalf("EXIT %s", ex.Raw)
	}
	if out := h2.Now().Output("t3"); out != "new program\r\n" {
		t.Fatalf("output %q: want only the new program's", out)
	}
	if !hosttest.WaitGone(old, hosttest.Timeout) {
		t.Fatalf("the replaced terminal's cat (pid %d) still runs", old)
	}
	if l := list(t, h2); len(l.Terminals) != 0 {
		t.Fatalf("LIST after the replacement: %+v", l)
	}
}

// The same command in another working directory is another program: the
// OPEN replaces the detached terminal rather than re-adopt it. Another
// environment is not (a host that sends its whole environment in OPEN,
// as node-pty's do, differs in it from one run to the next): re-adopted.
func TestReadoptComparesTheDirectory(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	open := func(dir, k string) (*hosttest.Host, proto.Opened) {
		h := s.host("--readopt")
		waitDetached(t, h, "t5")
		h.Open(proto.Open{TerminalID: "t5", Cols: 80, Rows: 24, Cmd: "cat", Cwd: &dir, Env: map[string]string{"K": k}})
		op := h.WaitControl(proto.TypeOpened, "t5")
		return h, proto.Opened{PID: int(op.Fields["pid"].(float64)), Readopted: op.Fields["readopted"] == true}
	}
	h := s.host("--readopt")
	h.Open(proto.Open{TerminalID: "t5", Cols: 80, Rows: 24, Cmd: "cat", Cwd: &dirA, Env: map[string]string{"K": "1"}})
	first := openedPIDOf(t, h, "t5")
	steps := []struct {
		dir, k   string
		readopts bool
	}{
		{dirA, "1", true},  // the same program: re-adopted
		{dirB, "1", false}, // elsewhere: replaced
		{dirB, "2", true},  // another environment: re-adopted
		{dirA, "2", false}, // back to the first directory: replaced
	}
	pid := first
	for i, st := range steps {
		killHost(h)
		var op proto.Opened
		h, op = open(st.dir, st.k)
		if op.Readopted != st.readopts || (op.PID == pid) != st.readopts {
			t.Fatalf("step %d (%s, K=%s): OPENED pid %d readopted %v; the terminal before was pid %d, want re-adopted %v", i, st.dir, st.k, op.PID, op.Readopted, pid, st.readopts)
		}
		if !st.readopts && !hosttest.WaitGone(pid, hosttest.Timeout) {
			t.Fatalf("step %d: the replaced terminal's cat (pid %d) still runs", i, pid)
		}
		pid = op.PID
	}
}

// What re-adoption compares crosses a live upgrade: after it, an OPEN of
// the same command in another directory still replaces the terminal, and
// one in the same directory re-adopts it.
func TestReadoptComparesAcrossAnUpgrade(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	dirA, dirB := t.TempDir(), t.TempDir()
	h := s.host("--readopt")
	for _, id := range []string{"same", "moved"} {
		h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "cat", Cwd: &dirA})
	}
	same, moved := openedPIDOf(t, h, "same"), openedPIDOf(t, h, "moved")
	killHost(h)
	if _, n := s.upgradeTo(copyBinary(t)); n != 2 {
		t.Fatalf("the upgrade handed over %d terminals, want 2", n)
	}
	h = s.host("--readopt")
	waitDetached(t, h, "same", "moved")
	h.Open(proto.Open{TerminalID: "same", Cols: 80, Rows: 24, Cmd: "cat", Cwd: &dirA})
	h.Open(proto.Open{TerminalID: "moved", Cols: 80, Rows: 24, Cmd: "cat", Cwd: &dirB})
	if op := h.WaitControl(proto.TypeOpened, "same"); int(op.Fields["pid"].(float64)) != same || op.Fields["readopted"] != true {
		t.Fatalf("the same program after the upgrade: OPENED %s, want pid %d re-adopted", op.Raw, same)
	}
	if op := h.WaitControl(proto.TypeOpened, "moved"); int(op.Fields["pid"].(float64)) == moved || op.Fields["readopted"] != nil {
		t.Fatalf("another directory after the upgrade: OPENED %s, want a new terminal, not pid %d", op.Raw, moved)
	}
}

// A bridge that copies (PTYPLEX_BRIDGE_COPY=1) asks for re-adoption with
// a HELLO of its own, whose answer does not reach the host.
func TestReadoptThroughACopyingBridge(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	copying := func() *hosttest.Host {
		cmd := exec.Command(sidecarBin, "--persist", s.name, "--readopt")
		cmd.Env = append(append([]string(nil), s.env...), bridgeCopyEnv)
		return hosttest.StartCmd(t, cmd)
	}
	open := proto.Open{TerminalID: "c1", Cols: 80, Rows: 24, Cmd: "cat"}
	h1 := copying()
	h1.Open(open)
	pid := openedPIDOf(t, h1, "c1")
	killHost(h1)
	h2 := copying()
	waitDetached(t, h2, "c1")
	h2.Open(open)
	if op := h2.WaitControl(proto.TypeOpened, "c1"); int(op.Fields["pid"].(float64)) != pid || op.Fields["readopted"] != true {
		t.Fatalf("OPENED %s, want pid %d re-adopted", op.Raw, pid)
	}
	for _, f := range h2.Now().Frames {
		if f.Type == proto.TypeHelloReply {
			t.Fatalf("the host got the bridge's HELLO answer: %s", f.Body)
		}
	}
}

// A re-adopting OPEN's size is applied as a RESIZE is, everywhere one
// reaches: the mode tracker (a tab stop the program sets past the old
// width is restored by a later SNAPSHOT where it was set, not at the old
// last column) and, under --journal-dir, the terminal's meta.json (a
// crash leaves it dead at the size it had, and REVIVE starts it there).
// The OPEN resized the PTY only: the SNAPSHOT put the stop at column 80
// and the dead terminal was listed 80x24.
func TestReadoptResizeReachesTheTrackerAndTheDisk(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	flags := []string{"--readopt", "--journal-dir", filepath.Join(t.TempDir(), "journals")}
	// Once a line comes: every tab stop cleared, one set at column 101,
	// then enough lines that a 32 KiB journal loses those bytes.
	open := proto.Open{TerminalID: "w", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		`stty -echo; echo ready; read x; printf '\033[3g\033[1;101H\033H\033[1;1H'; seq 1 20000; echo done-here; exec cat`}}
	h1 := s.host(flags...)
	h1.SendJSON(proto.TypeOpen, map[string]any{"terminalId": open.TerminalID, "cols": open.Cols, "rows": open.Rows,
		"cmd": open.Cmd, "args": open.Args, "journal": 32 << 10})
	h1.WaitOutput("w", "ready\r\n")
	killHost(h1)

	h2 := s.host(flags...)
	waitDetached(t, h2, "w")
	wide := open
	wide.Cols = 120
	h2.Open(wide)
	if op := h2.WaitControl(proto.TypeOpened, "w"); op.Fields["readopted"] != true {
		t.Fatalf("OPENED %s: want the terminal re-adopted", op.Raw)
	}
	h2.Input("w", "go\n")
	h2.WaitOutput("w", "done-here\r\n")

	h3 := s.host()
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "w", Offset: 0})
	if at := h3.WaitControl(proto.TypeAttached, "w"); at.Fields["lost"] == float64(0) {
		t.Fatalf("ATTACHED %s: the journal lost nothing, so no SNAPSHOT tests the tab stop", at.Raw)
	}
	data := h3.WaitControl(proto.TypeSnapshot, "w").Fields["data"].(string)
	if !strings.Contains(data, "\x1b[3g\x1b[1;101H\x1bH") || strings.Contains(data, "\x1b[1;80H\x1bH") {
		stops := data
		if i := strings.Index(data, "\x1b[3g"); i >= 0 {
			stops = data[i:min(len(data), i+40)]
		}
		t.Fatalf("the SNAPSHOT's tab stops: %q; want them cleared and only the one at column 101 set", stops)
	}

	killServer(t, s)
	h4 := s.host(flags...)
	if e, ok := entry(list(t, h4), "w"); !ok || !e.Dead || e.Cols != 120 || e.Rows != 24 {
		t.Fatalf("LIST after the crash: %+v, want w dead at 120x24", e)
	}
}

// A host that re-adopts a terminal with a wider OPEN has its emulator at
// that width from the start, and the repaint, rendered at the old width
// and clearing every tab stop before it sets the screen's, must give it
// the stops past the old last column too, as a resize to its width
// would: the program's terminal has them (it never changed its tab
// stops). Before, a tab from column 81 went to the last column, 100,
// not to 89.
func TestReadoptWiderHostKeepsItsTabStops(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	open := proto.Open{TerminalID: "tabs", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		`stty -echo; echo ready; read x; printf '%081d\tY\n' 0; exec cat`}}
	h1 := s.host("--readopt")
	h1.Open(open)
	h1.WaitOutput("tabs", "ready\r\n")
	killHost(h1)

	h2 := s.host("--readopt")
	waitDetached(t, h2, "tabs")
	wide := open
	wide.Cols = 100
	h2.Open(wide)
	if op := h2.WaitControl(proto.TypeOpened, "tabs"); op.Fields["readopted"] != true {
		t.Fatalf("OPENED %s: want the terminal re-adopted", op.Raw)
	}
	h2.Input("tabs", "go\n")
	h2.WaitOutput("tabs", "Y\r\n")
	// The host's emulator, at its OPEN's width, fed what it received.
	em := screen.New(100, 24, screen.Options{})
	em.Write([]byte(h2.Now().Output("tabs")))
	for n := 1; n <= 24; n++ {
		if line := em.Line(n, false); strings.Contains(line, "Y") {
			if col := strings.Index(line, "Y"); col != 88 {
				t.Fatalf("the tab after column 81 took the cursor to column %d (%q), want 89", col+1, line)
			}
			return
		}
	}
	t.Fatalf("no Y on the host's screen:\n%s", em.Text())
}
