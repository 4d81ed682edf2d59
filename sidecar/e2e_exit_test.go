//go:build unix

package sidecar_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestExitComesAfterEveryByte(t *testing.T) {
	h := start(t)
	const n = 1 << 20
	sh(h, "big", "head -c 1048576 /dev/zero | tr '\\0' x; exit 7")
	e := exitOf(t, h, "big")
	assert.EqualValues(t, 7, e.Fields["exitCode"])
	s := h.Now()
	assert.Equal(t, n, len(s.Output("big")))
	// No OUTPUT of the terminal after its EXIT.
	exited := false
	for _, f := range s.Frames {
		if f.Type == proto.TypeExit && strings.Contains(string(f.Body), `"big"`) {
			exited = true
		}
		if id, _, _ := proto.ParseData(f.Body); f.Type == proto.TypeOutput && id == "big" {
			require.False(t, exited, "OUTPUT after EXIT")
		}
	}
}

func TestExitCodes(t *testing.T) {
	h := start(t)
	sh(h, "zero", "exit 0")
	sh(h, "three", "exit 3")
	sh(h, "kill9", "kill -9 $$")
	sh(h, "term", "kill -TERM $$")
	assert.Equal(t, `{"exitCode":0,"terminalId":"zero"}`, exitOf(t, h, "zero").Raw)
	assert.Equal(t, `{"exitCode":3,"terminalId":"three"}`, exitOf(t, h, "three").Raw)
	assert.Equal(t, `{"exitCode":137,"signal":"SIGKILL","terminalId":"kill9"}`, exitOf(t, h, "kill9").Raw)
	assert.Equal(t, `{"exitCode":143,"signal":"SIGTERM","terminalId":"term"}`, exitOf(t, h, "term").Raw)
}

// A background process that keeps the PTY open must not hold EXIT back,
// and must not outlive the terminal.
func TestExitDespiteLeftoverHoldingPTY(t *testing.T) {
	h := start(t)
	sh(h, "bg", "sleep 1000 & echo bg=$!; exit 4")
	e := exitOf(t, h, "bg")
	assert.EqualValues(t, 4, e.Fields["exitCode"])
	requireGone(t, pidIn(t, h.Now().Output("bg"), "bg"), "background sleep")
}

// A daemon that left the session with setsid but kept the terminal as its
// stdio is found through the descriptors it holds.
func TestExitDespiteEscapedDaemonHoldingPTY(t *testing.T) {
	h := start(t)
	// The fifo makes the shell exit only after the daemon announced itself.
	fifo := filepath.Join(t.TempDir(), "sync")
	sh(h, "d", fmt.Sprintf(`mkfifo %[1]s; setsid -f sh -c 'echo daemon=$$; echo > %[1]s; exec sleep 1000'; read x < %[1]s; exit 5`, fifo))
	e := exitOf(t, h, "d")
	assert.EqualValues(t, 5, e.Fields["exitCode"])
	requireGone(t, pidIn(t, h.Now().Output("d"), "daemon"), "escaped daemon")
}

func TestIDReusableAfterExit(t *testing.T) {
	h := start(t)
	sh(h, "again", "echo first")
	exitOf(t, h, "again")
	sh(h, "again", "echo second")
	h.WaitOutput("again", "second")
	cs := h.Now().Controls("again")
	for _, c := range cs {
		assert.NotEqual(t, proto.TypeError, c.Type, c.Raw)
	}
}

func TestCloseHangsUpThenKills(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "polite", Cols: 80, Rows: 24, Cmd: "cat"})
	sh(h, "stubborn", `trap '' HUP; echo ready; while :; do sleep 1; done`)
	openedPID(t, h, "polite")
	h.WaitOutput("stubborn", "ready")
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "polite"})
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "stubborn"})
	began := time.Now()
	assert.Equal(t, "SIGHUP", exitOf(t, h, "polite").Fields["signal"])
	assert.Equal(t, "SIGKILL", exitOf(t, h, "stubborn").Fields["signal"])
	// The escalation waits for its grace period (not a timing assertion on
	// speed: SIGKILL must not come early).
	assert.GreaterOrEqual(t, time.Since(began), 2500*time.Millisecond)
}

// A stopped child (SIGSTOP from a host's SIGNAL, a debugger) ends by
// CLOSE's hangup, at once: the sidecar continues the group after the
// SIGHUP, as the kernel's own hangup does. Before, the hangup stayed
// pending and the SIGKILL ended the child after the grace period.
func TestCloseEndsAStoppedChild(t *testing.T) {
	h := start(t)
	sh(h, "stopped", "echo ready; kill -STOP $$; echo resumed; sleep 1000")
	pid := openedPID(t, h, "stopped")
	h.WaitOutput("stopped", "ready")
	// ps, not /proc: the same on every Unix.
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		require.NoError(t, err)
		if strings.HasPrefix(strings.TrimSpace(string(out)), "T") {
			break
		}
		require.False(t, time.Now().After(deadline), "the child never stopped: ps says %q", out)
		time.Sleep(10 * time.Millisecond)
	}
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "stopped"})
	e := exitOf(t, h, "stopped")
	assert.Equal(t, "SIGHUP", e.Fields["signal"], e.Raw)
	assert.NotContains(t, h.Now().Output("stopped"), "resumed")
}

