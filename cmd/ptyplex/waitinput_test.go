//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ptyplex/ptyplex/internal/testing/testsize"
)

// burstProgram prints five bursts 300 ms apart after each line it reads,
// then asks again: a quiet period shorter than the pauses ends a wait in
// the middle, where a wait for input must not. After the line "gate" it
// prints the first burst, then blocks opening the FIFO named by its
// argument until the test writes to it (a pause as long as the test
// wants, spent in something other than reading the terminal), then
// prints the other four at once.
const burstProgram = `import sys, time
n = 0
while True:
    line = input('ready %d> ' % n)
    n += 1
    for i in range(5):
        print('round %d burst %d' % (n, i), flush=True)
        if i == 0 and line == 'gate':
            with open(sys.argv[1]) as f:
                f.read()
        elif i < 4 and line != 'gate':
            time.sleep(0.3)
`

// The acceptance test of the input wait, over five sessions at once. In
// each round, input --wait-input must come back only once the fifth burst
// and the next prompt are on the screen: after bursts 300 ms apart, and
// across a pause held open by the test, during which a 200 ms quiet wait
// (the heuristic it replaces) has come back and the input wait has not.
// The control, the quiet wait coming back in the middle, is shown every
// round by the held pause, so it does not depend on the machine's speed
// (with the 300 ms pauses alone it did: on a loaded machine the screen
// read after the quiet wait came too late to see the middle).
// PTYPLEX_SOAK=1 runs 10 rounds per session.
func TestWaitInputAfterBursts(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	sessions, rounds := 5, testsize.Pick(2, 10)
	for i := 0; i < sessions; i++ {
		t.Run(fmt.Sprint("session", i), func(t *testing.T) {
			t.Parallel()
			gate := filepath.Join(t.TempDir(), "gate")
			if err := syscall.Mkfifo(gate, 0o600); err != nil {
				t.Fatal(err)
			}
			s := start(t, "--size", "80x40", "--", "python3", "-c", burstProgram, gate)
			s.waitText("ready 0>")
			prompt := 0 // the number of the last prompt shown
			// ended checks that round prompt+1 ended with its fifth
			// burst and the next prompt on the screen.
			ended := func(what string) {
				t.Helper()
				prompt++
				scr := s.screen()
				if !strings.Contains(scr, fmt.Sprintf("round %d burst 4", prompt)) || !strings.Contains(scr, fmt.Sprintf("ready %d>", prompt)) {
					t.Fatalf("round %d: %s returned before the prompt:\n%s", prompt, what, scr)
				}
			}
			for n := 1; n <= rounds; n++ {
				// The heuristic returns while the program is held.
				r := s.run("input", "--text", "gate", "--keys", "Enter", "--wait-quiet", "200ms", "--timeout", deadline.String())
				if r.code != 0 || r.stdout != "Terminal quiet for 200ms\n" {
					t.Fatalf("round %d quiet wait: %v", n, r)
				}
				if scr := s.screen(); strings.Contains(scr, fmt.Sprintf("ready %d>", prompt+1)) {
					t.Fatalf("round %d: the prompt came before the gate opened; the test no longer shows what it should:\n%s", n, scr)
				}
				openGate(t, gate)
				if r := s.run("wait", "--input", "--timeout", deadline.String()); r.code != 0 || r.stdout != "Waiting for input\n" {
					t.Fatalf("round %d: wait --input: %v", n, r)
				}
				ended("wait --input")

				// The input wait across the same pause: still waiting
				// once a quiet wait begun after the first burst is over.
				// Its own bound is long: it has to outlast the steps
				// below on a loaded machine, which it must not see end.
				in := s.runAsync("input", "--text", "gate", "--keys", "Enter", "--wait-input", "--timeout", (6 * deadline).String())
				s.waitText(fmt.Sprintf("round %d burst 0", prompt+1))
				if r := s.run("wait", "--quiet-for", "200ms", "--timeout", deadline.String()); r.code != 0 {
					t.Fatalf("round %d: wait --quiet-for: %v", n, r)
				}
				select {
				case r := <-in:
					t.Fatalf("round %d: input --wait-input ended while the program was held: %v\n%s", n, r, s.screen())
				default:
				}
				openGate(t, gate)
				if r := <-in; r.code != 0 || r.stdout != "Waiting for input\n" {
					t.Fatalf("round %d: input --wait-input: %v", n, r)
				}
				ended("input --wait-input")

				// And after bursts 300 ms apart.
				r = s.run("input", "--text", "x", "--keys", "Enter", "--wait-input", "--timeout", deadline.String())
				if r.code != 0 || r.stdout != "Waiting for input\n" {
					t.Fatalf("round %d: input --wait-input: %v", n, r)
				}
				ended("input --wait-input")
			}
		})
	}
}

