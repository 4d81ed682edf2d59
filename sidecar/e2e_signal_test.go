//go:build unix

package sidecar_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOpenedListsFeatures(t *testing.T) {
	h := start(t)
	sh(h, "f", "exit 0")
	c := h.WaitControl(proto.TypeOpened, "f")
	want := []any{"signal", "foreground"}
	if len(sidecarArgs) > 0 {
		want = append(want, "persist", "upgrade")
	}
	assert.ElementsMatch(t, want, c.Fields["features"], c.Raw)
	exitOf(t, h, "f")
}

func TestSignalReachesTrap(t *testing.T) {
	h := start(t)
	sh(h, "s", `trap 'echo "got INT"; exit 7' INT; echo ready; while :; do sleep 1; done`)
	h.WaitOutput("s", "ready")
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "s", Signal: "SIGINT"})
	h.WaitOutput("s", "got INT")
	assert.EqualValues(t, 7, exitOf(t, h, "s").Fields["exitCode"])
}

// A number, a name without SIG and in lower case all name a signal.
func TestSignalSpellings(t *testing.T) {
	h := start(t)
	sh(h, "n", `trap 'echo "got USR1"' USR1; trap 'echo "got TERM"; exit 3' TERM; echo ready; while :; do sleep 1; done`)
	h.WaitOutput("n", "ready")
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "n", "signal": "usr1"})
	h.WaitOutput("n", "got USR1")
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "n", "signal": 15})
	h.WaitOutput("n", "got TERM")
	assert.EqualValues(t, 3, exitOf(t, h, "n").Fields["exitCode"])
}

// foreground asks for the foreground process until want(info) holds.
// Each question is sent once the previous answer arrived, so this waits on
// replies, bounded by the host's deadline.
func foreground(t *testing.T, h *hosttest.Host, id string, want func(proto.ForegroundInfo) bool) proto.ForegroundInfo {
	t.Helper()
	count := func(s hosttest.Snapshot) int {
		n := 0
		for _, c := range s.Controls(id) {
			if c.Type == proto.TypeForegroundInfo {
				n++
			}
		}
		return n
	}
	base := count(h.Now())
	asked, seen := base, base
	var got proto.ForegroundInfo
	h.SendJSON(proto.TypeForeground, proto.Foreground{TerminalID: id})
	asked++
	h.MustUntil("a matching FOREGROUND reply", func(s hosttest.Snapshot) bool {
		n := 0
		for _, c := range s.Controls(id) {
			if c.Type != proto.TypeForegroundInfo {
				continue
			}
			n++
			if n <= seen {
				continue
			}
			seen = n
			got = proto.ForegroundInfo{}
			require.NoError(t, json.Unmarshal([]byte(c.Raw), &got))
			if want(got) {
				return true
			}
		}
		if seen == asked {
			h.SendJSON(proto.TypeForeground, proto.Foreground{TerminalID: id})
			asked++
		}
		return false
	})
	return got
}

// With job control on, a command runs in a process group of its own that
// becomes the foreground: SIGNAL reaches it and not the shell, and
// FOREGROUND names it.
func TestSignalAndForegroundFollowTheForegroundGroup(t *testing.T) {
	h := start(t)
	// The trap would show if the signal reached the shell too. (Not
	// SIGINT: dash runs its INT trap whenever a job dies of SIGINT.)
	sh(h, "j", `trap 'echo "shell got TERM"' TERM; set -m; echo ready; sleep 1000; echo "sleep ended $?"; exec sleep 1001`)
	shell := openedPID(t, h, "j")
	h.WaitOutput("j", "ready")
	fg := foreground(t, h, "j", func(i proto.ForegroundInfo) bool { return i.Process == "sleep" && i.PID != shell })
	assert.NotEqual(t, shell, fg.PID)

	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "j", Signal: "SIGTERM"})
	out := h.WaitOutput("j", "sleep ended 143").Output("j")
	assert.NotContains(t, out, "shell got TERM")
	// The shell survived the signal and exec'd the second sleep, which is
	// the foreground now, under the shell's own pid.
	foreground(t, h, "j", func(i proto.ForegroundInfo) bool { return i.PID == shell && i.Process == "sleep" })
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "j", Signal: "KILL"})
	e := exitOf(t, h, "j")
	assert.Equal(t, "SIGKILL", e.Fields["signal"], e.Raw)
}

