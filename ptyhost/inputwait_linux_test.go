//go:build unix

package ptyhost

import (
	"bytes"
	"io"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// inputProgram runs cmd in a PTY, keeps its output drained and returns
// the process with a function that waits until the output contains s.
func inputProgram(t *testing.T, name string, args ...string) (*Process, func(s string)) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
	p, err := Start(Config{Cmd: name, Args: args, Cols: 80, Rows: 24, Env: map[string]string{"TERM": "xterm-256color"}})
	require.NoError(t, err)
	var mu sync.Mutex
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		// KillSession spares the child itself, so it is signalled first.
		p.Signal(syscall.SIGKILL)
		p.KillSession(syscall.SIGKILL, true)
		<-done
		p.WaitExit()
		p.Reap()
		p.Close()
	})
	waitOutput := func(s string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			mu.Lock()
			got := out.String()
			mu.Unlock()
			if strings.Contains(got, s) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s never printed %q; output so far: %q", name, s, got)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return p, waitOutput
}

// eventuallyWaiting polls the state until the program is blocked on its
// terminal (it may still be starting up when its banner appears).
func eventuallyWaiting(t *testing.T, p *Process) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var last InputState
	var lastErr error
	for time.Now().Before(deadline) {
		last, lastErr = p.InputState()
		if last == InputWaiting {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("never waiting for input: last state %v, error %v", last, lastErr)
}

// neverWaiting samples the state repeatedly; a program that is busy or
// asleep on something other than the terminal must never look waiting.
func neverWaiting(t *testing.T, p *Process) {
	t.Helper()
	for i := 0; i < 50; i++ {
		st, err := p.InputState()
		require.NoError(t, err)
		require.Equal(t, InputBusy, st, "sample %d", i)
		time.Sleep(2 * time.Millisecond)
	}
}

func TestInputStateWaiting(t *testing.T) {
	py := func(code string) []string { return []string{"-c", "print('ready', flush=True)\n" + code} }
	cases := []struct {
		name  string
		cmd   string
		args  []string
		ready string
	}{
		{"sh read", "sh", []string{"-c", "echo ready; read x"}, "ready"},
		{"bash read", "bash", []string{"--norc", "-c", "echo ready; read -r x"}, "ready"},
		{"python input", "python3", py("input()"), "ready"},
		{"python repl", "python3", []string{"-q", "-i", "-c", "print('ready')"}, ">>>"},
		{"poll", "python3", py("import select; p = select.poll(); p.register(0, select.POLLIN); p.poll()"), "ready"},
		{"select", "python3", py("import select; select.select([0], [], [])"), "ready"},
		{"epoll", "python3", py("import select; e = select.epoll(); e.register(0, select.EPOLLIN); e.poll()"), "ready"},
		{"dev tty", "python3", py("f = open('/dev/tty', 'rb', buffering=0); f.read(1)"), "ready"},
		{"threads", "python3", py("import threading, time\nfor _ in range(3): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\ninput()"), "ready"},
		{"less", "less", []string{"/etc/passwd"}, "passwd"},
		{"vim", "vim", []string{"-u", "NONE", "-N"}, "~"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, waitOutput := inputProgram(t, c.cmd, c.args...)
			waitOutput(c.ready)
			eventuallyWaiting(t, p)
		})
	}
}

func TestInputStateBusy(t *testing.T) {
	cases := []struct {
		name string
		cmd  string
		args []string
	}{
		{"cpu loop", "sh", []string{"-c", "echo ready; while :; do :; done"}},
		{"sleeping", "sh", []string{"-c", "echo ready; sleep 60"}},
		{"reading a pipe", "sh", []string{"-c", "echo ready; sleep 60 | cat"}},
		{"python sleep", "python3", []string{"-c", "import time; print('ready', flush=True); time.sleep(60)"}},
		{"polling a pipe", "python3", []string{"-c", "import os, select; r, w = os.pipe(); print('ready', flush=True); select.select([r], [], [])"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p, waitOutput := inputProgram(t, c.cmd, c.args...)
			waitOutput("ready")
			neverWaiting(t, p)
		})
	}
}

// A program that prints in bursts and then asks: it is busy between the
// bursts and waiting only at the prompt.
func TestInputStateAfterBursts(t *testing.T) {
	p, waitOutput := inputProgram(t, "python3", "-c",
		"import time\nfor i in range(3):\n    print('burst', i, flush=True)\n    time.sleep(0.3)\ninput('name? ')")
	waitOutput("burst 0")
	st, err := p.InputState()
	require.NoError(t, err)
	require.Equal(t, InputBusy, st)
	waitOutput("name? ")
	eventuallyWaiting(t, p)
	_, _ = io.WriteString(p, "x\r")
}

// A pipeline's first process exits while the group lives on: the group's
// leader is gone (getsid fails on its id), and its other members are the
// foreground group. They are found and judged, not given up on.
func TestInputStatePipelineLeaderExited(t *testing.T) {
	cases := []struct {
		name    string
		second  string
		waiting bool
	}{
		{"waiting", `python3 -c "import sys; print('rea'+'dy', flush=True); open('/dev/tty').readline()"`, true},
		{"busy", `sh -c 'echo rea""dy; while :; do :; done'`, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 is not installed")
			}
			p, waitOutput := inputProgram(t, "bash", "--norc", "--noprofile", "-i")
			_, err := io.WriteString(p, "true | "+c.second+"\r")
			require.NoError(t, err)
			waitOutput("ready")
			// Wait until the foreground group's leader (true) is gone.
			deadline := time.Now().Add(20 * time.Second)
			for {
				var pgrp int
				require.NoError(t, control(p.master, func(fd int) (err error) {
					pgrp, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
					return err
				}))
				if _, err := unix.Getsid(pgrp); pgrp != p.pid && err != nil {
					break
				}
				require.True(t, time.Now().Before(deadline), "the pipeline's leader never exited (foreground group %d)", pgrp)
				time.Sleep(5 * time.Millisecond)
			}
			pgrp, err := p.Foreground()
			require.NoError(t, err)
			require.NotEqual(t, p.pid, pgrp)
			if c.waiting {
				eventuallyWaiting(t, p)
			} else {
				neverWaiting(t, p)
			}
			_, name, err := p.ForegroundProcess()
			require.NoError(t, err)
			// Not the leader's name (it has none now): the member's.
			require.True(t, strings.HasSuffix(name, "python3") || strings.HasSuffix(name, "sh"), "foreground name %q", name)
		})
	}
}
