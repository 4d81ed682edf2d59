//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fifoSession runs `cat` on a FIFO: the test makes the program print by
// writing to the FIFO, which works while a WAIT holds the daemon (INPUT
// would queue behind it), and ends the program by closing the FIFO.
func fifoSession(t *testing.T) (*sess, *os.File) {
	t.Helper()
	return fifoSessionArgs(t)
}

// fifoSessionArgs is fifoSession with start flags.
func fifoSessionArgs(t *testing.T, flags ...string) (*sess, *os.File) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "feed")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	s := start(t, append(flags, "--", "sh", "-c", `exec cat "$0"`, fifo)...)
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // blocks until cat opens it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return s, w
}

// async runs ptyplex in the background.
func async(t *testing.T, args ...string) <-chan result {
	ch := make(chan result, 1)
	go func() { ch <- ptyplex(t, "", args...) }()
	return ch
}

func TestWaitDefaultWakesOnOutput(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	done := async(t, "wait", "--socket", s.sock)
	feed.WriteString("hello\n")
	r := <-done
	if r.code != 0 || r.stdout != "Terminal activity: true\nApplication exited: false\n" {
		t.Errorf("wait: %v", r)
	}
	feed.Close()
	r = s.run("wait", "--quiet")
	if r.code != 0 || r.stdout != "0\n" {
		t.Errorf("wait --quiet: %v", r)
	}
}

func TestWaitLineConditions(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	feed.WriteString("first line\n")
	s.waitText("first line")
	if out := s.ok("wait", "--line", "1", "--contains", "first"); out != "Condition already met on line 1\n" {
		t.Errorf("already met: %q", out)
	}
	if out := s.ok("wait", "--line", "2", "--not-contains", "x"); out != "Condition already met on line 2\n" {
		t.Errorf("not-contains already met: %q", out)
	}
	if out := s.ok("wait", "--regex", `fir.t\s+line`); out != "Condition already met on screen\n" {
		t.Errorf("regex already met: %q", out)
	}

	// Met later: the program prints while the wait blocks (or just before
	// it starts, which makes it "already met"; both are correct).
	done := async(t, "wait", "--socket", s.sock, "--line", "2", "--contains", "world")
	feed.WriteString("hello world\n")
	if r := <-done; r.code != 0 || (r.stdout != "Condition met on line 2\n" && r.stdout != "Condition already met on line 2\n") {
		t.Errorf("contains: %v", r)
	}
	// The program ends before the condition holds: one of wait's normal
	// answers, exit 0 (as interminai's).
	feed.Close()
	r := s.run("wait", "--line", "5", "--contains", "never")
	if r.code != 0 || r.stdout != "Application exited\n" {
		t.Errorf("exit before condition: %v", r)
	}
}

