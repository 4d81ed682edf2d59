//go:build linux

package client

import (
	"context"
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
)

// lockFree reports whether nobody holds the lock file at path.
func lockFree(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		require.ErrorIs(t, err, syscall.EWOULDBLOCK)
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// Stop returns once the server's process is gone (its lock is free), not
// as it closes the connection, a moment before: a server started right
// after found the lock still taken and left the work to the dying one.
// Twenty in a row, each with a terminal of its own.
func TestStopReturnsOnceTheServerIsGone(t *testing.T) {
	env := persistEnv(t, "gone")
	var rt string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PTYPLEX_RUNTIME_DIR="); ok {
			rt = v
		}
	}
	lock := filepath.Join(rt, "sidecar", "gone.lock")
	for i := range 20 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := Persistent("gone", Options{SidecarPath: sidecarBin, Env: env, Stderr: testLog{t}})
		require.NoError(t, err, "start %d", i)
		term, err := c.Open(ctx, OpenOptions{Cmd: "sleep", Args: []string{"1000"}})
		require.NoError(t, err, "open %d", i)
		require.NoError(t, c.Stop(ctx), "stop %d", i)
		require.True(t, lockFree(t, lock), "round %d: Stop returned while the server still holds its lock", i)
		st, err := term.Wait()
		require.NoError(t, err)
		require.Equal(t, "SIGKILL", st.Signal)
		c.Close()
		cancel()
	}
}

// Stop's wait for the server it stopped also ends when another server of
// that name listens: a reconnecting client may start one the moment the
// stopped one's lock is free, and it holds that lock from then on, so a
// Stop without a deadline waited for ever. Here the lock stays held by
// another process throughout, as a server holds it; only the socket
// changes.
func TestStopWaitEndsWhenANewServerListens(t *testing.T) {
	rt := t.TempDir()
	env := []string{"PTYPLEX_RUNTIME_DIR=" + rt}
	dir := filepath.Join(rt, "sidecar")
	require.NoError(t, os.MkdirAll(dir, 0o700))
	lock, sock := filepath.Join(dir, "n.lock"), filepath.Join(dir, "n.sock")
	require.NoError(t, os.WriteFile(lock, nil, 0o600))
	holder := exec.Command("flock", lock, "sh", "-c", "echo held; read x")
	in, err := holder.StdinPipe()
	require.NoError(t, err)
	out, err := holder.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, holder.Start(), "flock(1), from util-linux")
	defer func() { in.Close(); holder.Wait() }()
	buf := make([]byte, 5)
	_, err = io.ReadFull(out, buf)
	require.NoError(t, err)
	require.Equal(t, "held\n", string(buf))

	first, err := net.Listen("unix", sock)
	require.NoError(t, err)
	defer first.Close()
	was := markServer(env, "n")
	require.True(t, was.Valid(), "no mark of the listening server")
	// The same server, still listening: the wait lasts until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = waitServerGone(ctx, env, "n", was)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "its process still runs")

	// A new server's socket in its place: bound while the old one is
	// still there, as a new inode, and moved over it.
	second, err := net.Listen("unix", sock+".new")
	require.NoError(t, err)
	defer second.Close()
	require.NoError(t, os.Rename(sock+".new", sock))
	ctx2, cancel2 := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel2()
	require.NoError(t, waitServerGone(ctx2, env, "n", was))
}
