package sidecar

import (
	"testing"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
)

// TestBreakNotSupportedOnWindows: SIGBREAK, which node's kill sends on
// Windows, is answered as a signal the pseudo-console cannot deliver, not
// as an unknown name, and the terminal runs on.
func TestBreakNotSupportedOnWindows(t *testing.T) {
	h := startInproc(t, nil)
	h.sendJSON(proto.TypeOpen, openCmd("b", "cmd.exe"))
	h.control(proto.TypeOpened, "b")
	h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: "b", Signal: "SIGBREAK", Target: proto.SignalChild})
	e := h.control(proto.TypeError, "b")
	assert.Equal(t, "SIGNAL SIGBREAK: signal 21: not supported on Windows", e["message"])
	// Still running: a typed command is run (the echo of the line holds
	// %OS%, not its value).
	h.input("b", "echo %OS%\r")
	h.output("b", "Windows_NT")
	h.sendJSON(proto.TypeClose, proto.Close{TerminalID: "b"})
	h.control(proto.TypeExit, "b")
}
