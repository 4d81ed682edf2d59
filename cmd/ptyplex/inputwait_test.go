//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// The python loop an agent runs: type a command, wait for the prompt. Each
// command sleeps before it prints, so a wait that returned on the old
// prompt would come back before the result is on the screen.
func TestInputWaitNeverReturnsOnTheOldPrompt(t *testing.T) {
	t.Parallel()
	requireTool(t, "python3")
	// 50 rounds, over five sessions at once.
	const sessions, rounds = 5, 10
	for n := 0; n < sessions; n++ {
		t.Run(fmt.Sprint("session", n), func(t *testing.T) {
			t.Parallel()
			s := start(t, "--size", "100x30", "--", "python3", "-q")
			s.waitFor("the python prompt", func(scr string) bool { return strings.Contains(scr, ">>>") })
			stale := 0
			for i := 1; i <= rounds; i++ {
				want := fmt.Sprint(i * 7)
				r := s.run("input", "--text", fmt.Sprintf("import time; time.sleep(0.02); print(%d*7)", i), "--keys", "Enter",
					"--wait-regex", `>>> ?$`, "--timeout", deadline.String())
				if r.code != 0 || r.stdout != "Condition met on screen\n" {
					t.Fatalf("round %d: %v", i, r)
				}
				lines := strings.Split(strings.TrimRight(s.screen(), "\n"), "\n")
				if len(lines) < 2 || lines[len(lines)-2] != want || strings.TrimSpace(lines[len(lines)-1]) != ">>>" {
					stale++
					t.Errorf("round %d returned before the result %s and the new prompt:\n%s", i, want, strings.Join(lines, "\n"))
				}
			}
			if stale > 0 {
				t.Errorf("%d of %d waits returned on the old prompt", stale, rounds)
			}
		})
	}
}

func TestInputWaitModes(t *testing.T) {
	t.Parallel()
	s := shell(t)
	// --wait-contains looks only at later output (the command line's echo
	// does not contain the text; its output does).
	r := s.run("input", "--text", `echo one; sleep 0.05; echo tw''o-done\r`, "--wait-contains", "two-done", "--timeout", deadline.String())
	if r.code != 0 || r.stdout != "Condition met on screen\n" {
		t.Fatalf("--wait-contains: %v", r)
	}
	if scr := s.screen(); !strings.Contains(scr, "\ntwo-done\n") {
		t.Fatalf("returned before the output:\n%s", scr)
	}
	// --wait-quiet: settles after the burst.
	r = s.run("input", "--text", `printf 'q%s\n' 1 2 3\r`, "--wait-quiet", "200ms", "--timeout", deadline.String())
	if r.code != 0 || r.stdout != "Terminal quiet for 200ms\n" {
		t.Fatalf("--wait-quiet: %v", r)
	}
	// A condition that never comes true times out like wait.
	r = s.run("input", "--text", `\r`, "--wait-contains", "never printed", "--timeout", "300ms")
	if r.code != exitTimeout || r.stdout != "Timed out after 300ms\n" {
		t.Fatalf("timeout: %v", r)
	}
	// The program exits before the condition.
	r = s.run("input", "--text", `exit 3\r`, "--wait-regex", "never", "--timeout", deadline.String())
	if r.code != 1 || r.stdout != "Application exited\n" {
		t.Fatalf("exit: %v", r)
	}
}

func TestInputWaitBadFlagsSendNothing(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for _, args := range [][]string{
		{"--text", "lost", "--wait-regex", "("},
		{"--text", "lost", "--wait-regex", "x", "--wait-quiet", "1s"},
		{"--text", "lost", "--timeout", "1s"},
		{"--text", "lost", "--wait-quiet", "0s"},
		{"--keys", "Enter", "NoSuchKey"},
		{"--text", "lost", "stray"},
		{"--text", `lost\x4g`},
		{"--text", `lost\x4`},
	} {
		r := s.run(append([]string{"input"}, args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, "Error:") {
			t.Errorf("input %q: %v", args, r)
		}
	}
	if scr := s.screen(); strings.Contains(scr, "lost") || strings.TrimSpace(scr) != "" {
		t.Errorf("a refused input reached the program:\n%s", scr)
	}
	// interminai's words and exit code for a bad \x.
	if r := s.run("input", "--text", `\xZZ`); r.code != 1 || r.stderr != "Error: invalid hex escape: \\xZZ\n" {
		t.Errorf("input --text \\xZZ: %v", r)
	}
}

// One matching semantics: the CLI drops the screen's trailing blank lines
// as the MCP server does, so "$" is the end of the last printed line.
func TestWaitRegexIgnoresTrailingBlankLines(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	feed.WriteString("first\nready 42\n")
	s.waitText("ready 42")
	if out := s.ok("wait", "--regex", `ready \d+$`, "--timeout", deadline.String()); out != "Condition already met on screen\n" {
		t.Errorf("end of the last printed line: %q", out)
	}
	if out := s.ok("wait", "--regex", `(?m)^first$`, "--timeout", deadline.String()); out != "Condition already met on screen\n" {
		t.Errorf("(?m) line anchors: %q", out)
	}
	r := s.run("wait", "--regex", `first$`, "--timeout", "200ms")
	if r.code != exitTimeout {
		t.Errorf("$ without (?m) matched an inner line: %v", r)
	}
	if out := s.ok("wait", "--help"); !strings.Contains(out, "(?m)") || !strings.Contains(out, "trailing blank lines") {
		t.Errorf("wait --help does not document the matching:\n%s", out)
	}
}
