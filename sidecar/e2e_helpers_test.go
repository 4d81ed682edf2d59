//go:build unix

package sidecar_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

func start(t *testing.T) *hosttest.Host {
	t.Helper()
	return hosttest.Start(t, sidecarBin, sidecarArgs...)
}

// sidecarLog is what the sidecar logged so far: its stderr, or through a
// persistent server, the server's log (NAME.log in its directory).
func sidecarLog(h *hosttest.Host) string {
	if len(sidecarArgs) == 0 {
		return h.Stderr()
	}
	b, _ := os.ReadFile(filepath.Join(os.Getenv("PTYPLEX_RUNTIME_DIR"), "sidecar", sidecarArgs[1]+".log"))
	return string(b)
}

// waitLog waits until the sidecar's log has a line matching re.
func waitLog(t *testing.T, h *hosttest.Host, re *regexp.Regexp) {
	t.Helper()
	if len(sidecarArgs) == 0 {
		h.WaitStderr(re)
		return
	}
	waitLogCount(t, h, re, 1)
}

// waitLogCount waits until the sidecar's log has n matches of re: a
// persistent server's log is the whole run's, so a test waiting for a
// line of its own counts those that were there before it.
func waitLogCount(t *testing.T, h *hosttest.Host, re *regexp.Regexp, n int) {
	t.Helper()
	// A file has no event to wait on: it is read again after a pause.
	deadline := time.Now().Add(hosttest.Timeout)
	for len(re.FindAllString(sidecarLog(h), -1)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d lines matching %q in the sidecar's log within %v", n, re, hosttest.Timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// plainOnly skips a test of what only a plain sidecar does when the tests
// run through a persistent server (persistEnv), saying why.
func plainOnly(t *testing.T, why string) {
	t.Helper()
	if len(sidecarArgs) > 0 {
		t.Skipf("through --persist: %s", why)
	}
}

// sh opens terminal id running a shell script.
func sh(h *hosttest.Host, id, script string) {
	h.Open(proto.Open{TerminalID: id, Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", script}})
}

// openedPID waits for OPENED of id and returns its pid.
func openedPID(t *testing.T, h *hosttest.Host, id string) int {
	t.Helper()
	c := h.WaitControl(proto.TypeOpened, id)
	pid, ok := c.Fields["pid"].(float64)
	require.True(t, ok, "OPENED without pid: %s", c.Raw)
	require.Greater(t, int(pid), 0)
	return int(pid)
}

// exitOf waits for EXIT of id.
func exitOf(t *testing.T, h *hosttest.Host, id string) hosttest.Control {
	t.Helper()
	return h.WaitControl(proto.TypeExit, id)
}

// pidIn extracts a number printed as "name=N" from s.
func pidIn(t *testing.T, s, name string) int {
	t.Helper()
	m := regexp.MustCompile(name + `=(\d+)`).FindStringSubmatch(s)
	require.NotNil(t, m, "no %s= in %q", name, s)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func requireGone(t *testing.T, pid int, what string) {
	t.Helper()
	require.True(t, hosttest.WaitGone(pid, 10*time.Second), "%s (pid %d) is still running", what, pid)
}

func ptr[T any](v T) *T { return &v }
