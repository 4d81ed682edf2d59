package sidecar_test

import (
	"encoding/json"
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

	// Read nothing until the pipe is full (our copy of its write end is
	// not writable): the sidecar's next write blocks.
	deadline := time.Now().Add(hosttest.Timeout)
	for {
		p := []unix.PollFd{{Fd: int32(outW.Fd()), Events: unix.POLLOUT}}
		_, err := unix.Poll(p, 0)
		require.NoError(t, err)
		if p[0].Revents&unix.POLLOUT == 0 {
			break
		}
		require.False(t, time.Now().After(deadline), "stdout's pipe not full after %v", hosttest.Timeout)
		time.Sleep(10 * time.Millisecond)
	}
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
