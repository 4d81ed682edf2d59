//go:build linux

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStopContinuesAStoppedProgram: STOP of a program that is stopped
// (kill --signal 19, or a program that suspended itself) lets it act on
// the SIGHUP and SIGTERM it is sent, as a real terminal's hangup does by
// continuing a stopped group, rather than leaving it stopped until the
// SIGKILL two seconds later kills it without a chance to clean up.
func TestStopContinuesAStoppedProgram(t *testing.T) {
	t.Parallel()
	mark := filepath.Join(t.TempDir(), "ended")
	s := start(t, "--", "sh", "-c",
		`trap 'echo cleaned up > "$0"; exit 0' HUP TERM; echo "pid=$$"; while :; do sleep 0.05; done`, mark)
	scr := s.waitText("pid=")
	_, rest, _ := strings.Cut(scr, "pid=")
	pid, err := strconv.Atoi(strings.Fields(rest)[0])
	if err != nil {
		t.Fatalf("no pid on the screen:\n%s", scr)
	}
	s.ok("kill", "--signal", "19") // SIGSTOP
	waitProcState(t, pid, 'T')
	s.ok("stop")
	b, err := os.ReadFile(mark)
	if err != nil || string(b) != "cleaned up\n" {
		t.Fatalf("the stopped program was not continued to handle STOP's signals (its trap did not run): %q, %v", b, err)
	}
}

// waitProcState waits until /proc says pid is in state (R, S, T, ...).
// The kernel announces no state change to a process that is not the
// parent, so this looks again every few milliseconds, up to the deadline.
func waitProcState(t *testing.T, pid int, state byte) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		i := strings.LastIndexByte(string(stat), ')')
		if err == nil && i >= 0 && i+2 < len(stat) && stat[i+2] == state {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("process %d never reached state %c: %q, %v", pid, state, stat, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
