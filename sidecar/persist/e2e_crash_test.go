//go:build unix

package persist_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testsize"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/screen"
)

// servingPID finds the pid in the server's "serving on" log lines.
var servingPID = regexp.MustCompile(`serving on .* \(pid (\d+)\)`)

// crashLostBound is what the flush policy of --journal-dir may lose of
// a terminal's output when the server is SIGKILLed (docs/persist.md): the
// bytes the kernel still held for the PTY, never read (at most its 64 KiB
// flip buffers and the 4 KiB line discipline buffer), and the one read in
// flight, not yet written (at most 64 KiB).
const crashLostBound = 64<<10 + 4<<10 + 64<<10

// floodBatch is how many lines the flood program writes between two
// marks of how far it is going.
const floodBatch = 100

// floodLine is line i of the flood the crash tests' programs write, as
// the terminal shows it (ONLCR).
func floodLine(i int) string { return fmt.Sprintf("%08d\r\n", i) }

// floodProgram writes floodLine(0), floodLine(1), ... until it is killed.
// Before each batch of lines it appends to file the number of lines it
// will have written after the batch: the file's last line bounds what it
// wrote, however it ended (the watchdog SIGKILLs it with the server).
func floodProgram(file string) []string {
	return []string{"-c", fmt.Sprintf(`i=0; while :; do echo $((i+%[1]d)) >> %[2]s; j=0; while [ $j -lt %[1]d ]; do printf '%%08d\n' $i; i=$((i+1)); j=$((j+1)); done; done`, floodBatch, file)}
}

