//go:build linux

package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/ptyplex/ptyplex/proto"
)

// A handshake that gave up waiting on a slow sidecar (one that was
// stopped, not an old one) leaves the connection usable: its late answer
// is taken as what the sidecar is, and is no protocol error. It used to
// be taken for a peer breaking the protocol, and ended every terminal.
func TestLateHelloAnswerIsKept(t *testing.T) {
	c := startClient(t)
	term := open(t, c, OpenOptions{Cmd: "cat", Raw: true})
	out := collect(term)
	proc := c.stream().Process()
	require.NoError(t, proc.Signal(syscall.SIGSTOP))
	waitStopped(t, proc.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err := c.Hello(ctx)
	cancel()
	require.ErrorIs(t, err, ErrNoHello)
	require.NoError(t, proc.Signal(syscall.SIGCONT))
	// The HELLO answer comes before the echo of what is typed after it.
	_, err = term.Write([]byte("after\n"))
	require.NoError(t, err)
	out.waitText(t, "after")
	require.NoError(t, c.Err())
	// The late answer is kept as what the sidecar is: pacing, which
	// asks once and goes without when no answer comes in time, paces
	// the pastes that follow.
	c.mu.Lock()
	peer := c.peer
	c.mu.Unlock()
	require.NotNil(t, peer, "the late answer was not kept")
	require.True(t, c.answersPing(c.stream()), "pacing does not know the sidecar answers PING")
	// And a later handshake gets its own answer.
	ctx, cancel = context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	_, err = c.Hello(ctx)
	require.NoError(t, err)
}

// waitStopped waits until every thread of pid is stopped: kill(2)
// returns before a thread running on another CPU has stopped.
func waitStopped(t *testing.T, pid int) {
	t.Helper()
	require.Eventually(t, func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
		for _, f := range tasks {
			b, err := os.ReadFile(f)
			if err != nil {
				return false
			}
			// The state follows the command name's closing parenthesis.
			i := bytes.LastIndexByte(b, ')')
			if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
				return false
			}
		}
		return len(tasks) > 0
	}, waitBound, time.Millisecond)
}

// An Attach that gave up waiting leaves the connection usable: should the
// server attach the terminal after all, it is detached again and its
// output dropped. Its first OUTPUT used to end the connection, and every
// other terminal on it, as a protocol error.
func TestLateAttachIsDetached(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "late")
	c1, err := Persistent("late", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	kept, err := c1.Open(ctx, OpenOptions{ID: "kept", Cmd: "/bin/sh", Args: []string{"-c", "echo ready; exec cat"}})
	require.NoError(t, err)
	collect(kept).waitText(t, "ready")
	require.NoError(t, c1.Close())

	c2, err := Persistent("late", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	defer c2.Close()
	other, err := c2.Open(ctx, OpenOptions{Cmd: "cat", Raw: true})
	require.NoError(t, err)
	otherOut := collect(other)
	// A server too slow to answer in time: stopped while the ATTACH waits.
	server := serverPid(t, env, "late")
	require.NoError(t, syscall.Kill(server, syscall.SIGSTOP))
	waitStopped(t, server)
	given, giveUp := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = c2.Attach(given, "kept", 0)
	giveUp()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NoError(t, syscall.Kill(server, syscall.SIGCONT))

	// The connection goes on: the other terminal echoes, and the
	// abandoned one ends up detached, listed, with nobody holding it.
	_, err = other.Write([]byte("still here\n"))
	require.NoError(t, err)
	otherOut.waitText(t, "still here")
	require.Eventually(t, func() bool {
		l, err := c2.List(ctx)
		if err != nil {
			return false
		}
		for _, e := range l {
			if e.TerminalID == "kept" {
				return !e.Attached
			}
		}
		return false
	}, waitBound, 10*time.Millisecond)
	require.NoError(t, c2.Err())
	// Its id is free again on this connection.
	again, err := c2.Attach(ctx, "kept", 0)
	require.NoError(t, err)
	collect(again).waitText(t, "ready")
}

// serverPid asks the kernel who listens on persistent server name's
// socket, in the runtime directory of env.
func serverPid(t *testing.T, env []string, name string) int {
	t.Helper()
	dir := ""
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PTYPLEX_RUNTIME_DIR="); ok {
			dir = v
		}
	}
	conn, err := net.Dial("unix", filepath.Join(dir, "sidecar", name+".sock"))
	require.NoError(t, err)
	defer conn.Close()
	rc, err := conn.(*net.UnixConn).SyscallConn()
	require.NoError(t, err)
	var cred *unix.Ucred
	require.NoError(t, rc.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}))
	require.NoError(t, err)
	return int(cred.Pid)
}

