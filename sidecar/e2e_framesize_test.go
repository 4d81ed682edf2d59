//go:build unix

package sidecar_test

import (
	"testing"

	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// A flood reaches the host in OUTPUT frames of at most 64 KiB on the wire,
// header and id included (PROTOCOL.md, back-pressure and batching), so
// that a host reading 64 KiB at a time never has to join one from two
// reads; nothing is lost to the cap.
func TestOutputFramesFitOneHostRead(t *testing.T) {
	const frameSize = 64 << 10
	h := start(t)
	// tr writes faster than one frame is handed on, so full-size frames
	// are likely; the bound must hold whatever the timing.
	sh(h, "flood", "stty raw -echo; head -c 4194304 /dev/zero | tr '\\0' x")
	exitOf(t, h, "flood")
	s := h.Now()
	require.Equal(t, 4<<20, len(s.Output("flood")))
	for _, f := range s.Frames {
		if f.Type != proto.TypeOutput {
			continue
		}
		require.LessOrEqual(t, proto.HeaderSize+len(f.Body), frameSize, "an OUTPUT frame larger than one host read")
	}
}
