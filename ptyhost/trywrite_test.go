//go:build unix

package ptyhost

import (
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// TryWrite hands a child that reads its input the whole payload at once,
// and against a child that never reads it returns short, without blocking,
// once the PTY's input buffer is full.
func TestTryWrite(t *testing.T) {
	p, err := Start(Config{Cmd: "sh", Args: []string{"-c", "stty raw -echo; echo ready; exec sleep 1000"}})
	require.NoError(t, err)
	defer func() {
		p.SignalGroup(syscall.SIGKILL)
		p.WaitExit()
		p.Reap()
		p.Close()
	}()
	var seen strings.Builder
	buf := make([]byte, 4096)
	for !strings.Contains(seen.String(), "ready") {
		n, err := p.Read(buf)
		require.NoError(t, err)
		seen.Write(buf[:n])
	}
	n, err := p.TryWrite([]byte("k"))
	require.NoError(t, err)
	require.Equal(t, 1, n, "a keystroke fits an empty PTY")
	// sleep never reads: the buffer fills and TryWrite stops short.
	chunk := make([]byte, 64<<10)
	total := 1
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "TryWrite kept taking input that nobody reads (%d bytes)", total)
		n, err := p.TryWrite(chunk)
		require.NoError(t, err)
		total += n
		if n < len(chunk) {
			break
		}
	}
}
