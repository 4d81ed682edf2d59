//go:build unix

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// follow runs `ptyplex output --follow ...` and delivers its stdout line
// by line; done reports its exit code.
func follow(t *testing.T, sock string, args ...string) (lines <-chan string, done <-chan int) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"output", "--socket", sock, "--follow"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lc := make(chan string, 1000)
	dc := make(chan int, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lc <- sc.Text()
		}
		close(lc)
		cmd.Wait()
		dc <- cmd.ProcessState.ExitCode()
	}()
	return lc, dc
}

// expectLine reads lines until want and returns the ones before it.
func expectLine(t *testing.T, lines <-chan string, want string) []string {
	t.Helper()
	var seen []string
	timeout := time.After(deadline)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("follow ended before %q; printed %q", want, seen)
			}
			if l == want {
				return seen
			}
			seen = append(seen, l)
		case <-timeout:
			t.Fatalf("follow did not print %q; printed %q", want, seen)
		}
	}
}

func exitOf(t *testing.T, done <-chan int) int {
	t.Helper()
	select {
	case c := <-done:
		return c
	case <-time.After(deadline):
		t.Fatal("follow did not end when the program exited")
		return -1
	}
}

func TestOutputFollowScreens(t *testing.T) {
	t.Parallel()
	s, feed := fifoSession(t)
	lines, done := follow(t, s.sock, "--no-color")
	feed.WriteString("one\n")
	expectLine(t, lines, "one")
	feed.WriteString("two\n")
	// The next screen comes after a separator and holds both lines.
	expectLine(t, lines, "----")
	if got := expectLine(t, lines, "two"); len(got) == 0 || got[len(got)-1] != "one" {
		t.Errorf("second screen: %q", got)
	}
	feed.Close()
	if c := exitOf(t, done); c != 0 {
		t.Errorf("follow exit code %d", c)
	}
}

// The log of a program through a tiny scrollback ring: every line once, in
// order. The test writes a line only once the follower has printed the one
// that scrolled off before, so the 5-line ring never overflows.
func TestOutputFollowLines(t *testing.T) {
	t.Parallel()
	for _, sb := range []string{"1000", "5"} {
		t.Run("scrollback="+sb, func(t *testing.T) {
			t.Parallel()
			s, feed := fifoSessionArgs(t, "--size", "20x5", "--scrollback", sb)
			feed.WriteString("before\n") // already on the screen when follow starts
			s.waitText("before")
			lines, done := follow(t, s.sock, "--lines", "--no-color")
			var printed []string
			for i := 1; i <= 30; i++ {
				feed.WriteString(fmt.Sprintf("L%d\n", i))
				if i >= 5 { // "before", L1..L(i-4) have scrolled off the 5-line screen
					want := fmt.Sprintf("L%d", i-4)
					printed = append(printed, expectLine(t, lines, want)...)
					printed = append(printed, want)
				}
			}
			feed.Close()
			for l := range lines {
				printed = append(printed, l)
			}
			if c := exitOf(t, done); c != 0 {
				t.Errorf("follow exit code %d", c)
			}
			want := []string{"before"}
			for i := 1; i <= 30; i++ {
				want = append(want, fmt.Sprintf("L%d", i))
			}
			if strings.Join(printed, ",") != strings.Join(want, ",") {
				t.Errorf("follow --lines printed\n%q\nwant\n%q", printed, want)
			}
		})
	}
}

// Lines that scroll by and leave the scrollback before follow --lines
// reads them are marked where they are missing, with their number, as run
// marks them (before, they were left out silently). The follower is
// stopped (SIGSTOP) while 100 lines go through a 5-line scrollback, so the
// gap is certain.
//
// A daemon that does not report scrolled_off (an older ptyplex; here a
// proxy that removes it) cannot say how many lines: the gap line says so.
func TestOutputFollowLinesMarksGaps(t *testing.T) {
	t.Parallel()
	t.Run("counted", func(t *testing.T) { t.Parallel(); testFollowGaps(t, false) })
	t.Run("older daemon", func(t *testing.T) { t.Parallel(); testFollowGaps(t, true) })
}

func testFollowGaps(t *testing.T, older bool) {
	s, feed := fifoSessionArgs(t, "--size", "20x5", "--scrollback", "5")
	sock := s.sock
	if older {
		sock = withoutScrolledOff(t, s.sock)
	}
	cmd := exec.Command(bin, "output", "--socket", sock, "--follow", "--lines", "--no-color")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	lc := make(chan string, 1000)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lc <- sc.Text()
		}
		close(lc)
	}()
	var printed []string
	for i := 1; i <= 10; i++ {
		feed.WriteString(fmt.Sprintf("L%d\n", i))
		if i >= 5 { // each line once the follower printed the one before it: no gap yet
			want := fmt.Sprintf("L%d", i-4)
			printed = append(printed, expectLine(t, lc, want)...)
			printed = append(printed, want)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for i := 11; i <= 110; i++ {
		feed.WriteString(fmt.Sprintf("L%d\n", i))
	}
	s.waitText("L110")
	if err := cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	for l := range lc {
		printed = append(printed, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("follow: %v\n%s", err, stderr.String())
	}
	// Every line is printed once, in order, or counted in a gap line.
	next, gaps := 1, 0
	for _, l := range printed {
		var n int
		if _, err := fmt.Sscanf(l, "@@ ptyplex output: %d lines here had already left the scrollback", &n); err == nil && strings.HasSuffix(l, " @@") && !older {
			next += n
			gaps++
			continue
		}
		if older && strings.HasPrefix(l, "@@ ptyplex output: lines here had already left the scrollback (how many, this daemon does not say)") {
			// Lines follow from a later one.
			for i := next; i <= 110; i++ {
				if slices.Contains(printed, fmt.Sprintf("L%d", i)) {
					next = i
					break
				}
			}
			gaps++
			continue
		}
		if l != fmt.Sprintf("L%d", next) {
			t.Fatalf("line %q where L%d (or a gap line) was due; printed:\n%s", l, next, strings.Join(printed, "\n"))
		}
		next++
	}
	if next != 111 || gaps == 0 {
		t.Fatalf("printed up to L%d with %d gap lines; want L110 and a gap:\n%s", next-1, gaps, strings.Join(printed, "\n"))
	}
	if !strings.Contains(stderr.String(), "ptyplex output: ") || !strings.Contains(stderr.String(), "lines here had already left the scrollback") {
		t.Errorf("stderr does not repeat the gap: %q", stderr.String())
	}
}

// withoutScrolledOff serves a socket that forwards every request to sock
// and removes "scrolled_off" from the answers, as an older daemon answers.
func withoutScrolledOff(t *testing.T, sock string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "older.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer up.Close()
				in, back := bufio.NewReader(c), bufio.NewReader(up)
				for {
					req, err := in.ReadBytes('\n')
					if err != nil {
						return
					}
					if _, err := up.Write(req); err != nil {
						return
					}
					ans, err := back.ReadBytes('\n')
					if err != nil {
						return
					}
					var m map[string]any
					d := json.NewDecoder(bytes.NewReader(ans))
					d.UseNumber()
					if d.Decode(&m) == nil {
						delete(m, "scrolled_off")
						if data, ok := m["data"].(map[string]any); ok {
							delete(data, "scrolled_off")
						}
						ans, _ = json.Marshal(m)
						ans = append(ans, '\n')
					}
					if _, err := c.Write(ans); err != nil {
						return
					}
				}
			}()
		}
	}()
	return path
}
