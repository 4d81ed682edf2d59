//go:build unix

package sidecar_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/record"
	"github.com/stretchr/testify/assert"
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

// A recording whose write fails (here the file size limit, EFBIG, as a
// full disk gives ENOSPC) stops; the sidecar keeps serving, and the file
// is cut back to its last whole record, so that it reads to its end: it
// ended inside a record, which readers take for a killed sidecar's and
// refused whole. The log line says how many records it holds.
func TestRecordWriteFailureLeavesWholeRecords(t *testing.T) {
	plainOnly(t, "--record is refused with --persist")
	t.Parallel()
	p := filepath.Join(t.TempDir(), "session.fixture")
	// ulimit -f counts 512-byte blocks: 100 KiB, a fraction of the output.
	cmd := exec.Command("/bin/sh", "-c", `ulimit -f 200 && exec "$@"`, "sh", sidecarBin, "--record", p)
	h := hosttest.StartCmd(t, cmd)
	sh(h, "big", "head -c 300000 /dev/zero | tr '\\0' x; echo; echo DONE")
	exitOf(t, h, "big")
	require.Contains(t, h.Now().Output("big"), "DONE", "the terminal was served to its end")
	lines := h.WaitStderr(regexp.MustCompile(`(?i)recording stopped: .*file too large; the recording holds (\d+) whole records`))
	whole, err := strconv.Atoi(lines[1])
	require.NoError(t, err)
	h.CloseStdin()
	code, err := h.WaitExit(10 * time.Second)
	require.NoError(t, err)
	require.Equal(t, 0, code)

	recs, err := record.ReadFile(p)
	require.NoError(t, err, "the recording reads to its end")
	require.Len(t, recs, whole, "as many records as the log line says")
	require.Greater(t, whole, 1)
	assert.Equal(t, proto.TypeOpen, recs[0].Frame.Type)
}
