//go:build unix

package sidecar_test

import (
	"strings"
	"testing"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Frames written together with their OPEN (as hosts do) reach a spawn
// that is most likely still in flight; either way they must all apply.
// spawn_test.go holds the spawn to make sure of it.
func TestFramesRightAfterOpenApply(t *testing.T) {
	h := start(t)
	open := func(o proto.Open) []byte {
		return proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(o))
	}
	ctl := func(typ proto.Type, v any) []byte { return proto.AppendFrame(nil, typ, proto.Marshal(v)) }
	var b []byte
	// INPUT after OPEN echoes back exactly.
	b = append(b, open(proto.Open{TerminalID: "in", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", `read line; echo "line=$line size=$(stty size)"`}})...)
	b = append(b, ctl(proto.TypeResize, proto.Resize{TerminalID: "in", Cols: 90, Rows: 20})...)
	b = proto.AppendDataFrame(b, proto.TypeInput, "in", []byte("exact\n"))
	// CREDIT after an OPEN with credit 0 lets the output through.
	b = append(b, open(proto.Open{TerminalID: "cr", Cols: 80, Rows: 24, Cmd: "/bin/sh",
		Args: []string{"-c", "echo credited"}, Credit: ptr(uint64(0))})...)
	b = append(b, ctl(proto.TypeCredit, proto.Credit{TerminalID: "cr", Bytes: 4096})...)
	// CLOSE after OPEN ends it.
	b = append(b, open(proto.Open{TerminalID: "cl", Cols: 80, Rows: 24, Cmd: "cat"})...)
	b = append(b, ctl(proto.TypeClose, proto.Close{TerminalID: "cl"})...)
	require.NoError(t, h.SendRaw(b))

	h.WaitOutput("in", "line=exact size=20 90")
	assert.Equal(t, 1, strings.Count(h.Now().Output("in"), "exact\r\n"), "%q", h.Now().Output("in"))
	h.WaitOutput("cr", "credited")
	assert.Equal(t, "SIGHUP", exitOf(t, h, "cl").Fields["signal"])
	for _, id := range []string{"in", "cr", "cl"} {
		cs := h.Now().Controls(id)
		require.NotEmpty(t, cs, id)
		assert.Equal(t, proto.TypeOpened, cs[0].Type, "first control frame of %s", id)
	}
}

// A host that writes its OPENs and closes stdin at once (a harness piping
// a fixture in) gets, for every OPEN, OPENED and then EXIT, as from a
// sidecar that spawns in its read loop; the sidecar exits 0 and no child
// survives it.
func TestOpenThenEndOfInput(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar ends its terminals when its host goes; a persistent server keeps them")
	for round := 0; round < 3; round++ {
		h := start(t)
		var b []byte
		ids := []string{"a", "b", "c", "d", "e", "f"}
		for _, id := range ids {
			b = append(b, proto.AppendFrame(nil, proto.TypeOpen, proto.Marshal(proto.Open{
				TerminalID: id, Cols: 80, Rows: 24, Cmd: "cat"}))...)
		}
		require.NoError(t, h.SendRaw(b))
		h.CloseStdin()
		code, err := h.WaitExit(hosttest.Timeout)
		require.NoError(t, err)
		assert.Equal(t, 0, code, "exit status")
		s := h.Now()
		for _, id := range ids {
			var types []proto.Type
			for _, c := range s.Controls(id) {
				types = append(types, c.Type)
			}
			require.Equal(t, []proto.Type{proto.TypeOpened, proto.TypeExit}, types, "round %d, %s", round, id)
			pid := int(s.Controls(id)[0].Fields["pid"].(float64))
			assert.True(t, hosttest.WaitGone(pid, hosttest.Timeout), "pid %d of %s outlived the sidecar", pid, id)
		}
	}
}
