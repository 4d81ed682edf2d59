//go:build unix

package main

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"
)

// pendingWait sends req on a connection of its own and returns a channel
// that delivers the answer line once it comes.
func pendingWait(t *testing.T, sock, req string) <-chan string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(3 * deadline))
	if _, err := c.Write([]byte(req + "\n")); err != nil {
		t.Fatal(err)
	}
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(c).ReadString('\n')
		ch <- strings.TrimSuffix(line, "\n")
	}()
	return ch
}

// within fails the test unless f finishes before the deadline.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(deadline):
		t.Fatalf("%s did not finish within %v: held back by the pending WAIT?", what, deadline)
	}
}

func TestPendingWaitBlocksNoOtherClient(t *testing.T) {
	t.Parallel()
	s := start(t, "--", "cat")
	exitWait := pendingWait(t, s.sock, `{"type":"WAIT"}`) // until cat exits
	activityWait := pendingWait(t, s.sock, `{"type":"WAIT","activity":true,"timeout_ms":600000}`)
	// Both WAITs are pending (cat has printed nothing); the CLI's requests
	// on other connections are answered meanwhile, INPUT included.
	within(t, "status", func() { s.ok("status") })
	within(t, "input", func() { s.input("ping\r") })
	within(t, "output", func() { s.waitText("ping") })
	if got := <-activityWait; !strings.Contains(got, `"activity":true`) {
		t.Errorf("activity WAIT after input: %s", got)
	}
	select {
	case got := <-exitWait:
		t.Fatalf("exit WAIT answered while cat runs: %s", got)
	default:
	}
	// STOP is not held back either; the exit WAIT gets its answer.
	within(t, "stop", func() { s.ok("stop") })
	select {
	case got := <-exitWait:
		if !strings.Contains(got, `"status"`) {
			t.Errorf("exit WAIT after STOP: %q", got)
		}
	case <-time.After(deadline):
		t.Fatal("the pending WAIT got no answer when the daemon stopped")
	}
}
