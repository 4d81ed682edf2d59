//go:build unix

package ptyhost

import (
	"bytes"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBackendMatchesBuild(t *testing.T) {
	assert.Equal(t, wantBackend, Backend())
}

// Children that exit together send SIGCHLDs that coalesce; every exit must
// still be noticed, with its own status.
func TestManyChildrenExitingAtOnce(t *testing.T) {
	const n = 24
	procs := make([]*Process, n)
	for i := range procs {
		p, err := Start(Config{Cmd: "sh", Args: []string{"-c", fmt.Sprintf("read x; exit %d", i)}, Cols: 80, Rows: 24})
		require.NoError(t, err)
		defer p.Close()
		procs[i] = p
	}
	for _, p := range procs {
		_, err := p.Write([]byte("\n"))
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := p.ExitStatus()
			assert.NoError(t, err)
			assert.Equal(t, i, st.Code)
			st, err = p.Reap()
			assert.NoError(t, err)
			assert.Equal(t, i, st.Code)
		}()
	}
	wg.Wait()
}

// Watching our children's exits must not take the exit status of children
// that other code in the process starts and waits for (os/exec).
func TestOtherChildrenStillWaitable(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "read x"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	for i := 0; i < 20; i++ {
		err := exec.Command("sh", "-c", "exit 7").Run()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee)
		assert.Equal(t, 7, ee.ExitCode())
	}
	_, err = p.Write([]byte("\n"))
	require.NoError(t, err)
	require.NoError(t, p.WaitExit())
	st, err := p.Reap()
	require.NoError(t, err)
	assert.Equal(t, 0, st.Code)
}

// WaitExit returns once the Process is closed, even if the child lives on.
func TestWaitExitEndsOnClose(t *testing.T) {
	// The child must outlive the Close: closing the master hangs the
	// terminal up, which would end a child that reads it or takes SIGHUP,
	// and then WaitExit could rightly report that exit instead.
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "trap '' HUP; echo ready; exec sleep 1000"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	var out []byte
	buf := make([]byte, 64)
	for !bytes.Contains(out, []byte("ready")) {
		n, err := p.Read(buf)
		require.NoError(t, err, "before the child was ready: %q", out)
		out = append(out, buf[:n]...)
	}
	done := make(chan error, 1)
	go func() { done <- p.WaitExit() }()
	require.NoError(t, p.Close())
	assert.Error(t, <-done)
	p.SignalGroup(syscall.SIGKILL)
	p.Reap()
}
