//go:build unix

package persist_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/internal/testing/testproc"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// newUpgradeServer is newServer for the upgrade tests, which also fail on
// a data race any image of the server reported in its log: the freeze
// is all about goroutines stopping at the right points.
func newUpgradeServer(t *testing.T) *server {
	s := newServer(t)
	t.Cleanup(func() {
		if strings.Contains(s.log(), "DATA RACE") {
			t.Errorf("the server reported a data race:\n%s", s.log())
		}
	})
	return s
}

// copyBinary copies the sidecar binary to a path of its own: the binary an
// upgrade hands over to is another file than the one the server runs.
func copyBinary(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sidecarBin)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "ptyplex-sidecar-new")
	if err := testproc.WriteExecutable(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

var upgradedRE = regexp.MustCompile(`^upgraded persistent sidecar t \(pid (\d+)\): (\d+) (terminals?), \S+ -> \S+\n$`)

// upgradeTo runs `BIN --persist t --upgrade` and returns the server's pid
// and the number of terminals it reported.
func (s *server) upgradeTo(bin string) (pid, terms int) {
	s.t.Helper()
	cmd := exec.Command(bin, "--persist", s.name, "--upgrade")
	cmd.Env = s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	m := upgradedRE.FindStringSubmatch(string(out))
	if err != nil || m == nil {
		s.t.Fatalf("--upgrade with %s: %v\nstdout: %s\nstderr: %s", bin, err, out, stderr.String())
	}
	pid, _ = strconv.Atoi(m[1])
	terms, _ = strconv.Atoi(m[2])
	// The count and its noun agree: "1 terminal", "0 terminals".
	if (terms == 1) != (m[3] == "terminal") {
		s.t.Errorf("--upgrade said %q: %d %s", strings.TrimSpace(string(out)), terms, m[3])
	}
	return pid, terms
}

// pids lists the server through h and returns each terminal's pid.
func pids(t *testing.T, h *hosttest.Host) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, e := range list(t, h).Terminals {
		out[e.TerminalID] = e.PID
	}
	return out
}

// Eight terminals flood numbered lines while the server is upgraded three
// times, alternating between two binaries; each upgrade ends the host's
// connection, and a new host attaches every terminal at the offset it
// had. What the hosts received, joined, is byte for byte what the
// programs wrote, no child noticed (same pids, exit status 0), and the
// server process is the same one, running the last binary.
func TestUpgradeMidFlood(t *testing.T) {
	t.Parallel()
	const (
		terms    = 8
		lines    = 40000 // about 250 KB a terminal
		upgrades = 3
		window   = 16 << 10
	)
	want := numberedLines(lines)
	s := newUpgradeServer(t)
	bins := []string{copyBinary(t), sidecarBin}
	var got [terms]bytes.Buffer
	done := map[string]bool{}
	ids := make([]string, terms)
	for i := range ids {
		ids[i] = fmt.Sprintf("flood%d", i)
	}
	var opened map[string]int
	serverPID := 0
	for round := 0; round <= upgrades; round++ {
		h := s.host()
		for i, id := range ids {
			if done[id] {
				continue
			}
			if round == 0 {
				// Park mode and acknowledged credit: bytes in flight
				// when the connection ends stay in the journal.
				h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": id, "cols": 80, "rows": 24,
					"cmd": "seq", "args": []string{"1", strconv.Itoa(lines)}, "detached": "park", "journal": 64 << 10, "credit": window})
			} else {
				h.SendJSON(proto.TypeAttach, map[string]any{"terminalId": id, "offset": got[i].Len(), "credit": window})
			}
		}
		autoCredit(h, ids)
		if round == 0 {
			opened = map[string]int{}
			sn := h.MustUntil("OPENED for every terminal", func(sn hosttest.Snapshot) bool {
				for _, id := range ids {
					if _, ok := controlAfter(sn, 0, proto.TypeOpened, id); !ok {
						return false
					}
				}
				return true
			})
			for _, id := range ids {
				m, _ := controlAfter(sn, 0, proto.TypeOpened, id)
				opened[id] = int(m["pid"].(float64))
			}
		} else {
			// The children are the same processes, in the same
			// terminals, whichever binary serves them.
			for id, pid := range pids(t, h) {
				if !done[id] && pid != opened[id] {
					t.Fatalf("after upgrade %d: %s has pid %d, was %d", round, id, pid, opened[id])
				}
			}
		}
		last := round == upgrades
		target := len(want) * (round + 1) / (upgrades + 2)
		h.MustUntil(fmt.Sprintf("round %d's share of the floods", round), func(sn hosttest.Snapshot) bool {
			for i, id := range ids {
				if done[id] {
					continue
				}
				if _, ok := controlAfter(sn, 0, proto.TypeAttached, id); round > 0 && !ok {
					return false
				}
				if _, exited := controlAfter(sn, 0, proto.TypeExit, id); exited {
					continue
				}
				if last || got[i].Len()+len(sn.Outputs[id]) < target || len(sn.Outputs[id]) == 0 {
					return false
				}
			}
			return true
		})
		if !last {
			// Upgrade in the middle of the floods: the server ends our
			// connection, and the bridge exits.
			pid, n := s.upgradeTo(bins[round%2])
			if serverPID != 0 && pid != serverPID {
				t.Fatalf("upgrade %d: the server is pid %d, was %d", round, pid, serverPID)
			}
			serverPID = pid
			if want := terms - len(done); n < want {
				t.Fatalf("upgrade %d handed over %d terminals, want at least %d", round, n, want)
			}
			if _, err := h.WaitExit(hosttest.Timeout); err != nil {
				t.Fatalf("upgrade %d: the bridge did not end: %v", round, err)
			}
		}
		takeRound(t, h.Now(), round, ids, got[:], done)
	}
	checkStreams(t, ids, got[:], done, want)
	// Upgrades 0 and 2 went to the copy, which the server runs from a
	// sealed memfd of what was checked (or, where the kernel will not run
	// a memfd, from the checked file itself).
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", serverPID)); err == nil {
		if argv0, _, _ := strings.Cut(string(cmdline), "\x00"); argv0 != bins[0] {
			t.Errorf("the server was started as %s, want %s", argv0, bins[0])
		}
	}
	if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", serverPID)); err == nil && exe != bins[0] && !strings.HasPrefix(exe, "/memfd:ptyplex-sidecar") {
		t.Errorf("the server runs %s, want a sealed copy of %s", exe, bins[0])
	}
	if runtime.GOOS == "linux" {
		checkNamesAfterUpgrade(t, serverPID, bins[0])
	}
}