// Background jobs of an interactive shell sit in process groups of their
// own; CLOSE must end them too, even when they ignore SIGHUP.
func TestCloseEndsBackgroundJobs(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "i", Cols: 80, Rows: 24, Cmd: "bash",
		Args: []string{"--norc", "--noprofile", "-i"}, Env: map[string]string{"PS1": "$ "}})
	h.Input("i", "(trap '' HUP; exec sleep 1000) & echo job=$!\n")
	jobRE := regexp.MustCompile(`job=\d+\r\n`)
	h.MustUntil("the job's pid", func(s hosttest.Snapshot) bool { return jobRE.MatchString(s.Output("i")) })
	job := pidIn(t, h.Now().Output("i"), "job")
	require.True(t, hosttest.Alive(job))
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "i"})
	exitOf(t, h, "i")
	requireGone(t, job, "background job")
}

func TestStdinEOFShutsDown(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	h := start(t)
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "cat"})
	sh(h, "b", `trap '' HUP TERM; echo ready; while :; do sleep 1; done`)
	a := openedPID(t, h, "a")
	b := openedPID(t, h, "b")
	h.WaitOutput("b", "ready")
	h.CloseStdin()
	assert.Equal(t, "SIGKILL", exitOf(t, h, "a").Fields["signal"])
	assert.Equal(t, "SIGKILL", exitOf(t, h, "b").Fields["signal"])
	code, err := h.WaitExit(hosttest.Timeout)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	// The host ended it: a clean end says nothing on stderr.
	assert.NotContains(t, h.Stderr(), "exiting with status")
	requireGone(t, a, "terminal a")
	requireGone(t, b, "terminal b")
}

// TestStdinEOFLogExit: with -log-exit a clean end is reported too.
func TestStdinEOFLogExit(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	h := hosttest.Start(t, sidecarBin, "-log-exit")
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "cat"})
	openedPID(t, h, "a")
	h.CloseStdin()
	code, err := h.WaitExit(hosttest.Timeout)
	require.NoError(t, err)
	assert.Equal(t, 0, code)
	assert.Equal(t, "exiting with status 0: the host closed stdin", lastStderrLine(h))
}

func TestSignalShutsDown(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	// Every signal whose default action is to end a process quietly.
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGUSR1, syscall.SIGUSR2, syscall.SIGALRM} {
		t.Run(unix.SignalName(sig), func(t *testing.T) {
			h := start(t)
			sh(h, "s", `trap '' HUP; echo ready; while :; do sleep 1; done`)
			pid := openedPID(t, h, "s")
			h.WaitOutput("s", "ready")
			require.NoError(t, h.Cmd.Process.Signal(sig))
			exitOf(t, h, "s")
			code, err := h.WaitExit(hosttest.Timeout)
			require.NoError(t, err)
			assert.Equal(t, 0, code)
			assert.Equal(t, "exiting with status 0: received "+unix.SignalName(sig), lastStderrLine(h))
			requireGone(t, pid, "terminal")
		})
	}
}

// TestSignalShutdownKeepsTheCredit: a shutdown the host did not ask for
// (a signal) sends no OUTPUT past the credit the host granted; the end of
// stdin lifts the gate, as CLOSE does. The readers drained the whole PTY
// into OUTPUT in both cases, and a host that counts its credit (the Go
// client, the npm package) took a signalled sidecar's last output for a
// broken protocol and lost every EXIT.
func TestSignalShutdownKeepsTheCredit(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	for _, how := range []string{"SIGTERM", "end of stdin"} {
		t.Run(how, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "written")
			require.NoError(t, unix.Mkfifo(fifo, 0o600))
			h := start(t)
			// 3000 bytes: past the credit, within what any PTY buffers,
			// so all of them wait in it once the FIFO says so.
			h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh", Credit: ptr(uint64(100)),
				Args: []string{"-c", `head -c 3000 /dev/zero | tr '\0' x; echo written >"$0"; exec sleep 1000`, fifo}})
			pid := openedPID(t, h, "c")
			readFIFO(t, fifo)
			want := 100
			if how == "SIGTERM" {
				require.NoError(t, h.Cmd.Process.Signal(syscall.SIGTERM))
			} else {
				h.CloseStdin()
				want = 3000
			}
			exitOf(t, h, "c")
			assert.Equal(t, strings.Repeat("x", want), h.Now().Output("c"))
			code, err := h.WaitExit(hosttest.Timeout)
			require.NoError(t, err)
			assert.Equal(t, 0, code)
			requireGone(t, pid, "terminal")
		})
	}
}

// readFIFO waits until a child wrote to the FIFO at path and closed it.
func readFIFO(t *testing.T, path string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := os.ReadFile(path) // opening waits for the writer
		done <- err
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(hosttest.Timeout):
		t.Fatalf("nothing wrote to %s within %v", path, hosttest.Timeout)
	}
}

