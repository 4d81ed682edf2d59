//go:build unix

package ptyhost

import (
	"bytes"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// startWithJobs starts a shell with two background jobs in their own
// process groups and waits until both run.
func startWithJobs(t *testing.T) *Process {
	t.Helper()
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "set -m; sleep 1000 & sleep 1000 & echo jobs-started; wait"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	var seen []byte
	buf := make([]byte, 256)
	for !bytes.Contains(seen, []byte("jobs-started")) {
		n, err := p.Read(buf)
		require.NoError(t, err, "output so far: %q", seen)
		seen = append(seen, buf[:n]...)
	}
	return p
}

// Terminals ending together share process-table passes; each still gets
// exactly its own session's processes, and a session nobody asked about
// is left alone.
func TestKillSessionManyAtOnce(t *testing.T) {
	const n = 12
	procs := make([]*Process, n)
	for i := range procs {
		procs[i] = startWithJobs(t)
	}
	bystander := startWithJobs(t)
	defer func() {
		bystander.SignalGroup(syscall.SIGKILL)
		bystander.KillSession(syscall.SIGKILL, false)
		bystander.Reap()
		bystander.Close()
	}()

	counts := make([]int, n)
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			counts[i] = p.KillSession(syscall.SIGKILL, false)
		}()
	}
	wg.Wait()
	for i, p := range procs {
		assert.Equal(t, 2, counts[i], "terminal %d: processes signalled", i)
		// The shell's wait returns once both jobs died.
		done := make(chan error, 1)
		go func() { done <- p.WaitExit() }()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("terminal %d: the shell did not see its jobs die", i)
		}
		st, err := p.Reap()
		require.NoError(t, err)
		assert.Equal(t, 0, st.Code, "terminal %d", i)
		p.Close()
	}
	// The bystander's jobs still run: its shell is still waiting for them.
	require.NoError(t, bystander.Signal(syscall.Signal(0)))
	left, err := sessionProcs(map[int]bool{bystander.Pid(): true})
	require.NoError(t, err)
	var live []string
	for _, q := range left {
		if !q.zombie && q.pid != bystander.Pid() {
			live = append(live, "x")
		}
	}
	assert.Equal(t, "x x", strings.Join(live, " "), "the bystander's two jobs")
}
