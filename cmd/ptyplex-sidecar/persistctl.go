//go:build unix

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/ptyplex/ptyplex/client"
	"github.com/ptyplex/ptyplex/internal/shquote"
	"github.com/ptyplex/ptyplex/internal/version"
	"github.com/ptyplex/ptyplex/proto"
	"github.com/ptyplex/ptyplex/session/wire"
	"github.com/ptyplex/ptyplex/sidecar/persist"
)

// --list, --stop and --upgrade speak to the running server through
// package client, as any Go host does; only the connection is made here:
// they dial the server's socket themselves, since they must not start a
// server that is not running (client.Persistent would, through a bridge),
// and they hold no terminal.

// connectServer connects a client to the running server name. An error
// has been reported on stderr; its exit code is returned.
func connectServer(name string) (*client.Client, int, error) {
	c, err := dialServer(name)
	if err != nil {
		if persist.NotRunning(err) {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: no persistent sidecar %q is running\n", name)
		} else {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		}
		return nil, 1, err
	}
	return c, 0, nil
}

// dialServer connects a client to server name's socket.
func dialServer(name string) (*client.Client, error) {
	nc, err := persist.Dial(name)
	if err != nil {
		return nil, err
	}
	return client.Connect(nc, nc), nil
}

// ctlBound is how long --list and --stop wait for the server.
const ctlBound = 30 * time.Second

func stop(name string) int {
	c, code, err := connectServer(name)
	if err != nil {
		return code
	}
	defer c.Close()
	was := persist.MarkServer(name) // the server we are connected to
	// The server closes every connection once its terminals have ended.
	ctx, cancel := context.WithTimeout(context.Background(), ctlBound)
	defer cancel()
	if err := c.Stop(ctx); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %q: %v\n", name, err)
		return 1
	}
	// The server closes the connections a moment before its process
	// ends and frees its lock: a bridge started in between would find
	// the lock taken, and a script that goes on to remove the journal
	// directory would race its last writes. "Gone" means the process.
	deadline, _ := ctx.Deadline()
	if err := persist.WaitGone(name, deadline, was); err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %v\n", err)
		return 1
	}
	return 0
}

func list(name string) int {
	c, code, err := connectServer(name)
	if err != nil {
		return code
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), ctlBound)
	defer cancel()
	ts, err := c.List(ctx)
	if err != nil {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: reading the list: %v\n", err)
		return 1
	}
	printList(os.Stdout, proto.Listed{Terminals: ts})
	return 0
}

func printList(w io.Writer, l proto.Listed) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPID\tSIZE\tPRODUCED\tJOURNAL FROM\tMODE\tSTATE\tCOMMAND")
	for _, t := range l.Terminals {
		state := "detached"
		if t.Attached {
			state = "attached"
		}
		if t.Dead {
			// Left by a server that died (--journal-dir): replayable,
			// and REVIVE starts it again.
			state = "dead"
		}
		if t.Exited {
			switch {
			case t.Signal != "":
				state += ", exited (" + t.Signal + ")"
			case t.ExitCode != nil:
				state += fmt.Sprintf(", exited (%d)", *t.ExitCode)
			default:
				state += ", exited"
			}
		}
		if t.Closing {
			// A CLOSE, or the orphan bound, sent it SIGHUP: SIGKILL
			// follows at the end of the grace period.
			state += ", closing"
		}
		if t.OrphanInMs != nil {
			// The orphan bound's clock (orphanInMs): when it closes it.
			state += ", closed in " + (time.Duration(*t.OrphanInMs) * time.Millisecond).Round(time.Second).String()
		}
		if t.JournalDirError != "" {
			// Its output no longer reaches --journal-dir (LIST has
			// why): a crash of the server would lose it.
			state += ", not on disk"
		}
		// As a shell reads it back, quoted where needed.
		cmd := shquote.Join(append([]string{t.Cmd}, t.Args...))
		fmt.Fprintf(tw, "%s\t%d\t%dx%d\t%d\t%d\t%s\t%s\t%s\n", printable(t.TerminalID), t.PID, t.Cols, t.Rows,
			t.Produced, t.Start, t.Detached, state, cmd)
	}
	if len(l.Terminals) == 0 {
		fmt.Fprintln(tw, "(no terminals)")
	}
	tw.Flush()
}

// printable quotes text that holds anything a terminal would act on
// (escape sequences, control characters), so a listing cannot repaint
// the screen it is printed on.
func printable(s string) string {
	for _, r := range s {
		if !strconv.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// upgradeBound is how long --upgrade waits for each step: the answer to
// UPGRADE (the server runs the new binary once to check it), the end of
// the connection (the exec), and the new image listening.
const upgradeBound = 10 * time.Second

// upgrade hands the running server's terminals to this binary: the server
// re-executes itself as it (see docs/persist.md).
func upgrade(name string) int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: upgrade of %q: "+format+"\n", append([]any{name}, args...)...)
		return 1
	}
	exe, err := os.Executable()
	if *upgradeBinary != "" {
		exe, err = *upgradeBinary, nil
	}
	if err == nil {
		exe, err = filepath.Abs(exe)
	}
	if err != nil {
		return fail("our own binary: %v", err)
	}
	// A server of a version without live upgrade would drop UPGRADE
	// unanswered: ask first.
	before, _, err := hello(name, upgradeBound)
	if err != nil {
		if persist.NotRunning(err) {
			fmt.Fprintf(os.Stderr, "ptyplex-sidecar: no persistent sidecar %q is running\n", name)
			return 1
		}
		return fail("%v", err)
	}
	if !before.Has(proto.FeatureUpgrade) {
		return fail("the running server (version %s) cannot be upgraded live; --stop ends it and its terminals", before.Version)
	}
	nc, err := persist.Dial(name)
	if err != nil {
		return fail("%v", err)
	}
	pid := wire.PeerPID(nc)
	c := client.Connect(nc, nc)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), upgradeBound)
	defer cancel()
	up, err := c.Upgrade(ctx, exe, version.Version)
	if se := (*client.ServerError)(nil); errors.As(err, &se) {
		fmt.Fprintf(os.Stderr, "ptyplex-sidecar: %s\n", se.Message)
		return 1
	}
	if err != nil {
		return fail("%v", err)
	}
	// The listening socket never closed: connections wait in its backlog
	// until the new image accepts them.
	deadline := time.Now().Add(upgradeBound)
	var h proto.Hello
	var newPID int
	for pause := 5 * time.Millisecond; ; pause = min(2*pause, 200*time.Millisecond) {
		h, newPID, err = hello(name, time.Until(deadline))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(pause)
	}
	if err != nil {
		return fail("the new server did not answer within %v: %v (see its log)", upgradeBound, err)
	}
	if h.Version != up.To {
		return fail("the server answers as version %q, not %q: did it go back to the previous binary? (see its log)", h.Version, up.To)
	}
	if pid != 0 && newPID != 0 && pid != newPID {
		return fail("the server is pid %d now, not %d", newPID, pid)
	}
	fmt.Printf("upgraded persistent sidecar %s (pid %d): %s, %s -> %s\n", name, newPID, persist.Terminals(up.Terminals), up.From, up.To)
	return 0
}

// hello connects to server name and returns its HELLO answer and pid,
// waiting at most bound.
func hello(name string, bound time.Duration) (proto.Hello, int, error) {
	nc, err := persist.Dial(name)
	if err != nil {
		return proto.Hello{}, 0, err
	}
	pid := wire.PeerPID(nc)
	c := client.Connect(nc, nc)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), max(bound, time.Millisecond))
	defer cancel()
	h, err := c.Hello(ctx)
	return h, pid, err
}