// TestWaitLineChange feeds new text for line 3 until the wait sees it
// change. The program acknowledges each line on a second FIFO after
// painting it, which paces the writes without involving the daemon (whose
// requests queue behind the WAIT under test); repeating covers a wait that
// took its baseline after an earlier write.
func TestWaitLineChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo, ack := filepath.Join(dir, "feed"), filepath.Join(dir, "ack")
	for _, f := range []string{fifo, ack} {
		if err := syscall.Mkfifo(f, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := start(t, "--", "sh", "-c", `exec 3>"$1"; while IFS= read -r l; do printf '\033[3;1H\033[2K%s' "$l"; echo >&3; done < "$0"`, fifo, ack)
	acks, err := os.OpenFile(ack, os.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer acks.Close()
	feed, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer feed.Close()
	done := async(t, "wait", "--socket", s.sock, "--line", "3")
	buf := make([]byte, 1)
	// Keep changing the line until the waiter, a separate process that may
	// be slow to start on a busy machine, reports it.
	end := time.Now().Add(deadline)
	for i := 0; ; i++ {
		select {
		case r := <-done:
			if r.code != 0 || r.stdout != "Condition met on line 3\n" {
				t.Errorf("line change: %v", r)
			}
			return
		default:
		}
		if time.Now().After(end) {
			t.Fatalf("wait --line 3 never saw the line change (%d changes)", i)
		}
		fmt.Fprintf(feed, "value-%d\n", i)
		if _, err := acks.Read(buf); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWaitFlagErrors(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	for _, args := range [][]string{
		{"wait", "--line", "1", "--contains", "a", "--not-contains", "b"},
		{"wait", "--line", "0", "--contains", "a"},
		{"wait", "--regex", "("},
	} {
		r := s.run(args...)
		if r.code == 0 || !strings.HasPrefix(r.stderr, "Error: ") {
			t.Errorf("%v: want an error, got %v", args, r)
		}
	}
	// interminai's words and exit code for these two.
	if r := s.run("wait", "--line", "1", "--contains", "a", "--not-contains", "b"); r.code != 1 || r.stderr != "Error: --not-contains and --contains are mutually exclusive\n" {
		t.Errorf("--contains with --not-contains: %v", r)
	}
	if r := s.run("wait", "--line", "0"); r.code != 1 || !strings.HasPrefix(r.stderr, "Error: line number must be 1 or greater (1-based)") {
		t.Errorf("--line 0: %v", r)
	}
}

// Combinations interminai's client accepts behave as there: --line wins
// over --quiet, and a line below the screen's last row reads as empty.
func TestWaitFollowsInterminaisPrecedence(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "80x24", "--", "cat")
	if r := s.run("wait", "--quiet", "--line", "1", "--not-contains", "zzz"); r.code != 0 || r.stdout != "Condition already met on line 1\n" {
		t.Errorf("--quiet --line: %v", r)
	}
	if r := s.run("wait", "--line", "99", "--not-contains", "a"); r.code != 0 || r.stdout != "Condition already met on line 99\n" {
		t.Errorf("--not-contains below the screen: %v", r)
	}
	if r := s.run("wait", "--line", "99", "--contains", "a", "--timeout", "200ms"); r.code != exitTimeout || r.stdout != "Timed out after 200ms\n" {
		t.Errorf("--contains below the screen: want a timeout, got %v", r)
	}
	// Still refused: --quiet with our own options.
	if r := s.run("wait", "--quiet", "--regex", "a"); r.code != 2 {
		t.Errorf("--quiet --regex: %v", r)
	}
}

// A line past 4096, the most rows a screen can have, can never show up.
// interminai takes it as a line that reads empty (--not-contains is met
// at once), and so does wait, with a note on stderr that says so; it used
// to say nothing, and a --contains waited for ever without a word.
func TestWaitLinePastTallestScreen(t *testing.T) {
	t.Parallel()
	s := start(t, "--size", "80x24", "--", "cat")
	note := "ptyplex wait: note: --line 99999 is past the tallest screen there can be (4096 rows): it always reads as empty\n"
	if r := s.run("wait", "--line", "99999", "--not-contains", "a"); r.code != 0 || r.stdout != "Condition already met on line 99999\n" || r.stderr != note {
		t.Errorf("--line 99999 --not-contains: %v", r)
	}
	if r := s.run("wait", "--line", "99999", "--contains", "a", "--timeout", "1s"); r.code == 0 || !strings.HasPrefix(r.stderr, note) {
		t.Errorf("--line 99999 --contains: %v", r)
	}
	if r := s.run("wait", "--line", "4096", "--not-contains", "a"); r.code != 0 || r.stdout != "Condition already met on line 4096\n" || r.stderr != "" {
		t.Errorf("--line 4096, the tallest screen's last: %v", r)
	}
}

func TestWaitTimeoutAndQuietFor(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	r := s.run("wait", "--timeout", "200ms")
	if r.code != exitTimeout || !strings.HasPrefix(r.stdout, "Timed out after 200ms") {
		t.Errorf("wait --timeout on an idle program: %v", r)
	}
	feed.WriteString("burst\n")
	r = s.run("wait", "--quiet-for", "150ms")
	if r.code != 0 || r.stdout != "Terminal quiet for 150ms\n" {
		t.Errorf("wait --quiet-for: %v", r)
	}
	r = s.run("wait", "--line", "4", "--contains", "never", "--timeout", "150ms")
	if r.code != exitTimeout {
		t.Errorf("line wait with --timeout: %v", r)
	}
}
