//go:build unix

package sidecar_test

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/ptyhost/watchdog"
	"github.com/stretchr/testify/require"
)

// survivor is a terminal whose background job ignores SIGHUP: when the
// sidecar is SIGKILLed, only the watchdog can end that job.
const survivor = `(trap '' HUP; exec sleep 1000) & echo bg=$!; exec cat`

// TestWatchdogReplacedWhenKilled: a program of our uid kills the watchdog
// (a killed watchdog must not go unnoticed). The sidecar says so on stderr and starts a new one,
// which knows the running terminal and cleans up after a later SIGKILL of
// the sidecar. Before, the job outlived the sidecar.
func TestWatchdogReplacedWhenKilled(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar's watchdog, which ends its terminals when it dies")
	t.Parallel()
	h := start(t)
	sh(h, "a", survivor)
	bg := pidIn(t, h.WaitOutput("a", "bg=").Output("a"), "bg")
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	old := watchdogOf(t, h.Cmd.Process.Pid)

	require.NoError(t, syscall.Kill(old, syscall.SIGKILL))
	h.WaitStderr(regexp.MustCompile(fmt.Sprintf(`watchdog \(pid %d\) exited while we run .*; starting a new one`, old)))
	m := h.WaitStderr(regexp.MustCompile(`new watchdog \(pid (\d+)\) started, watching 1 terminal\n`))
	fresh, _ := strconv.Atoi(m[1])
	require.NotEqual(t, old, fresh)
	require.True(t, hosttest.Alive(fresh), "the new watchdog %d is not running", fresh)

	require.NoError(t, h.Cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, hosttest.WaitGone(bg, 10*time.Second), "background job %d outlived the SIGKILLed sidecar", bg)
	require.True(t, hosttest.WaitGone(fresh, 10*time.Second), "the new watchdog %d outlived the sidecar", fresh)
}

// TestWatchdogIgnoresForgedLines (needs root): a program of our uid reopens the
// sidecar's end of the watchdog pipe through /proc/SIDECAR/fd/N and
// retires its own terminal, so that nothing would clean it up. The line
// lacks this run's token, so the watchdog ignores it (and says so), and
// still kills the job when the sidecar is SIGKILLed.
func TestWatchdogIgnoresForgedLines(t *testing.T) {
	plainOnly(t, "shutdown: the plain sidecar's watchdog, which ends its terminals when it dies")
	t.Parallel()
	requireRootForProcFD(t) // the sidecar is not dumpable
	h := start(t)
	sh(h, "a", survivor)
	leader := openedPID(t, h, "a")
	bg := pidIn(t, h.WaitOutput("a", "bg=").Output("a"), "bg")
	t.Cleanup(func() { syscall.Kill(bg, syscall.SIGKILL) })
	sidecar := h.Cmd.Process.Pid
	wd := watchdogOf(t, sidecar)

	pipe, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", wd))
	require.NoError(t, err)
	fd := fdLinkedTo(t, sidecar, pipe)
	forged, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/%d", sidecar, fd), os.O_WRONLY, 0)
	require.NoError(t, err, "reopening the sidecar's write end of the watchdog pipe")
	_, err = fmt.Fprintf(forged, "- %d\n0123456789abcdef0123456789abcdef - %d\n", leader, leader)
	require.NoError(t, err)
	forged.Close()
	h.WaitStderr(regexp.MustCompile(`watchdog: ignoring a line without this run's token`))

	require.NoError(t, h.Cmd.Process.Signal(syscall.SIGKILL))
	require.True(t, hosttest.WaitGone(bg, 10*time.Second), "background job %d outlived the SIGKILLed sidecar after a forged retire line", bg)
}

// watchdogOf finds the sidecar's watchdog among its children; it is
// started before the sidecar reads its first frame.
func watchdogOf(t *testing.T, sidecar int) int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		i := strings.LastIndexByte(string(stat), ')')
		if i < 0 {
			continue
		}
		if f := strings.Fields(string(stat[i+1:])); len(f) < 2 || f[1] != strconv.Itoa(sidecar) {
			continue
		}
		env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if strings.Contains(string(env), watchdog.Env+"=1") {
			return pid
		}
	}
	t.Fatalf("sidecar %d has no watchdog child", sidecar)
	return 0
}

// fdLinkedTo finds pid's descriptor whose /proc link reads target.
func fdLinkedTo(t *testing.T, pid int, target string) int {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if l, _ := os.Readlink(dir + "/" + e.Name()); l == target {
			n, _ := strconv.Atoi(e.Name())
			return n
		}
	}
	t.Fatalf("process %d holds no descriptor on %s", pid, target)
	return 0
}
