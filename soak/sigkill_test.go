package soak

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/stretchr/testify/require"
)

// TestSidecarKilledLeavesNoProcess kills the sidecar with SIGKILL while its
// terminals run foreground programs, background jobs of an interactive
// shell (one ignoring SIGHUP, as nohup would), and a daemon that left the
// session but kept the PTY. Five seconds later nothing of any terminal may
// be alive.
func TestSidecarKilledLeavesNoProcess(t *testing.T) {
	h := hosttest.Start(t, sidecarBin)
	var pids []int
	// Many plain terminals, opened while the sidecar's threads are busy,
	// so their spawns happen on different OS threads.
	n := size(16, 64)
	for i := 0; i < n; i++ {
		h.Open(proto.Open{TerminalID: fmt.Sprint("fg", i), Cols: 80, Rows: 24, Cmd: "/bin/sh",
			Args: []string{"-c", "echo up; exec sleep 1000"}})
	}
	for i := 0; i < n; i++ {
		pids = append(pids, opened(t, h, fmt.Sprint("fg", i)))
	}
	// An interactive bash with jobs.
	h.Open(proto.Open{TerminalID: "bash", Cols: 80, Rows: 24, Cmd: "bash", Args: []string{"--norc", "--noprofile", "-i"},
		Env: map[string]string{"PS1": "$ "}})
	pids = append(pids, opened(t, h, "bash"))
	h.Input("bash", "(trap '' HUP; exec sleep 1001) & echo nohup=$!\n")
	h.Input("bash", "sleep 1002 & echo bg=$!\n")
	h.Input("bash", "setsid sh -c 'echo daemon=$$; exec sleep 1003' &\n")
	names := []string{"nohup", "bg", "daemon"}
	s := h.MustUntil("the jobs' pids", func(s hosttest.Snapshot) bool {
		for _, name := range names {
			if !regexp.MustCompile(name + `=\d+`).MatchString(s.Output("bash")) {
				return false
			}
		}
		return true
	})
	for _, name := range names {
		pids = append(pids, pidIn(t, s.Output("bash"), name))
	}
	for _, p := range pids {
		require.True(t, hosttest.Alive(p), "pid %d should run before the kill", p)
	}

	require.NoError(t, h.Cmd.Process.Signal(syscall.SIGKILL))
	deadline := time.Now().Add(5 * time.Second)
	for _, p := range pids {
		if !hosttest.WaitGone(p, time.Until(deadline)) {
			t.Errorf("pid %d (%s) survived the sidecar's SIGKILL by 5 s", p, cmdline(p))
		}
	}
	// Leave nothing behind for the next test even if this one failed.
	for _, p := range pids {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

func opened(t *testing.T, h *hosttest.Host, id string) int {
	t.Helper()
	c := h.WaitControl(proto.TypeOpened, id)
	pid, ok := c.Fields["pid"].(float64)
	require.True(t, ok, "OPENED without pid: %s", c.Raw)
	return int(pid)
}

func pidIn(t *testing.T, s, name string) int {
	t.Helper()
	m := regexp.MustCompile(name + `=(\d+)`).FindStringSubmatch(s)
	require.NotNil(t, m, "no %s= in %q", name, s)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

func cmdline(pid int) string {
	b, _ := readFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.ReplaceAll(strings.TrimRight(string(b), "\x00"), "\x00", " ")
}

// TestWatchdogEndsWithSidecar checks the other half of the watchdog's
// contract: after an orderly shutdown it has nothing to kill and is gone
// as soon as the sidecar is.
func TestWatchdogEndsWithSidecar(t *testing.T) {
	h := hosttest.Start(t, sidecarBin)
	h.Open(proto.Open{TerminalID: "a", Cols: 80, Rows: 24, Cmd: "/bin/sh", Args: []string{"-c", "echo up; exec cat"}})
	leader := opened(t, h, "a")
	wd := watchdogOf(t, h.Cmd.Process.Pid)
	h.CloseStdin()
	code, err := h.WaitExit(hosttest.Timeout)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	require.True(t, hosttest.WaitGone(wd, 5*time.Second), "watchdog %d outlived the sidecar", wd)
	require.False(t, hosttest.Alive(leader))
}

// watchdogOf finds the sidecar's watchdog among its children.
func watchdogOf(t *testing.T, sidecar int) int {
	t.Helper()
	var pid int
	ok := eventually(hosttest.Timeout, func() bool {
		for _, c := range children(sidecar) {
			env, _ := readFile(fmt.Sprintf("/proc/%d/environ", c))
			if strings.Contains(string(env), "PTYPLEX_WATCHDOG=1") {
				pid = c
				return true
			}
		}
		return false
	})
	require.True(t, ok, "sidecar %d has no watchdog child", sidecar)
	return pid
}