// waitGone waits until pid is dead (a zombie at most).
func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
			if f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:])); len(f) > 0 && f[0] == "Z" {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still alive after %v", what, pid, hosttest.Timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// checkFlood fails unless got is the flood's bytes from offset start.
func checkFlood(t *testing.T, id string, start uint64, got []byte) {
	t.Helper()
	const ll = 10
	for k := 0; k < len(got); {
		off := start + uint64(k)
		line := floodLine(int(off / ll))
		i := int(off % ll)
		n := min(len(line)-i, len(got)-k)
		if string(got[k:k+n]) != line[i:i+n] {
			t.Fatalf("%s: recovered byte %d (offset %d) on: %q, want %q", id, k, off, got[k:k+n], line[i:i+n])
		}
		k += n
	}
}

// serverPID is the pid of the newest server in s's log.
func serverPID(t *testing.T, s *server) int {
	t.Helper()
	m := servingPID.FindAllStringSubmatch(s.log(), -1)
	if m == nil {
		t.Fatalf("no pid in the server's log:\n%s", s.log())
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n
}

// killServer SIGKILLs s's newest server and waits until it is dead (a
// zombie at most): until then a bridge could still connect to its socket.
func killServer(t *testing.T, s *server) {
	t.Helper()
	pid := serverPID(t, s)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitGone(t, pid, "the server SIGKILLed")
}

// crashRounds is how many times TestJournalDirSIGKILLMidFlood kills the
// server: 3 in make test, 20 in make soak (PTYPLEX_SOAK=1).
func crashRounds() int { return testsize.Pick(3, 20) }

// The server is SIGKILLed in the middle of floods in three terminals,
// again and again. After each restart on the same --journal-dir, every
// terminal is listed dead, an ATTACH from offset 0 replays exactly the
// flood from the journal's start (ATTACHED's lost says how much fell out
// of the ring) and ends with an EXIT marked dead, and the bytes the
// program wrote but nobody can replay are within crashLostBound.
func TestJournalDirSIGKILLMidFlood(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	marks := t.TempDir()
	const journal = 256 << 10
	flags := []string{"--journal-dir", jdir, "--journal", fmt.Sprint(journal)}
	ids := []string{"f1", "f2", "f3"}
	rounds := crashRounds()
	written := map[string]int{} // the most lines each program can have written in the previous round
	worst, counted := 0, uint64(0)
	for round := 0; round <= rounds; round++ {
		h := s.host(flags...)
		if round > 0 {
			l := list(t, h)
			for _, id := range ids {
				e, ok := entry(l, id)
				if !ok || !e.Dead || !e.Exited || e.Attached || e.Produced < e.Start {
					t.Fatalf("round %d: %s after the crash: %+v (want dead)", round, id, e)
				}
				before := len(h.Now().Frames)
				h.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: id, Offset: e.Start})
				sn := h.MustUntil(id+"'s dead EXIT", func(sn hosttest.Snapshot) bool {
					_, ok := controlAfter(sn, before, proto.TypeExit, id)
					return ok
				})
				at, _ := controlAfter(sn, before, proto.TypeAttached, id)
				ex, _ := controlAfter(sn, before, proto.TypeExit, id)
				if at["lost"] != float64(0) || ex["dead"] != true || ex["exitCode"] != nil {
					t.Fatalf("round %d: %s: ATTACHED %v, EXIT %v (want lost 0, dead, exitCode null)", round, id, at, ex)
				}
				got := sn.Outputs[id]
				if uint64(len(got)) != e.Produced-e.Start {
					t.Fatalf("round %d: %s: replayed %d bytes, LIST said [%d, %d)", round, id, len(got), e.Start, e.Produced)
				}
				checkFlood(t, id, e.Start, got)
				// written bounds what the program wrote from above, by
				// up to a batch.
				lost := written[id]*10 - int(e.Produced)
				if lost < 0 || lost > crashLostBound+floodBatch*10 {
					t.Fatalf("round %d: %s: the program wrote at most %d lines (%d bytes), %d recovered: %d lost, bound %d",
						round, id, written[id], written[id]*10, e.Produced, lost, crashLostBound+floodBatch*10)
				}
				worst = max(worst, lost)
				// What the server read and could not write is counted,
				// and is some of what the program wrote.
				if int(e.Produced+e.CrashLost) > written[id]*10 || at["crashLost"] != float64(e.CrashLost) && (e.CrashLost != 0 || at["crashLost"] != nil) {
					t.Fatalf("round %d: %s: crashLost %d (ATTACHED %v), %d recovered, the program wrote at most %d bytes",
						round, id, e.CrashLost, at["crashLost"], e.Produced, written[id]*10)
				}
				counted = max(counted, e.CrashLost)
			}
		}
		if round == rounds {
			break
		}
		for _, id := range ids {
			mark := filepath.Join(marks, fmt.Sprintf("%s.%d", id, round))
			// The dead terminal of the same id gives its id to the OPEN.
			h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: floodProgram(mark)})
			h.WaitControl(proto.TypeOpened, id)
			h.SendJSON(proto.TypeDetach, proto.Close{TerminalID: id})
		}
		l := listUntil(t, h, "every flood past three journals", func(l proto.Listed) bool {
			for _, id := range ids {
				if e, ok := entry(l, id); !ok || e.Dead || e.Produced < 3*journal {
					return false
				}
			}
			return true
		})
		killServer(t, s)
		for _, id := range ids {
			// The watchdog kills the program once the server is dead;
			// then its last mark bounds what it wrote.
			e, _ := entry(l, id)
			waitGone(t, e.PID, id+"'s program after its server's death")
			mark := filepath.Join(marks, fmt.Sprintf("%s.%d", id, round))
			b, err := os.ReadFile(mark)
			lines := strings.Fields(string(b))
			if err != nil || len(lines) == 0 {
				t.Fatalf("%s: %v %q", mark, err, b)
			}
			if written[id], err = strconv.Atoi(lines[len(lines)-1]); err != nil {
				t.Fatalf("%s: %q", mark, b)
			}
		}
		h.WaitExit(hosttest.Timeout)
	}
	t.Logf("%d crashes: the most any terminal can have lost was %d bytes (bound %d, and a batch of %d lines the marks leave open); the most crashLost counted %d", rounds, worst, crashLostBound, floodBatch, counted)
}