// With "target":"child" (node-pty's kill(signal)) the signal reaches the
// child alone, not the foreground job it runs: SIGKILL ends the shell
// while its sleep still has the terminal.
func TestSignalTargetChild(t *testing.T) {
	h := start(t)
	sh(h, "k", `set -m; echo ready; sleep 1000; echo "sleep ended $?"`)
	shell := openedPID(t, h, "k")
	h.WaitOutput("k", "ready")
	foreground(t, h, "k", func(i proto.ForegroundInfo) bool { return i.Process == "sleep" && i.PID != shell })
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "k", Signal: "KILL", Target: proto.SignalChild})
	e := exitOf(t, h, "k")
	assert.Equal(t, "SIGKILL", e.Fields["signal"], e.Raw)
	assert.NotContains(t, h.Now().Output("k"), "sleep ended")
}

func TestForegroundNamesArgv0(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cat"})
	pid := openedPID(t, h, "c")
	got := foreground(t, h, "c", func(proto.ForegroundInfo) bool { return true })
	assert.Equal(t, proto.ForegroundInfo{TerminalID: "c", PID: pid, Process: "cat"}, got)
}

// Bad SIGNAL frames get an ERROR for a live terminal and nothing for an
// unknown one; FOREGROUND for an unknown id gets no reply. Frames are
// dispatched in order, so the reply about the live terminal proves the
// earlier frames were handled.
func TestSignalAndForegroundBadInput(t *testing.T) {
	h := start(t)
	h.Open(proto.Open{TerminalID: "c", Cols: 80, Rows: 24, Cmd: "cat"})
	openedPID(t, h, "c")
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "c", "signal": "SIGNOPE"})
	e := h.WaitControl(proto.TypeError, "c")
	assert.Contains(t, e.Fields["message"], "Invalid signal: SIGNOPE")
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "c", "signal": "INT", "target": "group"})
	h.MustUntil("an ERROR about the unknown target", func(s hosttest.Snapshot) bool {
		for _, x := range s.Controls("c") {
			if x.Type == proto.TypeError && strings.Contains(x.Raw, `unknown target \"group\"`) {
				return true
			}
		}
		return false
	})
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "c", "signal": 99})
	h.SendJSON(proto.TypeSignal, map[string]any{"terminalId": "c"})
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "ghost", Signal: "SIGINT"})
	h.SendJSON(proto.TypeForeground, proto.Foreground{TerminalID: "ghost"})
	require.NoError(t, h.Send(proto.TypeSignal, []byte(`{"terminalId":`)))
	foreground(t, h, "c", func(proto.ForegroundInfo) bool { return true })

	s := h.Now()
	var msgs []string
	for _, c := range s.Controls("c") {
		if c.Type == proto.TypeError {
			msgs = append(msgs, c.Fields["message"].(string))
		}
	}
	require.Len(t, msgs, 4, strings.Join(msgs, "\n"))
	assert.Contains(t, msgs[2], "Invalid signal: 99")
	assert.Contains(t, msgs[3], "missing signal")
	assert.Empty(t, s.Controls("ghost"))
	// cat is unharmed.
	h.Input("c", "still here\n")
	h.WaitOutput("c", "still here\r\nstill here")
}

// A SIGNAL for an unknown id is logged on stderr (PROTOCOL.md), and
// answered with no frame.
func TestSignalUnknownIDLogged(t *testing.T) {
	plainOnly(t, "the persistent server logs its frames its own way")
	h := start(t)
	h.SendJSON(proto.TypeSignal, proto.Signal{TerminalID: "nosuch", Signal: "SIGTERM"})
	waitLog(t, h, regexp.MustCompile(`SIGNAL "SIGTERM" for unknown terminal "nosuch"`))
	assert.Empty(t, h.Now().Controls("nosuch"))
}
