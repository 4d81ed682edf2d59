//go:build unix

package ptyhost

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventually polls cond every 5 ms until it holds or 10 s pass.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// reaped waits for p's exit and returns its status.
func reaped(t *testing.T, p *Process) Status {
	t.Helper()
	require.NoError(t, p.WaitExit())
	st, err := p.Reap()
	require.NoError(t, err)
	return st
}

// The foreground group of a fresh terminal is the child's own; its name
// is the program's once it has executed, and SignalForeground reaches it.
func TestForegroundProcessAndSignal(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "exec sleep 1000"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	var pgrp int
	var name string
	eventually(t, "the foreground process to be sleep", func() bool {
		pgrp, name, err = p.ForegroundProcess()
		return err == nil && name == "sleep"
	})
	assert.Equal(t, p.Pid(), pgrp)
	require.NoError(t, p.SignalForeground(syscall.SIGTERM))
	st := reaped(t, p)
	assert.Equal(t, "SIGTERM", st.SignalName())
}

// KillIdentified finds a terminal's processes by its identity alone:
// the shell and a job in a process group of its own.
func TestKillIdentifiedEndsTheSession(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "set -m; sleep 1000 & echo job $!; wait"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer p.Close()
	var out strings.Builder
	buf := make([]byte, 256)
	for !strings.Contains(out.String(), "\n") {
		n, err := p.Read(buf)
		require.NoError(t, err)
		out.Write(buf[:n])
	}
	fields := strings.Fields(out.String())
	require.Len(t, fields, 2, "output %q", out.String())
	job, err := strconv.Atoi(fields[1])
	require.NoError(t, err)

	id := p.Identity()
	assert.Equal(t, p.Pid(), id.SID)
	assert.NotEmpty(t, id.PTS)
	assert.NotZero(t, id.Start, "the leader's start time, which tells a reused pid apart")
	assert.GreaterOrEqual(t, KillIdentified([]Identity{id}), 2, "the shell and its job")
	// The shell dies of the SIGKILL, or, when its job's came first and
	// it ran between the two, exits with the job's status: 137 either way.
	st := reaped(t, p)
	assert.Equal(t, 128+9, st.Code, "status %+v", st)
	eventually(t, "the job to be gone", func() bool {
		return syscall.Kill(job, 0) == syscall.ESRCH
	})
}

// The input states read as the words that logs and answers use.
func TestInputStateNames(t *testing.T) {
	for s, want := range map[InputState]string{InputWaiting: "waiting", InputBusy: "busy", InputUnknown: "unknown", InputState(7): "unknown"} {
		assert.Equal(t, want, s.String())
	}
}

// Hangup ends a Read that is waiting on a terminal with nothing to say,
// and hangs the terminal up for its program.
func TestHangupEndsABlockedRead(t *testing.T) {
	p, err := Start(Config{Cmd: "sleep", Args: []string{"1000"}, Cols: 80, Rows: 24})
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := p.Read(make([]byte, 16))
		done <- err
	}()
	require.NoError(t, p.Hangup())
	select {
	case err := <-done:
		require.Error(t, err, "Read after Hangup")
	case <-time.After(10 * time.Second):
		t.Fatal("Read did not return after Hangup")
	}
	// The hang-up reaches the program too, as closing a terminal does.
	assert.Equal(t, "SIGHUP", reaped(t, p).SignalName())
}
