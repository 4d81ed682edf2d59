package sidecar_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
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

// A child that never reads must not hold back frames for other terminals,
// and its pending input is bounded.
func TestStuckChildDoesNotStallOthers(t *testing.T) {
	h := start(t)
	// Non-canonical mode: once the PTY's input buffer is full, writes block
	// (a canonical-mode line discipline would discard instead).
	sh(h, "stuck", "stty raw -echo; echo ready; exec sleep 1000")
	h.WaitOutput("stuck", "ready")
	// Far more than the PTY's input buffer: the input writer blocks.
	chunk := strings.Repeat("x", 64<<10)
	for i := 0; i < 8; i++ {
		h.Input("stuck", chunk)
	}
	h.Open(proto.Open{TerminalID: "other", Cols: 80, Rows: 24, Cmd: "cat"})
	h.Input("other", "alive\n")
	h.WaitOutput("other", "alive")

	// Past the 1 MiB bound the INPUT is refused with an ERROR.
	for i := 0; i < 16; i++ {
		h.Input("stuck", chunk)
	}
	e := h.WaitControl(proto.TypeError, "stuck")
	assert.Contains(t, e.Fields["message"], "input queue full")
	h.Input("other", "still\n")
	h.WaitOutput("other", "still")
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