// REVIVE starts a dead shell again, with its env and cwd, and a dead
// program with its args and cwd, each under its id, the old screen drawn
// first; a REVIVE of a terminal that is not dead is refused.
func TestJournalDirRevive(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	cwd := t.TempDir()
	h := s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/sh", Cwd: &cwd, Env: map[string]string{"MARK": "env-ok", "PS1": "$ "}})
	h.WaitControl(proto.TypeOpened, "sh")
	h.Input("sh", "echo before-$MARK\n")
	h.WaitOutput("sh", "before-env-ok\r\n")
	// Wide enough that the old screen does not wrap its line, however
	// long the temporary directory's path.
	h.Open(proto.Open{TerminalID: "prog", Cols: 400, Rows: 24, Cmd: "/bin/sh", Cwd: &cwd,
		Args: []string{"-c", `echo "run in $(pwd) with [$1] [$2]"; exec cat`, "zero", "one arg", "two"}})
	h.WaitOutput("prog", "with [one arg] [two]\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host("--journal-dir", jdir)
	l := list(t, h2)
	for _, id := range []string{"sh", "prog"} {
		if e, ok := entry(l, id); !ok || !e.Dead {
			t.Fatalf("%s after the crash: %+v", id, l)
		}
	}
	if out, err := s.run("--list"); err != nil || !regexp.MustCompile(`(?m)^sh .* dead, exited `).MatchString(out) {
		t.Fatalf("--list after the crash: %v\n%s", err, out)
	}
	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "sh"})
	h2.WaitControl(proto.TypeOpened, "sh")
	h2.WaitOutput("sh", "before-env-ok") // the old screen, first
	h2.Input("sh", "echo after-$MARK; pwd\n")
	h2.WaitOutput("sh", "after-env-ok\r\n"+cwd+"\r\n")

	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "prog"})
	h2.WaitControl(proto.TypeOpened, "prog")
	want := "run in " + cwd + " with [one arg] [two]"
	sn := h2.MustUntil("the program run again after its old screen", func(sn hosttest.Snapshot) bool {
		return strings.Count(sn.Output("prog"), want) == 2
	})
	out := sn.Output("prog")
	if i := strings.Index(out, want+"\r\n"); i < 0 || i+len(want) > strings.LastIndex(out, want) {
		t.Fatalf("revived program's output %q: want the old screen, then the new run", out)
	}
	h2.Input("prog", "typed\n")
	h2.WaitOutput("prog", "typed\r\ntyped\r\n") // echo, and cat

	l = list(t, h2)
	for _, id := range []string{"sh", "prog"} {
		if e, ok := entry(l, id); !ok || e.Dead || e.Exited || !e.Attached || e.PID <= 0 {
			t.Fatalf("%s after REVIVE: %+v", id, e)
		}
	}
	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "sh"})
	if e := h2.WaitControl(proto.TypeError, "sh"); !strings.Contains(e.Raw, `no dead terminal \"sh\"`) {
		t.Fatalf("REVIVE of a live terminal: %s", e.Raw)
	}
	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "nope"})
	if e := h2.WaitControl(proto.TypeError, "nope"); !strings.Contains(e.Raw, "REVIVE refused") {
		t.Fatalf("REVIVE of no terminal: %s", e.Raw)
	}
}

