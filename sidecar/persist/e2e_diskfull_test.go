//go:build linux

package persist_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"golang.org/x/sys/unix"
)

// smallDisk mounts a tmpfs of size bytes on a new directory and returns
// it; the test is skipped where mounting needs a privilege it lacks.
func smallDisk(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	err := unix.Mount("ptyplex-test", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, fmt.Sprintf("size=%d,mode=0700", size))
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES) {
		t.Skipf("a full disk needs a tmpfs of its own, and mounting one is not allowed here: %v", err)
	}
	if err != nil {
		t.Fatalf("mount a %d-byte tmpfs: %v", size, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// TestJournalDirFullDisk: --journal-dir on a disk that fills up, and then
// has room again.
//   - Full: the flooding terminal's journal on disk stops (the server
//     says so on its log, in LIST and in --list), and nothing else does:
//     the flood reaches its host byte for byte, a terminal opened once
//     the disk is full opens and runs, another terminal echoes.
//   - Room again: a stopped journal, or one that could not be made, is
//     written anew, the whole journal, as its terminal goes on (LIST's
//     error clears), so that a crash of the server after that loses
//     nothing of it.
func TestJournalDirFullDisk(t *testing.T) {
	t.Parallel()
	const size = 2 << 20
	disk := smallDisk(t, size)
	filler := filepath.Join(disk, "filler")
	if err := os.WriteFile(filler, make([]byte, size-112<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	jdir := filepath.Join(disk, "journals")
	flags := []string{"--journal-dir", jdir, "--journal", fmt.Sprint(1 << 20)}
	h := s.host(flags...)

	h.Open(proto.Open{TerminalID: "other", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	h.WaitControl(proto.TypeOpened, "other")
	if e, ok := entry(list(t, h), "other"); !ok || e.JournalDirError != "" {
		t.Fatalf("before the disk filled: %+v", e)
	}
	const lines = 20000 // about 240 KB: the disk fills part way
	h.Open(proto.Open{TerminalID: "flood", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", fmt.Sprintf(`i=0; while [ $i -lt %d ]; do echo "line-$i"; i=$((i+1)); done; echo flood-done; exec cat`, lines)}})
	h.WaitOutput("flood", "flood-done\r\n")
	var want strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&want, "line-%d\r\n", i)
	}
	want.WriteString("flood-done\r\n")
	if got := h.Now().Output("flood"); got != want.String() {
		t.Fatalf("the flood reached its host as %d bytes, want the %d it wrote", len(got), want.Len())
	}
	if log := s.log(); !strings.Contains(log, `terminal "flood": journal on disk`) || !strings.Contains(log, "no space left on device") {
		t.Fatalf("the server's log does not say the disk is full:\n%s", log)
	}

	h.Open(proto.Open{TerminalID: "late", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo late-ok; exec cat"}})
	h.WaitOutput("late", "late-ok\r\n")
	h.Input("other", "still here\n")
	h.WaitOutput("other", "still here\r\nstill here\r\n")
	h.Input("flood", "typed\n")
	h.WaitOutput("flood", "typed\r\ntyped\r\n")
	// Each says, in LIST and --list, that its output no longer reaches
	// the directory.
	l := list(t, h)
	for _, id := range []string{"other", "flood", "late"} {
		if e, ok := entry(l, id); !ok || e.Exited || !e.Attached || !strings.Contains(e.JournalDirError, "no space left on device") {
			t.Fatalf("%s after the disk filled: %+v", id, e)
		}
	}
	if out, err := s.run("--list"); err != nil || strings.Count(out, "not on disk") != 3 {
		t.Fatalf("--list after the disk filled: %v\n%s", err, out)
	}

	// Room again: each terminal writes its journal anew with its next
	// output, "late" too, whose journal on disk was never made.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	ids := []string{"other", "flood", "late"}
	n := 0
	listUntil(t, h, "every journal on disk again", func(l proto.Listed) bool {
		n++
		healed := 0
		for _, id := range ids {
			h.Input(id, fmt.Sprintf("again-%d\n", n))
			if e, ok := entry(l, id); ok && e.JournalDirError == "" {
				healed++
			}
		}
		return healed == len(ids)
	})
	for _, id := range ids {
		if !strings.Contains(s.log(), `terminal "`+id+`": journal on disk again`) {
			t.Fatalf("the server's log does not say %s's journal is on disk again:\n%s", id, s.log())
		}
	}
	// Then a crash loses none of it.
	for _, id := range ids {
		h.Input(id, "last\n")
	}
	// Each line's echo, and cat's copy after the lines typed before it.
	sn := h.MustUntil("the last lines, echoed and copied", func(sn hosttest.Snapshot) bool {
		for _, id := range ids {
			if out := sn.Output(id); strings.Count(out, "last\r\n") != 2 || !strings.HasSuffix(out, "last\r\n") {
				return false
			}
		}
		return true
	})
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)
	h2 := s.host(flags...)
	l = list(t, h2)
	for _, id := range ids {
		seen := sn.Output(id)
		e, ok := entry(l, id)
		if !ok || !e.Dead || e.Produced != uint64(len(seen)) || e.Start != 0 {
			t.Fatalf("%s after the crash: %+v (the host saw %d bytes)", id, e, len(seen))
		}
		h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: id})
		h2.WaitControl(proto.TypeExit, id)
		if got := h2.Now().Output(id); got != seen {
			t.Fatalf("%s: recovered %q, not the %d bytes the host saw", id, got[:min(len(got), 200)], len(seen))
		}
	}
}

// fill writes to path until the disk is full.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestJournalDirFullDiskAcrossUpgrade: a terminal opened while the disk
// is full has no journal on disk; a live upgrade hands that over with
// the terminal, so that the new image still says so (LIST) and makes
// the journal once the disk has room.
func TestJournalDirFullDiskAcrossUpgrade(t *testing.T) {
	t.Parallel()
	disk := smallDisk(t, 2<<20)
	s := newUpgradeServer(t)
	jdir := filepath.Join(disk, "journals")
	flags := []string{"--journal-dir", jdir}
	h := s.host(flags...)
	filler := filepath.Join(disk, "filler")
	fill(t, filler)
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo before; exec cat"}})
	h.WaitOutput("c", "before\r\n")
	if e, ok := entry(list(t, h), "c"); !ok || !strings.Contains(e.JournalDirError, "no space left on device") {
		t.Fatalf("opened on a full disk: %+v", e)
	}
	if _, n := s.upgradeTo(copyBinary(t)); n != 1 {
		t.Fatalf("upgrade handed over %d terminals, want 1", n)
	}
	h.WaitExit(hosttest.Timeout)
	h2 := s.host(flags...)
	if e, ok := entry(list(t, h2), "c"); !ok || !strings.Contains(e.JournalDirError, "no space left on device") {
		t.Fatalf("after the upgrade: %+v", e)
	}
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c", Offset: uint64(len(h.Now().Output("c")))})
	h2.WaitControl(proto.TypeAttached, "c")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	n := 0
	listUntil(t, h2, "the journal on disk made at last", func(l proto.Listed) bool {
		n++
		h2.Input("c", fmt.Sprintf("line-%d\n", n))
		e, ok := entry(l, "c")
		return ok && e.JournalDirError == ""
	})
	h2.Input("c", "last\n")
	// Its echo, and cat's copy after the lines typed before it.
	sn := h2.MustUntil("the last line, echoed and copied", func(sn hosttest.Snapshot) bool {
		out := sn.Output("c")
		return strings.Count(out, "last\r\n") == 2 && strings.HasSuffix(out, "last\r\n")
	})
	killServer(t, s)
	h2.WaitExit(hosttest.Timeout)
	h3 := s.host(flags...)
	e, ok := entry(list(t, h3), "c")
	if !ok || !e.Dead || e.Start != 0 {
		t.Fatalf("after the crash: %+v", e)
	}
	h3.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "c"})
	h3.WaitControl(proto.TypeExit, "c")
	if got, want := h3.Now().Output("c"), h.Now().Output("c")+sn.Output("c"); got != want {
		t.Fatalf("recovered %q, want %q", got, want)
	}
}

// What a terminal's files do not hold when the server dies is counted:
// here a flood past a full disk, whose files stopped part way while the
// server read on. The next server lists the terminal dead with
// crashLost, the bytes its server had read past the last one the files
// kept, and says so in ATTACHED; the disk still full, it recovers it
// all the same.
func TestJournalDirCrashLostCounted(t *testing.T) {
	t.Parallel()
	const size = 2 << 20
	disk := smallDisk(t, size)
	if err := os.WriteFile(filepath.Join(disk, "filler"), make([]byte, size-112<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	flags := []string{"--journal-dir", filepath.Join(disk, "journals"), "--journal", fmt.Sprint(1 << 20)}
	h := s.host(flags...)
	h.Open(proto.Open{TerminalID: "flood", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", `i=0; while [ $i -lt 20000 ]; do echo "line-$i"; i=$((i+1)); done; echo flood-done; exec cat`}})
	h.WaitOutput("flood", "flood-done\r\n")
	e, ok := entry(list(t, h), "flood")
	if !ok || e.JournalDirError == "" || e.CrashLost != 0 {
		t.Fatalf("the flood past a full disk: %+v (want journalDirError, no crashLost)", e)
	}
	produced := e.Produced // all read: its program waits in cat
	killServer(t, s)
	h.WaitExit(hosttest.Timeout)

	h2 := s.host(flags...)
	d, ok := entry(list(t, h2), "flood")
	if !ok || !d.Dead || d.Produced >= produced || d.Produced == 0 {
		t.Fatalf("after the crash: %+v (want dead, some of the %d bytes)", d, produced)
	}
	if d.Produced+d.CrashLost != produced {
		t.Fatalf("after the crash: %d bytes kept, crashLost %d: want the %d produced in all", d.Produced, d.CrashLost, produced)
	}
	before := len(h2.Now().Frames)
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "flood", Offset: d.Start})
	h2.WaitControl(proto.TypeExit, "flood")
	at, _ := controlAfter(h2.Now(), before, proto.TypeAttached, "flood")
	if at["crashLost"] != float64(d.CrashLost) || at["lost"] != float64(0) {
		t.Fatalf("ATTACHED %v: want crashLost %d, lost 0", at, d.CrashLost)
	}
}
