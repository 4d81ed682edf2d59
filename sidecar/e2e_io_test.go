//go:build unix

package sidecar_test

import (
	"bytes"
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestInputArrivesInOrder(t *testing.T) {
	h := start(t)
	// Raw mode without echo: what cat prints is exactly what it read.
	sh(h, "in", "stty raw -echo; echo ready; exec cat")
	h.WaitOutput("in", "ready")
	var want strings.Builder
	for i := 0; i < 500; i++ {
		chunk := fmt.Sprintf("<%04d>", i)
		want.WriteString(chunk)
		h.Input("in", chunk)
	}
	h.MustUntil("all input echoed", func(s hosttest.Snapshot) bool {
		return strings.Contains(s.Output("in"), want.String())
	})
}

// A child that never reads must not hold back frames for other terminals
// while its queue is under the bound, and nothing queued for it is lost.
func TestStuckChildDoesNotStallOthers(t *testing.T) {
	h := start(t)
	// Non-canonical mode: once the PTY's input buffer is full, writes block
	// (a canonical-mode line discipline would discard instead).
	sh(h, "stuck", "stty raw -echo; echo ready; exec sleep 1000")
	h.WaitOutput("stuck", "ready")
	// 8 MiB: far more than the PTY's input buffer, well under the bound.
	chunk := strings.Repeat("x", 1<<20)
	for i := 0; i < 8; i++ {
		h.Input("stuck", chunk)
	}
	h.Open(proto.Open{TerminalID: "other", Cols: 80, Rows: 24, Cmd: "cat"})
	h.Input("other", "alive\n")
	h.WaitOutput("other", "alive")
	require.NotContains(t, sidecarLog(h), "holding back", "8 MiB is under the bound")
	for _, c := range h.Now().Controls("stuck") {
		require.NotEqual(t, proto.TypeError, c.Type, "INPUT is never answered with ERROR: %s", c.Raw)
	}
}

// Pasting a large block into cat gives every byte back, in order, with a
// marker after the first MiB that used to be dropped.
func TestLargeInputComesBackIntact(t *testing.T) {
	// Both subtests open "cat" running the same script and expect a fresh
	// one. Each ends its own, as a tidy host does (CLOSE, then its EXIT):
	// a host that just went would leave it to a persistent server, whose
	// re-adoption then gives the next OPEN that one, screen and all (as
	// documented), where the plain sidecar would have ended it.
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"1MiB+marker", append(bytes.Repeat([]byte("0123456789abcdef"), 1<<16), "<end-marker>"...)},
		{"8MiB random", randomBytes(8 << 20)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t)
			// -iexten too: no byte value may be taken as a line-editing key.
			sh(h, "cat", "stty raw -echo -iexten; echo ready; exec cat")
			opened := h.WaitControl(proto.TypeOpened, "cat")
			require.Nil(t, opened.Fields["readopted"], "a fresh cat: %s", opened.Raw)
			// Raw mode turns output processing off: "\n" stays "\n".
			h.WaitOutput("cat", "ready\n")
			go sendInChunks(h, "cat", tc.data, 256<<10)
			prefix := len("ready\n")
			s := h.MustUntil("all input echoed", func(s hosttest.Snapshot) bool {
				return len(s.Outputs["cat"]) >= prefix+len(tc.data)
			})
			got := s.Outputs["cat"][prefix:]
			require.Equal(t, len(tc.data), len(got))
			if i := firstDiff(got, tc.data); i >= 0 {
				t.Fatalf("echo differs from the input at byte %d of %d", i, len(tc.data))
			}
			h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "cat"})
			exitOf(t, h, "cat")
		})
	}
}

