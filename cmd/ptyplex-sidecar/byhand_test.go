//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"strings"
	"syscall"
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

// Ctrl-C pressed as soon as the note says it ends the sidecar ends it as
// the note promises: with its exit line and status 0, for the plain
// sidecar and the --persist bridge alike. The note came before the
// signals were caught, so a quick Ctrl-C killed it silently (seen on
// Windows, where the console is the same race). The bridge is tried
// twice: first when it starts the server itself, so the Ctrl-C may come
// while the server is its child still in its process group, and kill
// it (the bridge's own failure, exit 1, then raced its exit line); then
// with the server running, when the Ctrl-C comes to a bridge that is
// connected or connecting.
func TestCtrlCOnATerminalEndsTheSidecar(t *testing.T) {
	sidecar, err := hosttest.Binary("./cmd/ptyplex-sidecar")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PTYPLEX_RUNTIME_DIR", t.TempDir())
	t.Cleanup(func() { exec.Command(sidecar, "--persist", "ctrlc", "--stop").Run() })
	for i, args := range [][]string{nil, {"--persist", "ctrlc"}, {"--persist", "ctrlc"}} {
		if i == 2 {
			// A server that runs: a bridge whose host says nothing
			// starts it if the Ctrl-C above killed it (or reaches the
			// one that survived it) and leaves it running, for this
			// round and for the --stop at the end to find.
			settle := exec.Command(sidecar, "--persist", "ctrlc")
			settle.Stdin = strings.NewReader("")
			if out, err := settle.CombinedOutput(); err != nil {
				t.Fatalf("starting the server: %v\n%s", err, out)
			}
		}
		ptmx, tty, err := pty.Open()
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sidecar, args...)
		cmd.Stdin = tty
		// The terminal is its controlling terminal, so ^C is a SIGINT
		// from the line discipline, as it is for a person.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tty.Close()
		lines := make(chan string, 16)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				lines <- sc.Text()
			}
		}()
		var said []string
		wait := func(what string) bool {
			deadline := time.After(30 * time.Second)
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						return false
					}
					said = append(said, l)
					if strings.Contains(l, what) {
						return true
					}
				case <-deadline:
					return false
				}
			}
		}
		if !wait("standard input is a terminal") {
			t.Fatalf("%v: no note on stderr: %q", args, said)
		}
		ptmx.Write([]byte{3})
		if !wait("exiting with status 0: received SIGINT") {
			t.Errorf("%v: after ^C the sidecar said %q, want its exit line", args, said)
			cmd.Process.Kill() // it runs on: its stderr would never end
		}
		for l := range lines {
			said = append(said, l)
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: after ^C: %v, want status 0; it said %q", args, err, said)
		}
		ptmx.Close()
	}
}
