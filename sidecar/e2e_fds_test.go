//go:build unix

package sidecar_test

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/stretchr/testify/require"
)

// fdScript lists the descriptors of the program in the terminal.
const fdScript = `printf 'FDS:'; ls /proc/$$/fd | tr '\n' ' '; echo END; exec cat`

// TestInheritedDescriptorsDoNotReachTerminals starts the sidecar with a
// pipe's write end as fd 7, as a shell's `exec 7>...` would leave it.
// Neither the sidecar, its watchdog nor the terminal's program may keep
// it: the caller reading the pipe gets end of file once it closed its own
// copy. Before the fix it waited for ever (the program held fd 7 too).
func TestInheritedDescriptorsDoNotReachTerminals(t *testing.T) {
	t.Parallel()
	pr, pw, err := os.Pipe()
	require.NoError(t, err)
	defer pr.Close()
	cmd := exec.Command(sidecarBin, sidecarArgs...)
	cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, pw} // fd 7 in the sidecar
	h := hosttest.StartCmd(t, cmd)
	pw.Close()
	sh(h, "a", fdScript)
	out := h.WaitOutput("a", "END").Output("a")
	fds := strings.Fields(strings.TrimSpace(out[strings.Index(out, "FDS:")+4 : strings.Index(out, "END")]))
	require.NotContains(t, fds, "7", "the terminal's program has fd 7: %q", out)
	require.NoError(t, pr.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = pr.Read(make([]byte, 1))
	require.True(t, errors.Is(err, io.EOF), "reading the caller's pipe: %v (someone still holds its write end)", err)
}