// Past a terminal's 16 MiB bound the sidecar stops reading frames (and says
// so on stderr) instead of dropping input. Frames of other terminals wait
// behind it; once the child reads, everything arrives intact. Through a
// persistent server the input waits likewise (its log says so), and
// nothing of it is lost either.
func TestInputPastBoundBlocksThenDrains(t *testing.T) {
	h := start(t)
	persistent := len(sidecarArgs) > 0
	// The server's log is the whole run's (and the run before's): the
	// line to wait for is one more than it has now.
	waitsRe := regexp.MustCompile(`INPUT for terminal "stuck" waits`)
	waitsBefore := len(waitsRe.FindAllString(sidecarLog(h), -1))
	fifo := filepath.Join(t.TempDir(), "go")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	const n = 20 << 20
	// The child reads nothing until the FIFO is opened and closed by the
	// test, then reads exactly n bytes and prints their checksum.
	sh(h, "stuck", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; head -c %d | md5sum", fifo, n))
	h.Open(proto.Open{TerminalID: "other", Cols: 80, Rows: 24, Cmd: "cat"})
	h.WaitOutput("stuck", "ready")
	h.Input("other", "before\n")
	h.WaitOutput("other", "before")

	data := randomBytes(n)
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		sendInChunks(h, "stuck", data, 1<<20)
		sendInChunks(h, "other", []byte("after\n"), 64)
	}()
	if persistent {
		waitLogCount(t, h, waitsRe, waitsBefore+1)
	} else {
		// Until re-checks on every stderr write as well as on every frame.
		h.MustUntil("the back-pressure line on stderr", func(hosttest.Snapshot) bool {
			return strings.Contains(h.Stderr(), `terminal "stuck": holding back further frames`)
		})
		// "other"'s INPUT is behind the one being held, so it cannot
		// have been read yet. (Not a promise of the persistent server,
		// which may take other terminals' frames meanwhile.)
		require.NotContains(t, h.Now().Output("other"), "after")
	}

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	sum := fmt.Sprintf("%x", md5.Sum(data))
	h.WaitOutput("stuck", sum)
	h.WaitOutput("other", "after")
	<-sent
	if !persistent {
		assert.Contains(t, h.Stderr(), `terminal "stuck": input accepted after`)
	}
	for _, c := range h.Now().Controls("stuck") {
		require.NotEqual(t, proto.TypeError, c.Type, "INPUT is never answered with ERROR: %s", c.Raw)
	}
	// Both end before the host does, as a tidy host's do.
	exitOf(t, h, "stuck")
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "other"})
	exitOf(t, h, "other")
}

// A terminal opened with credit whose child echoes (cat) stops reading
// its input once its output waits for credit. Past the input bound the
// sidecar stops reading frames, and a CREDIT the host sent right after
// its paste stayed unread: host and sidecar waited for each other for
// ever. The CREDIT behind the held INPUT is now read and applied, and the
// paste comes back whole.
func TestCreditBehindHeldInputIsTaken(t *testing.T) {
	h := start(t)
	const n = 17 << 20 // past the 16 MiB bound
	h.Open(proto.Open{TerminalID: "echo", Cols: 80, Rows: 24, Cmd: "/bin/sh", Credit: ptr(uint64(4096)),
		Args: []string{"-c", "stty raw -echo -iexten; echo ready; exec cat"}})
	h.WaitOutput("echo", "ready\n")
	data := randomBytes(n)
	go func() {
		sendInChunks(h, "echo", data, 1<<20)
		h.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "echo", Bytes: n})
	}()
	want := append([]byte("ready\n"), data...)
	s := h.MustUntil("the whole paste echoed", func(s hosttest.Snapshot) bool { return len(s.Outputs["echo"]) >= len(want) })
	got := s.Outputs["echo"]
	require.Equal(t, -1, firstDiff(got, want), "echo differs from the paste")
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "echo"})
	exitOf(t, h, "echo")
}