// A sidecar that stops reading its input (a child that does not read, 16
// MiB queued for it) blocks a Write; Open and Terminal.Close must not wait
// behind it without bound, and Client.Close must end. They all waited on
// the blocked write for as long as the child did not read.
func TestBlockedWriteHoldsNothingUp(t *testing.T) {
	logs := newLogWatch(t)
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: logs})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	stuck := open(t, c, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "stty raw -echo; echo raw; exec sleep 1000"}, Raw: true})
	collect(stuck).waitText(t, "raw")
	wrote := make(chan error, 1)
	go func() {
		_, err := stuck.Write(make([]byte, 24<<20))
		wrote <- err
	}()
	// Wait until the write is blocked: the stream's write lock stays
	// taken.
	logs.waitFor(t, holdingBack(stuck.ID()))
	waitWriteBlocked(t, c)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err = c.Open(ctx, OpenOptions{Cmd: "true"})
	require.ErrorIs(t, err, context.DeadlineExceeded)

	// Close returns at once, and hangs the child up itself (the CLOSE
	// cannot reach the sidecar): that ends the sidecar's wait, the CLOSE
	// and the rest go through, and the terminal ends.
	closed := make(chan error, 1)
	go func() { closed <- stuck.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(waitBound):
		t.Fatal("Terminal.Close waited behind the blocked write")
	}
	st, _ := wait(t, stuck)
	require.Equal(t, "SIGHUP", st.Signal)
	select {
	case <-wrote:
	case <-time.After(waitBound):
		t.Fatal("the blocked Write did not end with its terminal")
	}
	require.NoError(t, c.Close())
}

// waitWriteBlocked waits until a write to c's sidecar is held up: paced,
// it waits for a PONG (or its turn to wait for one); unpaced (a sidecar
// that answers no PING), the stream's write lock stays taken.
func waitWriteBlocked(t *testing.T, c *Client) {
	t.Helper()
	waitWriters(t, c, 1)
}

// waitWriters waits until n writers wait in c's pacer, or a write to the
// sidecar stays blocked: its write lock cannot be had for 200 ms.
func waitWriters(t *testing.T, c *Client, n int32) {
	t.Helper()
	require.Eventually(t, func() bool {
		if c.pace.waiting.Load() >= n {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		s := c.stream()
		if s.lock(ctx) != nil {
			return true
		}
		s.unlock()
		return false
	}, waitBound, 10*time.Millisecond)
}

// Client.Close ends even when the sidecar will never read again: the
// blocked write is cut short and the sidecar told to shut down.
func TestCloseEndsABlockedWrite(t *testing.T) {
	logs := newLogWatch(t)
	c, err := Start(Options{SidecarPath: sidecarBin, Stderr: logs})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	stuck := open(t, c, OpenOptions{Cmd: "/bin/sh", Args: []string{"-c", "trap '' HUP; stty raw -echo; echo raw; exec sleep 1000"}, Raw: true})
	collect(stuck).waitText(t, "raw")
	go stuck.Write(make([]byte, 24<<20))
	logs.waitFor(t, holdingBack(stuck.ID()))
	waitWriteBlocked(t, c)
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case <-closed:
	case <-time.After(waitBound):
		t.Fatal("Client.Close did not end")
	}
	st, _ := wait(t, stuck)
	require.Equal(t, "SIGKILL", st.Signal)
}

// A terminal still live when Close ended a persistent connection did not
// die with its sidecar: it says the connection was closed.
func TestCloseOfPersistentConnectionIsNotSidecarGone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "bye")
	c, err := Persistent("bye", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
	require.NoError(t, err)
	term, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = term.Wait()
	require.ErrorIs(t, err, ErrClientClosed)
	require.False(t, errors.Is(err, ErrSidecarGone), "Wait: %v", err)
	_, err = term.Read(make([]byte, 8))
	require.ErrorIs(t, err, ErrClientClosed)
}

// Stop on a reconnecting client ends it; the server's hang-up is not a
// drop to reconnect after (which started a new server).
func TestStopDoesNotReconnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := persistEnv(t, "stop")
	c, err := Persistent("stop", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t},
		Reconnect: &ReconnectPolicy{InitialDelay: 10 * time.Millisecond}})
	require.NoError(t, err)
	defer c.Close()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
	require.NoError(t, err)
	require.NoError(t, c.Stop(ctx))
	select {
	case <-c.Done():
	case <-time.After(waitBound):
		t.Fatal("the client did not end after Stop")
	}
	require.NoError(t, c.Err())
	st, err := term.Wait()
	require.NoError(t, err)
	require.Equal(t, "SIGKILL", st.Signal)
	// No server runs any more.
	cmd := exec.Command(sidecarBin, "--persist", "stop", "--list")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "a server runs after Stop:\n%s", out)
	require.Contains(t, string(out), "is running")
}

// An EXIT without a status (the sidecar could not learn it) still ends
// the output with io.EOF; Wait says the status is unknown.
func TestUnknownExitStatusEndsOutputWithEOF(t *testing.T) {
	c := startClient(t)
	// A terminal as an OPENED made it, for an EXIT that has no code.
	term := newTerminal(c, "unknown", DefaultWindow, false)
	c.mu.Lock()
	c.live[term.ID()] = term
	c.mu.Unlock()
	require.NoError(t, c.exited(proto.Exit{TerminalID: term.ID()}))
	_, err := term.Read(make([]byte, 8))
	require.ErrorIs(t, err, io.EOF)
	_, err = term.Wait()
	require.ErrorIs(t, err, ErrExitUnknown)
}

// The sidecar is not in the host's process group: a ^C at the host's
// terminal, or a signal for the host's whole group, is the host's to
// handle, not a shutdown of every terminal.
func TestSidecarHasAGroupOfItsOwn(t *testing.T) {
	c := startClient(t)
	pid := c.stream().Process().Pid
	pgid, err := syscall.Getpgid(pid)
	require.NoError(t, err)
	require.Equal(t, pid, pgid)
	require.NotEqual(t, syscall.Getpgrp(), pgid)
}
