//go:build unix

package sidecar_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// A recording holds every INPUT frame, so every key typed into every
// terminal, passwords included. An existing file of ours that other users
// may read is made private before it is written (the sidecar says so on
// stderr). Through --persist, --record is refused whole (a usage error,
// exit 2, before any server is reached), and the file is left as it was.
func TestRecordMakesReadableFilePrivate(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "session.fixture")
	require.NoError(t, os.WriteFile(p, []byte("before\n"), 0o600))
	require.NoError(t, os.Chmod(p, 0o644))

	h := hosttest.Start(t, sidecarBin, append([]string{"--record", p}, sidecarArgs...)...)
	if len(sidecarArgs) > 0 {
		h.WaitStderr(regexp.MustCompile(`--record is not available with --persist`))
		code, err := h.WaitExit(10 * time.Second)
		require.NoError(t, err)
		require.Equal(t, 2, code)
		require.Empty(t, h.Now().Frames, "nothing on stdout but frames, and no frame")
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Equal(t, "before\n", string(b), "the file was written")
		return
	}
	h.WaitStderr(regexp.MustCompile(`--record ` + regexp.QuoteMeta(p) + `: other users may read or write it \(mode 0644\); it is made private \(0600\)`))
	sh(h, "t1", "read line; echo got $line")
	h.WaitControl(proto.TypeOpened, "t1")
	h.Input("t1", "hunter2\n")
	h.WaitOutput("t1", "got hunter2")
	h.CloseStdin()
	code, err := h.WaitExit(10 * time.Second)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode(), "the recording's mode")
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(b), "hunter2", "the recording holds the input")
}