// openGate lets burstProgram past its held pause: opening the FIFO for
// writing waits for the program to open it for reading; closing it ends
// the program's read.
func openGate(t *testing.T, gate string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err == nil {
			err = f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadline):
		t.Fatalf("the program never opened %s", gate)
	}
}

// Programs that wait for input in different ways, and one that never does.
func TestWaitInputPrograms(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		tool  string
		args  []string
		ready string
	}{
		{"bash read", "bash", []string{"--norc", "--noprofile", "-c", "echo ready; read -r x"}, "ready"},
		{"vim normal mode", "vim", []string{"-u", "NONE", "-N", "-i", "NONE"}, "~"},
		{"less", "less", []string{"/etc/passwd"}, "root"},
		{"python repl", "python3", []string{"-q"}, ">>>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			requireTool(t, c.tool)
			s := start(t, append([]string{"--size", "80x24", "--", c.tool}, c.args...)...)
			s.waitText(c.ready)
			if r := s.run("wait", "--input", "--timeout", deadline.String()); r.code != 0 || r.stdout != "Waiting for input\n" {
				t.Fatalf("wait --input: %v", r)
			}
			if got := s.ok("status", "--input"); !strings.Contains(got, "Waiting for input: true\n") {
				t.Fatalf("status --input:\n%s", got)
			}
		})
	}
}

// A program busy in a CPU loop, or asleep, prints nothing and reads
// nothing: a quiet period would call it ready, the input wait must not.
func TestWaitInputBusy(t *testing.T) {
	t.Parallel()
	for name, script := range map[string]string{
		"cpu loop": "echo ready; while :; do :; done",
		"sleeping": "echo ready; sleep 600",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := start(t, "--", "sh", "-c", script)
			s.waitText("ready")
			r := s.run("wait", "--input", "--timeout", "1s")
			if r.code != exitTimeout || r.stdout != "Timed out after 1s\n" {
				t.Fatalf("wait --input on a busy program: %v", r)
			}
			if got := s.ok("status", "--input"); !strings.Contains(got, "Waiting for input: false\n") {
				t.Fatalf("status --input:\n%s", got)
			}
		})
	}
}

// The flag's misuse is a usage error, not a silent other wait.
func TestWaitInputUsage(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for _, args := range [][]string{
		{"wait", "--input", "--quiet-for", "1s"},
		{"wait", "--input", "--regex", "x"},
		{"input", "--text", "x", "--wait-input", "--wait-quiet", "1s"},
	} {
		r := s.run(args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, "cannot be combined") {
			t.Errorf("%v: %v", args, r)
		}
	}
}

// runAsync runs a ptyplex command against the session in the background;
// the channel delivers its result once it exits.
func (s *sess) runAsync(args ...string) <-chan result {
	s.t.Helper()
	cmd := exec.Command(bin, append(args[:1:1], append([]string{"--socket", s.sock}, args[1:]...)...)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("ptyplex %v: %v", args, err)
	}
	ch := make(chan result, 1)
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
			errb.WriteString(err.Error())
		}
		ch <- result{out.String(), errb.String(), code}
	}()
	return ch
}
