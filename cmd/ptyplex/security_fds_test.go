//go:build unix

package main

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fdScript lists the descriptors of the program in the session.
const fdScript = `printf 'FDS:'; ls /proc/$$/fd | tr '\n' ' '; echo END; exec cat`

// TestInheritedDescriptorsDoNotReachTheSession starts a session with a
// pipe's write end as fd 7 (a shell's `exec 7>...`), in daemon mode and
// with --no-daemon. Neither the daemon nor the program in the PTY may keep
// it, so the caller reading the pipe gets end of file once its own copy is
// closed; before the fix it waited for ever.
func TestInheritedDescriptorsDoNotReachTheSession(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"daemon", "no-daemon"} {
		t.Run(mode, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			args := []string{"start"}
			if mode == "no-daemon" {
				args = append(args, "--no-daemon")
			}
			cmd := exec.Command(bin, append(args, "--", "sh", "-c", fdScript)...)
			cmd.ExtraFiles = []*os.File{nil, nil, nil, nil, pw} // fd 7
			s := startCmd(t, cmd)
			pw.Close()
			scr := s.waitText("END")
			list := scr[strings.Index(scr, "FDS:")+4 : strings.Index(scr, "END")]
			for _, fd := range strings.Fields(list) {
				if fd == "7" {
					t.Errorf("the session's program has fd 7: %q", list)
				}
			}
			pr.SetReadDeadline(time.Now().Add(deadline))
			if _, err := pr.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
				t.Errorf("reading the caller's pipe: %v (someone still holds its write end)", err)
			}
		})
	}
}

// startCmd runs a prepared `ptyplex start` command until it printed its
// Socket and PID lines (it keeps running with --no-daemon) and stops the
// session at the end of the test.
func startCmd(t *testing.T, cmd *exec.Cmd) *sess {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &sess{t: t}
	br := bufio.NewReader(stdout)
	for s.sock == "" || s.pid == 0 {
		line, err := br.ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("start ended before printing its socket and pid: %v", err)
		}
		k, v, _ := strings.Cut(strings.TrimSuffix(line, "\n"), ": ")
		switch k {
		case "Socket":
			s.sock = v
		case "PID":
			s.pid = startedPID(t, line)
		}
	}
	t.Cleanup(func() {
		ptyplex(t, "", "stop", "--socket", s.sock)
		if !waitGone(s.pid, deadline) {
			syscall.Kill(s.pid, syscall.SIGKILL)
			t.Errorf("daemon %d still running after stop", s.pid)
		}
		go io.Copy(io.Discard, br)
		cmd.Wait()
	})
	return s
}
