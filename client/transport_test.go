package client

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Pid is the transport's process: a shell that notes its own pid and then
// becomes the sidecar, as ssh would run one.
func TestPidIsTheTransport(t *testing.T) {
	file := filepath.Join(t.TempDir(), "pid")
	c, err := Start(Options{Transport: []string{"sh", "-c", `echo $$ > "$0"; exec "$1"`, file, sidecarBin}, Stderr: testLog{t}, Hello: true})
	require.NoError(t, err)
	defer c.Close()
	// The handshake was answered: the shell has written its pid and is the
	// sidecar now.
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	assert.Equal(t, pid, c.Pid())
	term := open(t, c, OpenOptions{Cmd: "sh", Args: []string{"-c", "exit 0"}})
	assert.NotEqual(t, pid, term.Pid(), "a terminal's pid is its child's")
}
