//go:build unix

package main

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ptyplex/ptyplex/internal/testing/hosttest"
)

// Run by hand in a terminal, the sidecar says what it is on stderr before
// anyone types a line, which it would read as a frame header; run by a
// host (stdin a pipe) it says nothing.
func TestSaysWhatItIsOnATerminal(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PTYPLEX_RUNTIME_DIR", t.TempDir())
	for _, c := range []struct {
		args       []string
		onTTY, say bool
	}{
		{nil, true, true},
		{nil, false, false},
		{[]string{"--persist", "byhand"}, true, true},
		{[]string{"--persist", "byhand", "--list"}, true, false}, // an action, not frames
	} {
		onTTY := c.onTTY
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, sidecar, c.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if onTTY {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = tty
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			tty.Close()
			// ^D at the start of a line: end of input, and the sidecar ends.
			ptmx.Write([]byte{4})
			cmd.Wait()
			ptmx.Close()
		} else {
			cmd.Stdin = strings.NewReader("")
			cmd.Run()
		}
		cancel()
		said := strings.Contains(stderr.String(), "standard input is a terminal")
		if said != c.say {
			t.Errorf("%v, stdin a terminal: %v; the note on stderr: %v\n%s", c.args, onTTY, said, stderr.String())
		}
	}
	stop := exec.Command(sidecar, "--persist", "byhand", "--stop")
	stop.Run()
}
