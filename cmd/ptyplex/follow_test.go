//go:build unix

package main

import (
	"bufio"
	"fmt"
	"os/exec"
	"strings"
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
