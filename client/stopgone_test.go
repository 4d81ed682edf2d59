//go:build linux

package client

import (
	"context"
	"os"
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
