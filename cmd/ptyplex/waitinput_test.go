//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// burstProgram prints five bursts 300 ms apart after each line it reads,
// then asks again: a quiet period shorter than the pauses ends a wait in
// the middle, where a wait for input must not.
const burstProgram = `import time
n = 0
while True:
    input('ready %d> ' % n)
    n += 1
    for i in range(5):
        print('round %d burst %d' % (n, i), flush=True)
        time.sleep(0.3)
`

// The acceptance test of the input wait: 50 rounds, over five sessions
// at once (a round takes 1.5 s). In each, input --wait-input must come
// back only once the fifth burst and the next prompt are on the screen,
// while a 200 ms quiet wait, the heuristic it replaces, comes back early
// in most rounds.
func TestWaitInputAfterBursts(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	const sessions, rounds = 5, 10
	for i := 0; i < sessions; i++ {
		t.Run(fmt.Sprint("session", i), func(t *testing.T) {
			t.Parallel()
			s := start(t, "--size", "80x40", "--", "python3", "-c", burstProgram)
			s.waitText("ready 0>")
			early := 0
			for n := 1; n <= rounds; n++ {
				// The heuristic: did the quiet wait return before the end?
				r := s.run("input", "--text", "x", "--keys", "Enter", "--wait-quiet", "200ms", "--timeout", deadline.String())
				if r.code != 0 {
					t.Fatalf("round %d quiet wait: %v", n, r)
				}
				if !strings.Contains(s.screen(), fmt.Sprintf("ready %d>", 2*n-1)) {
					early++
				}
				// Let the round end before the next: wait --input here too.
				if r := s.run("wait", "--input", "--timeout", deadline.String()); r.code != 0 || r.stdout != "Waiting for input\n" {
					t.Fatalf("round %d: wait --input: %v", n, r)
				}
				scr := s.screen()
				if !strings.Contains(scr, fmt.Sprintf("round %d burst 4", 2*n-1)) || !strings.Contains(scr, fmt.Sprintf("ready %d>", 2*n-1)) {
					t.Fatalf("round %d: wait --input returned before the prompt:\n%s", n, scr)
				}
				// The input wait, tied to the input.
				r = s.run("input", "--text", "x", "--keys", "Enter", "--wait-input", "--timeout", deadline.String())
				if r.code != 0 || r.stdout != "Waiting for input\n" {
					t.Fatalf("round %d: input --wait-input: %v", n, r)
				}
				scr = s.screen()
				if !strings.Contains(scr, fmt.Sprintf("round %d burst 4", 2*n)) || !strings.Contains(scr, fmt.Sprintf("ready %d>", 2*n)) {
					t.Errorf("round %d: input --wait-input returned early:\n%s", n, scr)
				}
			}
			// A 200 ms quiet period inside 300 ms pauses: it returns early
			// almost always; "most rounds" leaves room for a slow machine.
			if early <= rounds/2 {
				t.Errorf("the quiet wait returned early in only %d of %d rounds; the test no longer shows what it should", early, rounds)
			}
			t.Logf("quiet_ms=200 returned early in %d of %d rounds; --wait-input in none", early, rounds)
		})
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
