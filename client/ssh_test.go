package client

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ptyplex/ptyplex/internal/testing/sshtest"
)

// A terminal on "another machine": the real sidecar reached through a real
// ssh to a real sshd on 127.0.0.1, with the handshake.
func TestTerminalOverSSH(t *testing.T) {
	srv := sshtest.Start(t)
	log := &syncWriter{b: &strings.Builder{}}
	c, err := Start(Options{Transport: srv.Command(false, sidecarBin), Stderr: log, Hello: true,
		// Generous: ssh's key exchange on a loaded machine is slow.
		HelloTimeout: time.Minute})
	require.NoError(t, err)
	defer c.Close()
	peer, ok := c.Peer()
	require.True(t, ok)
	assert.True(t, peer.Has("hello"))
	assert.NotZero(t, c.Pid())

	ctx, cancel := context.WithTimeout(context.Background(), waitBound)
	defer cancel()
	term, err := c.Open(ctx, OpenOptions{Cmd: "sh", Window: 4096})
	require.NoError(t, err)
	out := collect(term)
	_, err = term.Write([]byte("echo $((6*7)) over ssh; seq 1 20000 | tail -1; exit 5\n"))
	require.NoError(t, err)
	text, _ := out.waitEnd(t)
	assert.Contains(t, text, "42 over ssh")
	assert.Contains(t, text, "20000")
	st, err := term.Wait()
	require.NoError(t, err)
	assert.Equal(t, 5, st.Code)
	require.NoError(t, c.Close())
	assert.Contains(t, log.String(), "transport ssh: ", "the remote sidecar's stderr, marked")
}

// syncWriter collects what several goroutines write.
type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