// checkNamesAfterUpgrade: the upgraded server's name is still its
// binary's (ps, pgrep -x, killall), not the number of the descriptor it
// was executed through, and so is the watchdog's it started (Linux: the
// names are in /proc).
func checkNamesAfterUpgrade(t *testing.T, serverPID int, bin string) {
	t.Helper()
	if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", serverPID)); err != nil {
		t.Error(err)
	} else if want := filepath.Base(bin); strings.TrimSpace(string(comm)) != want[:min(len(want), 15)] {
		t.Errorf("the upgraded server's name is %q, want %q", comm, want)
	}
	// So is the watchdog's that the upgraded server started ("exe", from
	// /proc/self/exe, before).
	var wdComm string
	waitFor(t, "the upgraded server's watchdog", func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", serverPID))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, k := range strings.Fields(string(b)) {
				if env, _ := os.ReadFile("/proc/" + k + "/environ"); slices.Contains(strings.Split(string(env), "\x00"), watchdog.Env+"=1") {
					c, _ := os.ReadFile("/proc/" + k + "/comm")
					wdComm = strings.TrimSpace(string(c))
					return true
				}
			}
		}
		return false
	})
	if want := filepath.Base(bin); wdComm != want[:min(len(want), 15)] {
		t.Errorf("the upgraded server's watchdog is named %q, want %q", wdComm, want)
	}
}