// --keep-exited drops dead terminals as it drops exited ones, and their
// files with them.
func TestJournalDirKeepExitedDropsDead(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	h := s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "d", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo kept; exec sleep 1000"}})
	h.WaitOutput("d", "kept\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)
	stores := func() []os.DirEntry {
		ents, err := os.ReadDir(filepath.Join(jdir, s.name))
		if err != nil {
			t.Fatal(err)
		}
		return ents
	}
	if n := len(stores()); n != 1 {
		t.Fatalf("%d terminal directories after the crash, want 1", n)
	}
	// The keep clock starts as the server recovers the terminal, before
	// a host can list it: the log says it was recovered, and dropped.
	h2 := s.host("--journal-dir", jdir, "--keep-exited", "300ms")
	listUntil(t, h2, "the dead terminal dropped after --keep-exited", func(l proto.Listed) bool { _, ok := entry(l, "d"); return !ok })
	for _, want := range []string{"1 dead terminals recovered", `terminal "d": exited and unread for 300ms: dropped`} {
		if !strings.Contains(s.log(), want) {
			t.Fatalf("the server's log does not say %q:\n%s", want, s.log())
		}
	}
	// The files go right after the terminal leaves the list.
	deadline := time.Now().Add(hosttest.Timeout)
	for n := len(stores()); n != 0; n = len(stores()) {
		if time.Now().After(deadline) {
			t.Fatalf("%d terminal directories left %v after the dead terminal was dropped", n, hosttest.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A journal directory that others may enter, or that is a symlink, is
// refused: the server does not start, and says why in its log.
func TestJournalDirRefusedIfNotPrivate(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	private := filepath.Join(base, "private")
	os.Mkdir(private, 0o700)
	os.Symlink(private, link)
	for dir, want := range map[string]string{open: "lets others in", link: "a symlink is refused"} {
		s := newServer(t)
		h := s.host("--journal-dir", dir)
		if code, err := h.WaitExit(hosttest.Timeout); err != nil || code == 0 {
			t.Errorf("--journal-dir %s: the bridge ended with %d, %v (want a failure)", dir, code, err)
		}
		if !strings.Contains(s.log(), want) {
			t.Errorf("--journal-dir %s: the server's log does not say %q:\n%s", dir, want, s.log())
		}
	}
}

// storeOf returns the directory of the files of terminal id in jdir.
func storeOf(t *testing.T, jdir, id string) string {
	t.Helper()
	metas, _ := filepath.Glob(filepath.Join(jdir, "*", "*", "meta.json"))
	for _, m := range metas {
		if b, err := os.ReadFile(m); err == nil && strings.Contains(string(b), `"terminalId":"`+id+`"`) {
			return filepath.Dir(m)
		}
	}
	t.Fatalf("no files of terminal %s in %s", id, jdir)
	return ""
}

// dirBytes is the size of the segment files under dir.
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".seg") {
			if fi, err := e.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// A record torn by the crash is cut off and the rest served; then, over
// --journal-dir-max, the dead terminal's files go first (and it leaves
// LIST), and a live flood keeps the directory within the bound.
func TestJournalDirTornRecordAndBound(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	const max = 300 << 10
	flags := []string{"--journal-dir", jdir, "--journal", fmt.Sprint(256 << 10), "--journal-dir-max", fmt.Sprint(max)}
	h := s.host(flags...)
	for _, id := range []string{"torn", "idle"} {
		h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo " + id + "-marker; exec sleep 1000"}})
		h.WaitOutput(id, id+"-marker\r\n")
	}
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)
	segs, _ := filepath.Glob(filepath.Join(storeOf(t, jdir, "torn"), "*.seg"))
	if len(segs) != 1 {
		t.Fatalf("segments %v", segs)
	}
	f, err := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte{200, 0, 0, 0, 9, 9, 9, 9, 'x', 'y'}) // 200 bytes announced, 2 there
	f.Close()

	h2 := s.host(flags...)
	l := list(t, h2)
	e, ok := entry(l, "torn")
	if !ok || !e.Dead || e.Produced != uint64(len("torn-marker\r\n")) {
		t.Fatalf("torn terminal: %+v", l)
	}
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "torn"})
	h2.WaitControl(proto.TypeExit, "torn")
	if got := h2.Now().Output("torn"); got != "torn-marker\r\n" {
		t.Fatalf("torn terminal replayed %q", got)
	}
	if !strings.Contains(s.log(), `terminal "torn": 10 bytes of torn or corrupt records cut off`) {
		t.Fatalf("the server's log does not report the cut:\n%s", s.log())
	}

	h2.Open(proto.Open{TerminalID: "flood", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "exec yes"}})
	h2.WaitControl(proto.TypeOpened, "flood")
	h2.SendJSON(proto.TypeDetach, proto.Close{TerminalID: "flood"})
	listUntil(t, h2, "the dead terminal dropped for the bound", func(l proto.Listed) bool {
		e, ok := entry(l, "flood")
		_, idle := entry(l, "idle")
		return ok && e.Produced > 2*max && !idle
	})
	// A write past the bound starts a pass that brings the directory
	// back within it; while the flood goes on, the files are seen at
	// most a record (a read) past the bound between passes.
	deadline := time.Now().Add(hosttest.Timeout)
	for n := dirBytes(filepath.Join(jdir, s.name)); n > max+64<<10+8; n = dirBytes(filepath.Join(jdir, s.name)) {
		if time.Now().After(deadline) {
			t.Fatalf("the directory holds %d bytes, bound %d", n, max)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(storeOf(t, jdir, "flood")); err != nil {
		t.Fatal(err)
	}
}

// The persistent server has a watchdog: once the server is SIGKILLed, a
// background job of a terminal that ignores the hangup is killed too.
func TestPersistWatchdogKillsAfterServerDeath(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "w", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		`trap '' HUP; sleep 1000 & echo "bg=$!"; exec sleep 1000`}})
	sn := h.MustUntil("the background job's pid", func(sn hosttest.Snapshot) bool { return strings.Contains(sn.Output("w"), "\r\n") })
	var bg int
	if _, err := fmt.Sscanf(sn.Output("w"), "bg=%d", &bg); err != nil || bg <= 0 {
		t.Fatalf("output %q", sn.Output("w"))
	}
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	killServer(t, s)
	waitGone(t, bg, "a background job that ignores SIGHUP, after its server's death")
	deadline := time.Now().Add(hosttest.Timeout)
	for !strings.Contains(s.log(), "ended without shutting down") {
		if time.Now().After(deadline) {
			t.Fatalf("the watchdog did not say why it killed:\n%s", s.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A live upgrade keeps writing each terminal's files where the previous
// image left off (and keeps a dead terminal dead): after a crash of the
// new image, the bytes from before and after the upgrade are recovered
// as one stream, and the watchdog the new image started is on duty.
func TestJournalDirAcrossUpgrade(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	h := s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "old", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo old-marker; exec sleep 1000"}})
	h.WaitOutput("old", "old-marker\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h = s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", `stty -echo; trap '' HUP; sleep 1000 & echo "bg=$!"; exec cat`}})
	sn := h.WaitOutput("c", "\r\n")
	var bg int
	if _, err := fmt.Sscanf(sn.Output("c"), "bg=%d", &bg); err != nil {
		t.Fatalf("output %q", sn.Output("c"))
	}
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	h.Input("c", "before\n")
	h.WaitOutput("c", "before\r\n")
	if _, n := s.upgradeTo(copyBinary(t)); n != 2 {
		t.Fatalf("upgrade handed over %d terminals, want 2", n)
	}
	h.WaitExit(hosttest.Timeout)
	h2 := s.host("--journal-dir", jdir)
	if e, ok := entry(list(t, h2), "old"); !ok || !e.Dead {
		t.Fatalf("the dead terminal after the upgrade: %+v", e)
	}
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c", Offset: uint64(len(h.Now().Output("c")))})
	h2.WaitControl(proto.TypeAttached, "c")
	h2.Input("c", "after\n")
	h2.WaitOutput("c", "after\r\n")
	killServer(t, s)
	waitGone(t, bg, "the background job, once the upgraded server died")
	h2.WaitExit(hosttest.Timeout)

	h3 := s.host("--journal-dir", jdir)
	e, ok := entry(list(t, h3), "c")
	if !ok || !e.Dead || e.Start != 0 {
		t.Fatalf("terminal c after the crash: %+v", e)
	}
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c"})
	h3.WaitControl(proto.TypeExit, "c")
	if got, want := h3.Now().Output("c"), fmt.Sprintf("bg=%d\r\nbefore\r\nafter\r\n", bg); got != want {
		t.Fatalf("recovered %q, want %q", got, want)
	}
}

// An orderly stop (STOP, or SIGTERM as at a shutdown) leaves the files
// of the terminals it killed, with their exits, even for a terminal a
// host held (whose EXIT it was sent): after it, they are dead and can be
// revived.
func TestJournalDirKeptOverStop(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	h := s.host("--journal-dir", jdir)
	h.Open(proto.Open{TerminalID: "held", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo held-marker; exec sleep 1000"}})
	h.WaitOutput("held", "held-marker\r\n")
	if out, err := s.run("--stop"); err != nil {
		t.Fatalf("--stop: %v\n%s", err, out)
	}
	h.WaitExit(hosttest.Timeout)
	h2 := s.host("--journal-dir", jdir)
	e, ok := entry(list(t, h2), "held")
	if !ok || !e.Dead || e.Signal != "SIGKILL" || e.Produced != uint64(len("held-marker\r\n")) {
		t.Fatalf("after the stop: %+v", e)
	}
	h2.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "held"})
	h2.WaitOutput("held", "held-marker\r\n")
	h2.MustUntil("the program run again", func(sn hosttest.Snapshot) bool {
		return strings.Count(sn.Output("held"), "held-marker") == 2
	})
}

// A server that is going away as a bridge dials it (SIGKILLed, crashed,
// stopping) can accept the connection, or have it queued, and close it
// unread. The bridge dials again, which finds it gone and starts a new
// one, and the host never knows: here a stand-in listens at the
// server's socket, accepts one connection and closes it (and its
// listener) without a word. Both bridges: the one that hands the host's
// pipes over and the one that copies, which exchanges HELLO on its own.
func TestBridgeDialsAgainWhenTheServerClosesFirst(t *testing.T) {
	t.Parallel()
	for _, copying := range []string{"", "1"} {
		t.Run("copying="+copying, func(t *testing.T) {
			t.Parallel()
			s := newServer(t)
			dir := filepath.Join(s.dir, "sidecar")
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("unix", filepath.Join(dir, s.name+".sock"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
			accepted := make(chan error, 1)
			go func() {
				c, err := ln.Accept()
				ln.Close() // and the socket's file: no second dial reaches it
				if err == nil {
					c.Close()
				}
				accepted <- err
			}()
			cmd := exec.Command(sidecarBin, "--persist", s.name)
			cmd.Env = append(s.env, "PTYPLEX_BRIDGE_COPY="+copying)
			h := hosttest.StartCmd(t, cmd)
			h.Open(proto.Open{TerminalID: "t", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo served"}})
			h.WaitOutput("t", "served\r\n")
			h.WaitControl(proto.TypeExit, "t")
			select {
			case err := <-accepted:
				if err != nil {
					t.Fatalf("the stand-in's accept: %v", err)
				}
			default:
				t.Fatal("the bridge reached a server without dialling the stand-in first")
			}
		})
	}
}

// A bridge started while a server of its name is going away (its
// listener closed, its lock held until its process ends: right after
// --stop returned, or a SIGTERM) starts the server again once that one is
// gone. Before, the server it started found the lock taken and left, and
// the bridge waited out its 10 s for a server to listen and failed
// ("did not start listening"): --stop, then a host at once, failed so
// about one time in ten. The test holds the lock as such a server does.
func TestBridgeStartsTheServerAgainOnceTheOldOneIsGone(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	dir := filepath.Join(s.dir, "sidecar")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, s.name+".lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	h := s.host()
	deadline := time.Now().Add(hosttest.Timeout)
	for !strings.Contains(s.log(), "holds its lock") {
		if time.Now().After(deadline) {
			t.Fatalf("no server the bridge started found the lock taken within %v", hosttest.Timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
	lock.Close() // the old server's process ends
	h.Open(proto.Open{TerminalID: "t", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo served"}})
	h.WaitOutput("t", "served\r\n")
	h.WaitControl(proto.TypeExit, "t")
}

// A host written for the plain sidecar that reopens its ids after the
// server died (--readopt, --journal-dir) gets its program started again,
// as REVIVE starts it, its old screen first: not the dead terminal, whose
// pid is long gone and whose EXIT would follow at once.
func TestReadoptRevivesADeadTerminal(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	flags := []string{"--readopt", "--journal-dir", filepath.Join(t.TempDir(), "journals")}
	open := proto.Open{TerminalID: "sh", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo started-here; exec cat"}}
	h := s.host(flags...)
	h.Open(open)
	old := openedPIDOf(t, h, "sh")
	h.WaitOutput("sh", "started-here\r\n")
	h.Input("sh", "typed before\n")
	h.WaitOutput("sh", "typed before\r\ntyped before\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host(flags...)
	h2.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "sh", "cols": 80, "rows": 24, "cmd": open.Cmd, "args": open.Args,
		"orphanMs": 600000})
	op := h2.WaitControl(proto.TypeOpened, "sh")
	if pid := int(op.Fields["pid"].(float64)); pid == old || pid <= 0 {
		t.Fatalf("OPENED %s: want the program started again, not pid %d", op.Raw, old)
	}
	// The old screen, then the program's own start.
	sn := h2.MustUntil("the old screen and the new start", func(sn hosttest.Snapshot) bool {
		return strings.Count(sn.Output("sh"), "started-here") == 2
	})
	if out := sn.Output("sh"); !strings.Contains(out[:strings.LastIndex(out, "started-here")], "typed before") {
		t.Fatalf("the old screen did not come first: %q", out)
	}
	h2.Input("sh", "typed after\n")
	h2.WaitOutput("sh", "typed after\r\ntyped after\r\n")
	if e, ok := entry(list(t, h2), "sh"); !ok || e.Dead || e.Exited || !e.Attached {
		t.Fatalf("LIST after the OPEN: %+v", e)
	}
	if n := len(h2.Now().Controls("sh")); n != 1 {
		t.Fatalf("controls for sh: %+v, want only OPENED", h2.Now().Controls("sh"))
	}
	// The OPEN's orphan bound is the new terminal's, as a re-adopting
	// OPEN's is (the server's default is 3 h).
	killHost(h2)
	h3 := s.host()
	l := waitDetached(t, h3, "sh")
	if e, ok := entry(l, "sh"); !ok || e.OrphanInMs == nil || *e.OrphanInMs > 600000 || *e.OrphanInMs <= 0 {
		t.Fatalf("LIST once its host is gone: %+v, want the OPEN's orphan bound of 10 min", e)
	}
}

// A re-adopting OPEN that revives a dead terminal at another width (the
// host's window changed while the server was down) gets the old screen
// drawn for its emulator, at the OPEN's width: the repaint clears every
// tab stop and sets the old screen's, and must set those past the old
// width too, which the new program's terminal has. Before, a tab from
// column 81 of 100 went to column 100, not 89.
func TestReadoptRevivedWiderKeepsTabStops(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	flags := []string{"--readopt", "--journal-dir", filepath.Join(t.TempDir(), "journals")}
	open := proto.Open{TerminalID: "tabs", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		`stty -echo; echo ready; read x; printf '%081d\tY\n' 0; exec cat`}}
	h := s.host(flags...)
	h.Open(open)
	h.WaitOutput("tabs", "ready\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host(flags...)
	wide := open
	wide.Cols = 100
	h2.Open(wide)
	h2.WaitControl(proto.TypeOpened, "tabs")
	h2.MustUntil("the old screen and the new start", func(sn hosttest.Snapshot) bool {
		return strings.Count(sn.Output("tabs"), "ready") == 2
	})
	h2.Input("tabs", "go\n")
	h2.WaitOutput("tabs", "Y\r\n")
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

// attachDead attaches dead terminal id from from and reads it up to its
// dead EXIT; it returns the ATTACHED and the bytes replayed.
func attachDead(t *testing.T, h *hosttest.Host, id string, from uint64) (map[string]any, string) {
	t.Helper()
	now := h.Now()
	before, had := len(now.Frames), len(now.Outputs[id])
	h.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: id, Offset: from})
	sn := h.MustUntil(id+"'s dead EXIT", func(sn hosttest.Snapshot) bool {
		ex, ok := controlAfter(sn, before, proto.TypeExit, id)
		return ok && ex["dead"] == true
	})
	at, _ := controlAfter(sn, before, proto.TypeAttached, id)
	return at, sn.Output(id)[had:]
}

// waitNoDir waits until dir is gone.
func waitNoDir(t *testing.T, dir, what string) {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for pathExists(dir) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %s still there after %v", what, dir, hosttest.Timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A dead terminal's files stay when a host reads it (its EXIT reached
// the host): a second crash finds it dead again, whole, to be attached
// and revived. REVIVE's terminal has files of its own, the old screen
// first, and the dead one's go; a terminal that ends while the server
// runs loses its files once its EXIT reached a host.
func TestJournalDirDeadFilesOutliveARead(t *testing.T) {
	t.Parallel()
	s := newServer(t)
	jdir := filepath.Join(t.TempDir(), "journals")
	flags := []string{"--journal-dir", jdir}
	h := s.host(flags...)
	h.Open(proto.Open{TerminalID: "d", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo dead-output-1; exec sleep 1000"}})
	h.WaitOutput("d", "dead-output-1\r\n")
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host(flags...)
	e, ok := entry(list(t, h2), "d")
	if !ok || !e.Dead || e.Produced == 0 {
		t.Fatalf("d after the first crash: %+v", e)
	}
	_, got := attachDead(t, h2, "d", e.Start)
	if !strings.Contains(got, "dead-output-1") {
		t.Fatalf("d replayed %q", got)
	}
	store := storeOf(t, jdir, "d") // still there once the host has its EXIT
	if _, ok := entry(list(t, h2), "d"); ok {
		t.Fatalf("d is listed after a host read its EXIT")
	}
	// A terminal that ends while the server runs: its files go once a
	// host has its EXIT.
	h2.Open(proto.Open{TerminalID: "n", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo ready; read x; echo normal-end"}})
	h2.WaitOutput("n", "ready\r\n")
	nstore := storeOf(t, jdir, "n")
	h2.Input("n", "\n")
	h2.WaitControl(proto.TypeExit, "n")
	waitNoDir(t, nstore, "the files of a terminal whose EXIT reached its host")
	if !pathExists(store) {
		t.Fatalf("d's files %s went", store)
	}
	killServer(t, s)
	h2.WaitExit(hosttest.Timeout)

	// The second crash: d is dead, as it was.
	h3 := s.host(flags...)
	e2, ok := entry(list(t, h3), "d")
	if !ok || !e2.Dead || e2.Produced != e.Produced || e2.Start != e.Start {
		t.Fatalf("d after a host read it and the server crashed again: %+v (want dead, [%d, %d))", e2, e.Start, e.Produced)
	}
	if _, again := attachDead(t, h3, "d", e.Start); again != got {
		t.Fatalf("d replayed %q after the second crash, %q after the first", again, got)
	}
	// Revived (by the host that read it): the new terminal's files
	// replace the dead one's.
	h3.SendJSON(proto.TypeRevive, proto.Revive{TerminalID: "d"})
	h3.WaitControl(proto.TypeOpened, "d")
	h3.WaitOutput("d", "dead-output-1") // the old screen, the program's output after it
	waitNoDir(t, store, "the dead terminal's files after REVIVE")
	revived := storeOf(t, jdir, "d")
	killServer(t, s)
	h3.WaitExit(hosttest.Timeout)

	h4 := s.host(flags...)
	if e, ok := entry(list(t, h4), "d"); !ok || !e.Dead {
		t.Fatalf("the revived d after a crash: %+v", e)
	}
	if _, got := attachDead(t, h4, "d", 0); !strings.Contains(got, "dead-output-1") || storeOf(t, jdir, "d") != revived {
		t.Fatalf("the revived d's files (%s) replayed %q: want the old screen first", revived, got)
	}
}

func pathExists(p string) bool { _, err := os.Lstat(p); return err == nil }
