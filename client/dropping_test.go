//go:build unix

package client

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Stop while a reconnecting client was down wrote its STOP to the dead
// connection, failed with ErrSidecarGone, and ended the client: its
// terminals finished with "client closed" while the server, which never
// got the STOP, kept them. Now it fails with ErrDisconnected, sends
// nothing, and the client reconnects; a Stop once it is back ends the
// server, and the server's end is not taken for a drop.
func TestStopWhileDisconnected(t *testing.T) {
	rig := newLocalRig(t, "stopdown")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	term := open(t, c, OpenOptions{Cmd: "cat"})
	out := collect(term)
	os.WriteFile(rig.gate, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventDisconnected, 1)

	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	if err := c.Stop(ctx); !errors.Is(err, ErrDisconnected) || !strings.HasPrefix(err.Error(), "stop: ") {
		t.Fatalf("Stop while down: %v; want an error wrapping ErrDisconnected", err)
	}
	select {
	case <-c.Done():
		t.Fatalf("the client ended after a Stop that sent nothing: %v", c.Err())
	case <-term.Done():
		_, err := term.Wait()
		t.Fatalf("the terminal ended after a Stop that sent nothing: %v", err)
	default:
	}
	os.Remove(rig.gate)
	ev.next(t, EventReconnected, 1)
	if _, err := term.Write([]byte("still here\n")); err != nil {
		t.Fatal(err)
	}
	out.waitText(t, "still here\r\nstill here\r\n")

	if err := c.Stop(ctx); err != nil {
		t.Fatalf("Stop once reconnected: %v", err)
	}
	select {
	case <-c.Done():
	case <-ctx.Done():
		t.Fatal("the client did not end after Stop")
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err after Stop: %v", err)
	}
	if st, err := term.Wait(); err != nil || st.Signal != "SIGKILL" {
		t.Errorf("the terminal after Stop: %v, %v; want SIGKILL", st, err)
	}
	if n := ev.count(EventDisconnected); n != 1 {
		t.Errorf("%d Disconnected events; the server's end after Stop is no drop", n)
	}
}

// A transport whose input fails while its output stays open (here a
// stand-in that closes its stdin as it answers HELLO): every request's
// write fails. A reconnecting client reported those as ErrSidecarGone,
// as if it had ended, and since nothing ended its reading it never
// noticed the drop: it neither reconnected nor ended. Now each request
// fails with ErrDisconnected and the connection is killed, which starts
// the reconnect; each new connection is as deaf, so each request below
// meets a fresh one.
func TestFailedWriteIsADrop(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ev := newEvents()
	c, err := Start(Options{
		Transport: []string{exe, "-test.run=^$"},
		Env:       append(os.Environ(), hostileEnv+"=deafpersist"),
		Stderr:    testLog{t},
		Reconnect: &ReconnectPolicy{InitialDelay: time.Millisecond, Attempts: -1, OnEvent: ev.on},
	})
	if err != nil {
		t.Fatal(err)
	}
	c.closeBound = time.Second // the stand-in never ends by itself
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	requests := []struct {
		name string
		do   func() error
	}{
		{"list terminals", func() error { _, err := c.List(ctx); return err }},
		{"open terminal", func() error { _, err := c.Open(ctx, OpenOptions{Cmd: "cat"}); return err }},
		{"attach terminal", func() error { _, err := c.Attach(ctx, "a", 0); return err }},
		{"revive terminal", func() error { _, err := c.Revive(ctx, "r"); return err }},
		{"hello", func() error { _, err := c.Hello(ctx); return err }},
		{"upgrade", func() error { _, err := c.Upgrade(ctx, exe, "v"); return err }},
	}
	for i, r := range requests {
		if i > 0 {
			ev.next(t, EventReconnected, i)
		}
		err := r.do()
		if !errors.Is(err, ErrDisconnected) || errors.Is(err, ErrSidecarGone) || !strings.HasPrefix(err.Error(), r.name) {
			t.Errorf("%s on a connection whose writes fail: %v; want an error wrapping ErrDisconnected alone", r.name, err)
		}
		ev.next(t, EventDisconnected, i+1)
	}
}

// A client that gave up reconnecting has ended: its requests said
// "disconnected: reconnecting" (ErrDisconnected, which tells a host to try
// again later) for good. They now fail with the end, ErrSidecarGone, as
// Write does; Pid stays 0.
func TestRequestsAfterGivingUp(t *testing.T) {
	rig := newLocalRig(t, "afterup")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond, Attempts: 1})
	os.WriteFile(rig.fail, nil, 0o600)
	syscall.Kill(c.Pid(), syscall.SIGKILL)
	ev.next(t, EventGaveUp, 1)
	<-c.Done()
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	for name, do := range map[string]func() error{
		"open terminal":   func() error { _, err := c.Open(ctx, OpenOptions{Cmd: "cat"}); return err },
		"attach terminal": func() error { _, err := c.Attach(ctx, "a", 0); return err },
		"revive terminal": func() error { _, err := c.Revive(ctx, "r"); return err },
		"list terminals":  func() error { _, err := c.List(ctx); return err },
		"hello":           func() error { _, err := c.Hello(ctx); return err },
		"upgrade":         func() error { _, err := c.Upgrade(ctx, "/x", "v"); return err },
		"stop":            func() error { return c.Stop(ctx) },
	} {
		if err := do(); !errors.Is(err, ErrSidecarGone) || errors.Is(err, ErrDisconnected) {
			t.Errorf("%s after giving up: %v; want the client's end (ErrSidecarGone), not ErrDisconnected", name, err)
		}
	}
	if pid := c.Pid(); pid != 0 {
		t.Errorf("Pid after giving up: %d", pid)
	}
}

// A CLOSE or DETACH written as the connection died unnoticed (here into
// the pipe of a stopped ssh client, then killed) is lost with it. The
// resume then reattached both terminals as if nothing had been asked:
// the closed one ran on and its Wait never returned, the detached one
// was held again for good. Now a closed terminal's CLOSE is sent again
// after its ATTACH, and a detached one is not reattached: the drop let
// it go, as the DETACH would have.
func TestCloseAndDetachSurviveADrop(t *testing.T) {
	rig := newResumeRig(t, "closedrop")
	ev := newEvents()
	c := rig.start(t, ev, ReconnectPolicy{InitialDelay: time.Millisecond})
	closing := open(t, c, OpenOptions{Cmd: "cat"})
	detaching := open(t, c, OpenOptions{Cmd: "cat"})
	pid := c.Pid()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := closing.Close(); err != nil {
		t.Fatal(err)
	}
	if err := detaching.Detach(); err != nil {
		t.Fatal(err)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	ev.next(t, EventReconnected, 1)

	for _, term := range []*Terminal{closing, detaching} {
		select {
		case <-term.Done():
		case <-time.After(resumeBound):
			t.Fatalf("terminal %q did not end after the reconnect", term.ID())
		}
	}
	if st, err := closing.Wait(); err != nil || st.Signal != "SIGHUP" {
		t.Errorf("the closed terminal: %v, %v; want it hung up", st, err)
	}
	if _, err := detaching.Wait(); !errors.Is(err, ErrDetached) {
		t.Errorf("the detached terminal: %v; want ErrDetached", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), resumeBound)
	defer cancel()
	l, err := c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range l {
		if e.TerminalID == detaching.ID() {
			found = true
			if e.Attached || e.Exited {
				t.Errorf("the detached terminal on the server: %+v; want it running, unheld", e)
			}
		}
	}
	if !found {
		t.Errorf("the detached terminal is not on the server: %+v", l)
	}
}
