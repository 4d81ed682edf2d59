//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package sidecar

import (
	"testing"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRealTimeSignalIsNamed: a child killed by a real-time signal gets
// EXIT with kill -l's name for it (SIGRTMIN+3 is 37), and SIGNAL takes
// those names as well as numbers.
func TestRealTimeSignalIsNamed(t *testing.T) {
	for _, tc := range []struct {
		id, signal, name string
		code             float64
	}{
		{"by-number", "37", "SIGRTMIN+3", 128 + 37},
		{"by-name", "SIGRTMIN+3", "SIGRTMIN+3", 128 + 37},
		{"top", "rtmax", "SIGRTMAX", 128 + 64},
		{"from-the-top", "SIGRTMAX-2", "SIGRTMAX-2", 128 + 62},
	} {
		t.Run(tc.id, func(t *testing.T) {
			h := startInproc(t, nil)
			h.sendJSON(proto.TypeOpen, openCmd(tc.id, "sh", "-c", "echo ready; exec sleep 100"))
			h.output(tc.id, "ready")
			h.sendJSON(proto.TypeSignal, proto.Signal{TerminalID: tc.id, Signal: tc.signal, Target: proto.SignalChild})
			// EXIT, or the ERROR that refuses the SIGNAL.
			var exit map[string]any
			h.until("EXIT for "+tc.id, func(fs []seen, _ string) bool {
				for _, f := range fs {
					if f.id == tc.id && (f.typ == proto.TypeExit || f.typ == proto.TypeError) {
						require.Equal(t, proto.TypeExit, f.typ, "SIGNAL %q answered %v", tc.signal, f.fields)
						exit = f.fields
						return true
					}
				}
				return false
			})
			assert.Equal(t, tc.name, exit["signal"], "EXIT %v", exit)
			assert.Equal(t, tc.code, exit["exitCode"], "EXIT %v", exit)
		})
	}
}
