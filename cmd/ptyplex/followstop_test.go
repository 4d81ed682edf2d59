//go:build unix

package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestOutputFollowWhenTheSessionIsStopped: a session stopped while
// `output --follow` watches it (a CI script's `ptyplex stop` at the end)
// ends the program as its own exit would: the follower ends with exit 0,
// and --lines prints the lines still on the screen, as it does after an
// exit. Before, it failed with "Error: Daemon is shutting down" (exit 1)
// and the last screenful of the log was lost.
func TestOutputFollowWhenTheSessionIsStopped(t *testing.T) {
	t.Parallel()
	t.Run("lines", func(t *testing.T) {
		t.Parallel()
		// 30 lines on a 24-row screen: 1..7 scroll off, 8..30 stay.
		s := start(t, "--", "sh", "-c", "seq 1 30; exec sleep 1000")
		s.waitText("30")
		lines, done := follow(t, s.sock, "--lines", "--no-color")
		printed := expectLine(t, lines, "7") // the follower has read the session
		printed = append(printed, "7")
		s.ok("stop")
		for l := range lines {
			printed = append(printed, l)
		}
		if c := exitOf(t, done); c != 0 {
			t.Errorf("follow --lines exit code %d after stop", c)
		}
		var want []string
		for i := 1; i <= 30; i++ {
			want = append(want, fmt.Sprint(i))
		}
		if strings.Join(printed, ",") != strings.Join(want, ",") {
			t.Errorf("follow --lines printed\n%q\nwant\n%q", printed, want)
		}
	})
	t.Run("screens", func(t *testing.T) {
		t.Parallel()
		s := start(t, "--", "sh", "-c", "echo hello; exec sleep 1000")
		s.waitText("hello")
		lines, done := follow(t, s.sock, "--no-color")
		expectLine(t, lines, "hello")
		s.ok("stop")
		for range lines {
		}
		if c := exitOf(t, done); c != 0 {
			t.Errorf("follow exit code %d after stop", c)
		}
	})
}
