//go:build unix

package sidecar_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/stretchr/testify/require"
)

// A PING answered at once ("now") while INPUT waits is read by the
// look-ahead, not by the dispatch loop: the recording (--record) still
// holds each PING once, in the order the host sent them, and each PONG
// after its PING, the keepalive's before the pacing one.
func TestRecordingOfAPingAnsweredAtOnce(t *testing.T) {
	plainOnly(t, "--record is refused with --persist")
	p := filepath.Join(t.TempDir(), "session.fixture")
	h := hosttest.Start(t, sidecarBin, "--record", p)
	fifo := filepath.Join(t.TempDir(), "go")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	const n = 17 << 20 // one MiB past the bound: the PINGs are read ahead
	sh(h, "stuck", fmt.Sprintf("stty raw -echo -iexten; echo ready; cat %s >/dev/null; head -c %d >/dev/null; echo DONE", fifo, n))
	h.WaitOutput("stuck", "ready")
	sendInChunks(h, "stuck", randomBytes(n), 1<<20)
	require.NoError(t, h.Send(proto.TypePing, []byte(`{"seq":1}`)))
	require.NoError(t, h.Send(proto.TypePing, []byte(`{"seq":2,"now":true}`)))
	h.MustUntil("the keepalive's PONG", func(s hosttest.Snapshot) bool {
		for _, f := range s.Frames {
			if f.Type == proto.TypePong {
				return true
			}
		}
		return false
	})
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	h.WaitOutput("stuck", "DONE")
	exitOf(t, h, "stuck")
	h.CloseStdin()
	code, err := h.WaitExit(10 * time.Second)
	require.NoError(t, err)
	require.Equal(t, 0, code)

	recs, err := record.ReadFile(p)
	require.NoError(t, err)
	var got []string
	inputs := 0
	for _, r := range recs {
		switch {
		case r.Kind == record.FromHost && r.Frame.Type == proto.TypeInput:
			inputs++
		case r.Frame.Type == proto.TypePing || r.Frame.Type == proto.TypePong:
			got = append(got, fmt.Sprintf("%s %s after %d INPUTs", r.Kind, r.Frame.Body, inputs))
		}
	}
	require.Equal(t, []string{
		`host {"seq":1} after 17 INPUTs`,
		`host {"seq":2,"now":true} after 17 INPUTs`,
		`sidecar {"seq":2,"now":true} after 17 INPUTs`,
		`sidecar {"seq":1} after 17 INPUTs`,
	}, got)
}