// A host with a keepalive pastes past the input bound into a child that
// reads nothing for a while: a PING that paces the paste is answered
// only once the INPUT before it was taken, but a keepalive's PING, which
// asks for its PONG at once ("now"), is answered as it is read, or the
// host would take the long silence for a dead connection.
func TestPingNowAnsweredWhileInputHeld(t *testing.T) {
	h := start(t)
	fifo := filepath.Join(t.TempDir(), "go")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	const n = 17 << 20 // one MiB past the bound: the PINGs after it are read ahead
	sh(h, "stuck", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; head -c %d | md5sum", fifo, n))
	h.WaitOutput("stuck", "ready")
	data := randomBytes(n)
	sendInChunks(h, "stuck", data, 1<<20)
	require.NoError(t, h.Send(proto.TypePing, []byte(`{"seq":1}`)))
	require.NoError(t, h.Send(proto.TypePing, []byte(`{"seq":2,"now":true}`)))
	pongs := func(s hosttest.Snapshot) []string {
		var b []string
		for _, f := range s.Frames {
			if f.Type == proto.TypePong {
				b = append(b, string(f.Body))
			}
		}
		return b
	}
	s := h.MustUntil("the keepalive's PONG while the INPUT waits", func(s hosttest.Snapshot) bool { return len(pongs(s)) > 0 })
	require.Equal(t, []string{`{"seq":2,"now":true}`}, pongs(s), "only the PING that asked for it is answered before the child reads")
	require.NotContains(t, s.Output("stuck"), fmt.Sprintf("%x", md5.Sum(data)), "the paste is still held")

	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	s = h.MustUntil("the paste read and the other PONG", func(s hosttest.Snapshot) bool { return len(pongs(s)) == 2 })
	require.Equal(t, []string{`{"seq":2,"now":true}`, `{"seq":1}`}, pongs(s))
	h.WaitOutput("stuck", fmt.Sprintf("%x", md5.Sum(data)))
	exitOf(t, h, "stuck")
}

// The child whose INPUT the sidecar holds back dies: the wait ends, that
// INPUT is dropped (nothing would read it), and stderr says so, not that
// it was accepted.
func TestInputHeldForADeadChildIsDropped(t *testing.T) {
	plainOnly(t, "the plain sidecar's stderr")
	h := start(t)
	sh(h, "stuck", "stty raw -echo -iexten; echo ready; exec sleep 100000")
	pid := openedPID(t, h, "stuck")
	h.WaitOutput("stuck", "ready")
	go sendInChunks(h, "stuck", randomBytes(17<<20), 1<<20)
	h.MustUntil("the back-pressure line on stderr", func(hosttest.Snapshot) bool {
		return strings.Contains(h.Stderr(), `terminal "stuck": holding back further frames`)
	})
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	exitOf(t, h, "stuck")
	h.MustUntil("the drop on stderr", func(hosttest.Snapshot) bool {
		return strings.Contains(h.Stderr(), `terminal "stuck": input dropped after`)
	})
	require.NotContains(t, h.Stderr(), `terminal "stuck": input accepted after`)
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n), 42})
	r.Read(b)
	return b
}

func sendInChunks(h *hosttest.Host, id string, data []byte, size int) {
	for len(data) > 0 {
		k := min(size, len(data))
		if err := h.SendRaw(proto.AppendDataFrame(nil, proto.TypeInput, id, data[:k])); err != nil {
			return // the test fails on the missing echo
		}
		data = data[k:]
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

func TestResizeChangesSizeAndSignalsChild(t *testing.T) {
	h := start(t)
	sh(h, "r", `trap 'echo "winch $(stty size)"' WINCH; echo ready; while :; do sleep 1 & wait $!; done`)
	h.WaitOutput("r", "ready")
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "r", Cols: 132, Rows: 43})
	h.WaitOutput("r", "winch 43 132")
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "r", Cols: 0, Rows: 0})
	h.WaitOutput("r", "winch 1 1")
}