func TestCorruptStreamShutsDown(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	cases := map[string][]byte{
		"zero length":      {0, 0, 0, 0, 1},
		"oversized length": {0x01, 0x00, 0x00, 0x01, 1},
		"truncated header": {5, 0},
		"truncated body":   {10, 0, 0, 0, 2, 1, 0, 'a'},
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			h := start(t)
			sh(h, "live", `trap '' HUP; echo ready; while :; do sleep 1; done`)
			pid := openedPID(t, h, "live")
			h.WaitOutput("live", "ready")
			require.NoError(t, h.SendRaw(raw))
			if strings.HasPrefix(name, "truncated") {
				h.CloseStdin()
			}
			exitOf(t, h, "live")
			code, err := h.WaitExit(hosttest.Timeout)
			require.NoError(t, err)
			assert.NotEqual(t, 0, code)
			assert.Contains(t, h.Stderr(), "corrupt frame stream")
			assert.Regexp(t, `^exiting with status 1: .*corrupt frame stream`, lastStderrLine(h))
			requireGone(t, pid, "terminal")
		})
	}
}

func TestUnknownFramesAndIDsAreIgnored(t *testing.T) {
	h := start(t)
	require.NoError(t, h.Send(0x7f, []byte("whatever")))
	require.NoError(t, h.Send(0x06, nil))
	h.Input("ghost", "nobody home\n")
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "ghost", Cols: 10, Rows: 10})
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "ghost"})
	h.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "ghost", Bytes: 10})
	sh(h, "real", "echo fine")
	exitOf(t, h, "real")
	for _, f := range h.Now().Frames {
		assert.NotEqual(t, proto.TypeError, f.Type, string(f.Body))
	}
}

func TestBrokenStdoutShutsDown(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	h := start(t)
	sh(h, "flood", "trap '' HUP; yes")
	pid := openedPID(t, h, "flood")
	h.CloseStdout() // the host stops reading: the sidecar's writes fail
	code, err := h.WaitExit(hosttest.Timeout)
	require.NoError(t, err)
	assert.NotEqual(t, 0, code)
	assert.Regexp(t, `^exiting with status 1: the host stopped reading stdout: `, lastStderrLine(h))
	requireGone(t, pid, "flooding terminal")
}

// A sidecar that cannot say why it ends (SIGKILL) is reported by its
// watchdog, on the stderr they share.
func TestKilledSidecarIsReported(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	h := start(t)
	sh(h, "s", "echo ready; exec sleep 1000")
	pid := openedPID(t, h, "s")
	h.WaitOutput("s", "ready")
	sidecar := h.Cmd.Process.Pid
	require.NoError(t, h.Cmd.Process.Signal(syscall.SIGKILL))
	_, err := h.WaitExit(hosttest.Timeout)
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprintf("ptyplex watchdog: pid %d ended without shutting down (killed or crashed); terminals still live: 1", sidecar), lastStderrLine(h))
	requireGone(t, pid, "terminal")
}

// lastStderrLine is the sidecar's last line on stderr, without the log
// prefix and time stamp.
func lastStderrLine(h *hosttest.Host) string {
	lines := strings.Split(strings.TrimRight(h.Stderr(), "\n"), "\n")
	last := lines[len(lines)-1]
	if m := regexp.MustCompile(`^ptyplex-sidecar: \S+ \S+ (.*)$`).FindStringSubmatch(last); m != nil {
		return m[1]
	}
	return last
}

// After terminals end, the sidecar holds no more descriptors than before
// and has no unreaped children.
func TestNoZombieOrDescriptorLeakInBinary(t *testing.T) {
	h := start(t)
	pid := h.Cmd.Process.Pid
	sh(h, "warm", "exit 0")
	exitOf(t, h, "warm")
	before := countFDs(t, pid)
	for i := 0; i < 30; i++ {
		id := fmt.Sprint("n", i)
		switch i % 3 {
		case 0:
			sh(h, id, "echo hi; exit 1")
		case 1:
			sh(h, id, "kill -KILL $$")
		case 2:
			h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "cat"})
			h.SendJSON(proto.TypeClose, proto.Close{TerminalID: id})
		}
	}
	for i := 0; i < 30; i++ {
		exitOf(t, h, fmt.Sprint("n", i))
	}
	assert.Equal(t, before, countFDs(t, pid), "descriptors of the sidecar")
	assert.Empty(t, childrenOf(t, pid), "children left behind")
}

func countFDs(t *testing.T, pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	require.NoError(t, err)
	return len(ents)
}

// childrenOf lists the processes (zombies included) whose parent is pid,
// except the sidecar's watchdog, which lives as long as the sidecar.
func childrenOf(t *testing.T, pid int) []string {
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var kids []string
	for _, e := range ents {
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if f := strings.Fields(s[i+1:]); len(f) > 1 && f[1] == fmt.Sprint(pid) {
			if env, _ := os.ReadFile("/proc/" + e.Name() + "/environ"); slices.Contains(strings.Split(string(env), "\x00"), watchdog.Env+"=1") {
				continue
			}
			kids = append(kids, s)
		}
	}
	return kids
}
