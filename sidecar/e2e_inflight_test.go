package sidecar_test

import (
	"strings"
	"testing"

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