// TestResizeSetsPixelSize: RESIZE's pixelWidth and pixelHeight reach the
// winsize (ws_xpixel, ws_ypixel), which programs read with TIOCGWINSZ; a
// RESIZE without them sets 0.
func TestResizeSetsPixelSize(t *testing.T) {
	h := start(t)
	sh(h, "p", `trap 'echo winch' WINCH; echo "tty $(tty)"; while :; do sleep 1 & wait $!; done`)
	tty := strings.TrimSpace(strings.TrimPrefix(h.WaitOutput("p", "\n").Output("p"), "tty "))
	f, err := os.OpenFile(tty, os.O_RDONLY|unix.O_NOCTTY, 0)
	require.NoError(t, err)
	defer f.Close()
	winsize := func() unix.Winsize {
		ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
		require.NoError(t, err)
		return *ws
	}
	// The same cols and rows: the pixels alone change the winsize, and
	// the kernel signals the change.
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "p", Cols: 80, Rows: 24, PixelWidth: 1000, PixelHeight: 600})
	h.WaitOutput("p", "winch")
	assert.Equal(t, unix.Winsize{Row: 24, Col: 80, Xpixel: 1000, Ypixel: 600}, winsize())
	h.SendJSON(proto.TypeResize, proto.Resize{TerminalID: "p", Cols: 100, Rows: 30})
	h.WaitOutput("p", "winch\r\nwinch")
	assert.Equal(t, unix.Winsize{Row: 30, Col: 100}, winsize())
}

func TestCreditGatesReads(t *testing.T) {
	h := start(t)
	const total = 200000
	granted := 1000
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a", total)}, Credit: ptr(uint64(granted))})
	// Every snapshot must respect the budget; Until sees each frame.
	budget := func(s hosttest.Snapshot) {
		require.LessOrEqual(t, len(s.Output("c")), granted, "read past the credit")
	}
	h.MustUntil("the first budget to be used", func(s hosttest.Snapshot) bool {
		budget(s)
		return len(s.Output("c")) == granted
	})
	for granted < total {
		step := 7919 // odd sizes: reads must be cut to the budget exactly
		h.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "c", Bytes: uint64(step)})
		granted += step
		want := min(granted, total)
		h.MustUntil(fmt.Sprintf("output to reach %d", want), func(s hosttest.Snapshot) bool {
			budget(s)
			return len(s.Output("c")) == want
		})
	}
	assert.EqualValues(t, 0, exitOf(t, h, "c").Fields["exitCode"])
	assert.Equal(t, strings.Repeat("a", total), h.Now().Output("c"))
}

func TestCreditIgnoredByUncreditedTerminal(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "u", Cols: 80, Rows: 24, Cmd: "cat"})
	openedPID(t, h, "u")
	h.SendJSON(proto.TypeCredit, proto.Credit{TerminalID: "u", Bytes: 1})
	h.Input("u", "more than one byte\n")
	h.WaitOutput("u", "more than one byte\r\nmore than one byte")
}

func TestCloseDrainsParkedTerminal(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "p", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", "yes"}, Credit: ptr(uint64(10))})
	h.MustUntil("the budget used", func(s hosttest.Snapshot) bool { return len(s.Output("p")) == 10 })
	h.SendJSON(proto.TypeClose, proto.Close{TerminalID: "p"})
	e := exitOf(t, h, "p")
	assert.Equal(t, "SIGHUP", e.Fields["signal"], e.Raw)
}

// A host that closes stdin while its INPUT waits for a child that reads
// nothing (past the 16 MiB bound) asks for the end: the sidecar kills
// every terminal, sends their EXITs and exits. The dispatch loop waited
// for the child instead, and the sidecar never ended.
func TestStdinClosedWhileInputHeld(t *testing.T) {
	plainOnly(t, "through --persist the end of stdin leaves the terminals detached")
	h := start(t)
	h.Open(proto.Open{TerminalID: "stuck", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", "stty raw -echo -iexten; echo ready; exec sleep 1000"}})
	h.WaitOutput("stuck", "ready\n")
	sendInChunks(h, "stuck", randomBytes(17<<20), 1<<20)
	h.MustUntil("the paste held back", func(hosttest.Snapshot) bool {
		return strings.Contains(h.Stderr(), `terminal "stuck": holding back further frames`)
	})
	h.CloseStdin()
	if _, err := h.WaitExit(hosttest.Timeout); err != nil {
		t.Fatalf("the sidecar, its stdin closed while an INPUT waited: %v", err)
	}
	exitOf(t, h, "stuck")
}