// A binary that does not read our handover format is refused, through the
// frame and through --upgrade, and the server goes on untouched: the same
// terminal, the same pid, the same connection, and it still echoes.
func TestUpgradeRefused(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	if out, err := s.run("--upgrade"); err == nil || !strings.Contains(out, `no persistent sidecar "t" is running`) {
		t.Fatalf("--upgrade without a server: %v, %q", err, out)
	}
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	pid := int(h.WaitControl(proto.TypeOpened, "c").Fields["pid"].(float64))
	h.Input("c", "one\n")
	h.WaitOutput("c", "one\r\n")
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := testproc.WriteExecutable(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A script that prints the very banner a sidecar of our format
	// prints, and would run the real one: what it prints proves nothing.
	ran := filepath.Join(dir, "ran-as-server")
	banner := script("banner", fmt.Sprintf("if [ \"$1\" = --persist-handover-format ]; then echo '%s'; exit 0; fi\n: > %s\nexec %s \"$@\"",
		persist.HandoverLine(), ran, sidecarBin))
	gofmt, err := exec.LookPath(filepath.Join(runtime.GOROOT(), "bin", "gofmt"))
	if err != nil {
		t.Fatalf("a Go program that is not ours: %v", err)
	}
	// The real binary with its mark changed: a sidecar of another
	// handover format, and one that says none (same lengths: the binary
	// stays whole).
	patched := func(name, from, to string) string {
		b, err := os.ReadFile(sidecarBin)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(from)) {
			t.Fatalf("the sidecar binary does not contain %q", from)
		}
		p := filepath.Join(dir, name)
		if err := testproc.WriteExecutable(p, bytes.ReplaceAll(b, []byte(from), []byte(to)), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mark := persist.HandoverMark
	future := patched("future", mark, strings.Replace(mark, fmt.Sprintf(":%d\x00", persist.HandoverFormat), ":9\x00", 1))
	unmarked := patched("unmarked", mark, strings.Replace(mark, "handover", "handuver", 1))
	// Our format's mark, but a flag this server passes on unknown to it:
	// a build from before --orphan-timeout existed. Executed in the
	// server's place it stopped at its flags and every terminal ended.
	oldFlags := patched("old-flags", "orphan-timeout", "orphan-timeoux")
	for _, c := range []struct{ path, why string }{
		{banner, "is not a ptyplex-sidecar that can take over a persistent server: it is not a Go program"},
		{gofmt, `is not a ptyplex-sidecar that can take over a persistent server: it is the Go program "cmd/gofmt"`},
		{future, fmt.Sprintf("reads handover format 9, this server writes format %d", persist.HandoverFormat)},
		{unmarked, "does not say which handover format it reads"},
		{oldFlags, "does not accept this server's flags"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
	} {
		before := len(h.Now().Frames)
		h.SendJSON(proto.TypeUpgrade, proto.Upgrade{Path: c.path, Version: "test"})
		sn := h.MustUntil("ERROR for UPGRADE", func(sn hosttest.Snapshot) bool {
			_, ok := controlAfter(sn, before, proto.TypeError, "")
			return ok
		})
		m, _ := controlAfter(sn, before, proto.TypeError, "")
		if msg, _ := m["message"].(string); !strings.Contains(msg, "UPGRADE refused: ") || !strings.Contains(msg, c.why) {
			t.Errorf("UPGRADE to %s: ERROR %q, want it to say %q", c.path, msg, c.why)
		}

		cmd := exec.Command(sidecarBin, "--persist", s.name, "--upgrade", "--upgrade-binary", c.path)
		cmd.Env = s.env
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 || !strings.Contains(string(out), c.why) {
			t.Errorf("--upgrade to %s: exit %d (%v), output %q; want exit 1 saying %q", c.path, code, err, out, c.why)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("the server ran a script that printed the handover banner")
	}
	if got := pids(t, h)["c"]; got != pid {
		t.Fatalf("after the refusals terminal c has pid %d, want %d", got, pid)
	}
	h.Input("c", "two\n")
	h.WaitOutput("c", "one\r\none\r\ntwo\r\ntwo\r\n")
}

// INPUT queued for a child that does not read yet, more than the PTY
// takes, crosses an upgrade: it is in the journal's output exactly once
// after the child starts reading.
func TestUpgradeKeepsQueuedInput(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	goFile := filepath.Join(t.TempDir(), "go")
	h := s.host()
	// Raw mode, no echo: what cat reads comes back byte for byte. The
	// child reads nothing until the test creates goFile.
	h.Open(proto.Open{TerminalID: "q", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c",
		"stty raw -echo; echo ready; while [ ! -e " + goFile + " ]; do sleep 0.02; done; exec cat"}})
	h.WaitOutput("q", "ready")
	var in bytes.Buffer
	for i := 1; in.Len() < 200<<10; i++ {
		fmt.Fprintf(&in, "input line %d\n", i)
	}
	for b := in.Bytes(); len(b) > 0; {
		n := min(len(b), 8<<10)
		h.Input("q", string(b[:n]))
		b = b[n:]
	}
	s.upgradeTo(bin)
	h.WaitExit(hosttest.Timeout)
	if m := regexp.MustCompile(`(\d+) bytes of input queued`).FindStringSubmatch(s.log()); m == nil || m[1] == "0" {
		t.Fatalf("the input was not queued at the upgrade (the test tests nothing): %q", m)
	}
	have := len(h.Now().Output("q"))
	h2 := s.host()
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "q", Offset: uint64(have)})
	h2.WaitControl(proto.TypeAttached, "q")
	if err := os.WriteFile(goFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	h2.Input("q", "END\n")
	sn := h2.MustUntil("the input echoed and END", func(sn hosttest.Snapshot) bool {
		return strings.HasSuffix(sn.Output("q"), "END\n")
	})
	all := h.Now().Output("q") + sn.Output("q")
	echoed := all[strings.Index(all, "ready")+len("ready\n"):]
	if echoed != in.String()+"END\n" {
		t.Fatalf("echoed %d bytes, want %d (%d bytes of input and END); starts %q", len(echoed), in.Len()+4, in.Len(), echoed[:min(len(echoed), 60)])
	}
}

// Terminals that exited before an upgrade deliver their output and EXIT,
// with its status, to a host that attaches after it: one reaped before
// the upgrade, and one whose child exited while its reader waited for
// journal room, so that the new image adopts it as a zombie.
func TestUpgradeKeepsExits(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	bin := copyBinary(t)
	h := s.host()
	zero := uint64(0)
	// With no credit nothing is sent: the output and the EXIT wait.
	h.Open(proto.Open{TerminalID: "reaped", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo bye; exit 7"}, Credit: &zero})
	// A park journal of 1 KiB fills at once and nobody acknowledges
	// it: the reader waits, the child writes the rest into the PTY and
	// exits, and stays unreaped until the reader saw the end.
	out := strings.Repeat("z", 63) + "\n"
	h.SendJSON(proto.TypeOpen, map[string]any{"terminalId": "zombie", "cols": 80, "rows": 24, "cmd": "/bin/sh",
		"args":     []string{"-c", "stty -opost; i=0; while [ $i -lt 40 ]; do printf '" + out + "'; i=$((i+1)); done; exit 5"},
		"detached": "park", "journal": 1024, "credit": 0})
	listUntil(t, h, "the reaped terminal's exit", func(l proto.Listed) bool { e, _ := entry(l, "reaped"); return e.Exited })
	h.WaitControl(proto.TypeOpened, "zombie")
	// Wait until the zombie's child has written everything: the journal
	// is full and its pid is a zombie.
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		e, _ := entry(list(t, h), "zombie")
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", e.PID))
		if err == nil && e.Produced == 1024 && strings.Contains(string(st), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the zombie terminal: %+v, stat %q", e, st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.upgradeTo(bin)
	h.WaitExit(hosttest.Timeout)
	h2 := s.host()
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "reaped"})
	h2.SendJSON(proto.TypeAttach, proto.Attach{TerminalID: "zombie"})
	ex := h2.WaitControl(proto.TypeExit, "reaped")
	if ex.Fields["exitCode"] != float64(7) || h2.Now().Output("reaped") != "bye\r\n" {
		t.Fatalf("reaped: EXIT %s after %q", ex.Raw, h2.Now().Output("reaped"))
	}
	ex = h2.WaitControl(proto.TypeExit, "zombie")
	if ex.Fields["exitCode"] != float64(5) || h2.Now().Output("zombie") != strings.Repeat(out, 40) {
		t.Fatalf("zombie: EXIT %s after %d bytes", ex.Raw, len(h2.Now().Output("zombie")))
	}
}

// An upgrade while a connection is open whose host has sent nothing
// since its bridge's HELLO (a bridge run by hand, waiting for its first
// frame): the server closes it for the execve, and the read of it that
// ended used to panic (recvmsg's -1 taken for a count), ending the server
// and every terminal with it.
func TestUpgradeWithASilentHost(t *testing.T) {
	t.Parallel()
	s := newUpgradeServer(t)
	h := s.host()
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/cat"})
	pid := int(h.WaitControl(proto.TypeOpened, "c").Fields["pid"].(float64))
	server := s.pid()
	// A connection as a copying bridge makes it: HELLO, its answer, and
	// then nothing. After the answer, the server's next read of it is the
	// one a HANDOFF may come in.
	c, err := net.Dial("unix", filepath.Join(s.dir, "sidecar", s.name+".sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	hello, _ := json.Marshal(proto.Hello{Version: "test", Protocol: 1})
	if err := proto.WriteFrame(c, proto.TypeHello, hello); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(hosttest.Timeout))
	if f, err := proto.NewReader(c).ReadFrame(); err != nil || f.Type != proto.TypeHelloReply {
		t.Fatalf("HELLO's answer: %v %v", f.Type, err)
	}
	newPid, n := s.upgradeTo(copyBinary(t))
	if newPid != server || n != 1 {
		t.Fatalf("after the upgrade: server pid %d (want %d), %d terminals\n%s", newPid, server, n, s.log())
	}
	if got := pids(t, s.host())["c"]; got != pid {
		t.Fatalf("terminal c has pid %d after the upgrade, want %d", got, pid)
	}
}
