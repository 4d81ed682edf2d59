package sidecar_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A host that closes stdin and waits for the sidecar to exit before it
// reads what is left on stdout (or never reads it) must see it exit, as
// the seed protocol says ("when daemon stdin closes, the sidecar kills
// all known terminals and exits"). Before, the shutdown waited for ever
// for the stream's holder, blocked writing to the full pipe: the sidecar
// never exited, and its terminals stayed unreaped. Now it gives up once a
// write has been blocked for the shutdown bound (10 s), says so, and exits
// with status 1.
func TestExitsWhenTheHostClosesStdinAndReadsNothing(t *testing.T) {
	plainOnly(t, "shutdown: a persistent server keeps its terminals when its host goes")
	cmd := exec.Command(sidecarBin, sidecarArgs...)
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	outR, outW, err := os.Pipe()
	require.NoError(t, err)
	defer outR.Close()
	cmd.Stdout = outW
	errFile, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, err)
	defer errFile.Close()
	cmd.Stderr = errFile
	stderr := func() string {
		b, _ := os.ReadFile(errFile.Name())
		return string(b)
	}
	require.NoError(t, cmd.Start())
	defer outW.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-exited
	}()

	open, err := json.Marshal(proto.Open{TerminalID: "flood", Cols: 80, Rows: 24, Cmd: "yes"})
	require.NoError(t, err)
	_, err = in.Write(proto.AppendFrame(nil, proto.TypeOpen, open))
	require.NoError(t, err)

	// Read nothing, and fill what room the pipe has left ourselves: its
	// capacity is not ours to assume (a user with many pipes open gets
	// pipes of one or two pages, and poll calls such a pipe full while the
	// sidecar's small frames still fit in its last page). Once not one
	// byte more fits, the EXIT the shutdown must write blocks for certain.
	waitForOutput(t, outW)
	fillPipe(t, outW)
	outW.Close()
	require.NoError(t, in.Close())

	select {
	case err := <-exited:
		exited <- err
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, "stderr:\n%s", stderr())
		require.Equal(t, 1, ee.ExitCode(), "stderr:\n%s", stderr())
	case <-time.After(45 * time.Second):
		t.Fatalf("the sidecar still runs 45 s after its host closed stdin; stderr:\n%s", stderr())
	}
	require.True(t, strings.Contains(stderr(), "the host read nothing of it for 10s while we shut down"), "stderr:\n%s", stderr())
}

// waitForOutput waits until the sidecar has written something to the pipe
// whose write end is w (its OPENED at least), so that the terminal exists.
func waitForOutput(t *testing.T, w *os.File) {
	t.Helper()
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		n, err := unix.IoctlGetInt(int(w.Fd()), unix.TIOCINQ)
		require.NoError(t, err)
		if n > 0 {
			return
		}
		require.False(t, time.Now().After(deadline), "the sidecar wrote nothing in %v", hosttest.Timeout)
		time.Sleep(10 * time.Millisecond)
	}
}

// fillPipe writes filler into the pipe whose write end is w until it
// takes not one byte more. It writes through a file description of its
// own, opened non-blocking, so that the sidecar's (shared with w) stays
// blocking.
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	fd, err := unix.Open(fmt.Sprintf("/proc/self/fd/%d", w.Fd()), unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(fd)
	chunk := make([]byte, 4096)
	for _, size := range []int{len(chunk), 1} {
		for {
			_, err := unix.Write(fd, chunk[:size])
			if err == unix.EAGAIN {
				break
			}
			require.NoError(t, err)
		}
	}
}
