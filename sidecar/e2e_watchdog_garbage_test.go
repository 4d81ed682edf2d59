//go:build unix

package sidecar_test

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/stretchr/testify/require"
)

// TestWatchdogSurvivesOverlongLine (needs root): something that reaches the sidecar's
// end of the watchdog pipe (root here; a program of the sidecar's user
// before the sidecar made itself non-dumpable) writes 70,000 bytes without
// a newline. The watchdog's line scanner used to fail on it, and the
// watchdog took that for the sidecar's death and killed every terminal.
// Now it skips the line, says so, keeps watching (the announcement that
// ended the garbage included), and still cleans up after a real death.
func TestWatchdogSurvivesOverlongLine(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar's watchdog, which ends its terminals when it dies")
	t.Parallel()
	requireRootForProcFD(t)
	h := start(t)
	sh(h, "a", survivor)
	bgA := pidIn(t, h.WaitOutput("a", "bg=").Output("a"), "bg")
	t.Cleanup(func() { syscall.Kill(bgA, syscall.SIGKILL) })
	sidecar := h.Cmd.Process.Pid
	wd := watchdogOf(t, sidecar)

	pipe, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", wd))
	require.NoError(t, err)
	fd := fdLinkedTo(t, sidecar, pipe)
	w, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", sidecar, fd), os.O_WRONLY, 0)
	require.NoError(t, err, "reopening the sidecar's write end of the watchdog pipe")
	_, err = w.WriteString(strings.Repeat("A", 70000))
	require.NoError(t, err)
	w.Close()

	// The next terminal's announcement ends the long line.
	sh(h, "b", survivor)
	bgB := pidIn(t, h.WaitOutput("b", "bg=").Output("b"), "bg")
	t.Cleanup(func() { syscall.Kill(bgB, syscall.SIGKILL) })
	h.WaitStderr(regexp.MustCompile(`watchdog: skipping a line of more than 4096 bytes`))
	require.NotContains(t, h.Stderr(), "exited while we run", "the watchdog died of the long line")
	require.True(t, hosttest.Alive(bgA), "terminal a's job was killed while the sidecar runs")
	require.True(t, hosttest.Alive(wd), "the watchdog exited")

	require.NoError(t, h.Cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, hosttest.WaitGone(bgA, 10*time.Second), "terminal a's job outlived the SIGKILLed sidecar")
	require.True(t, hosttest.WaitGone(bgB, 10*time.Second), "terminal b's job, announced right after the garbage, outlived the SIGKILLed sidecar")
}

// requireRootForProcFD: only root may open a non-dumpable sidecar's
// /proc/PID/fd entries, as the tests that reach its end of the watchdog
// pipe do. Without root they fail, unless PTYPLEX_NO_ROOT_TESTS=1 asks to
// skip them explicitly, so that a run without them is never mistaken for
// a green one.
func requireRootForProcFD(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		return
	}
	if os.Getenv("PTYPLEX_NO_ROOT_TESTS") == "1" {
		t.Skip("PTYPLEX_NO_ROOT_TESTS=1: skipping a test that needs root to open the sidecar's /proc/PID/fd entries")
	}
	t.Fatal("this test needs root to open the non-dumpable sidecar's /proc/PID/fd entries (CI runs as root); " +
		"set PTYPLEX_NO_ROOT_TESTS=1 to skip it explicitly")
}
