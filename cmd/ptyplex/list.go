//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/ptyplex/ptyplex/internal/shquote"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("list", "list this user's sessions (--json, --prune stale sockets)", runList)
}

const listAbout = `
Lists this user's sessions, oldest first: socket, daemon pid, state
(running, exited with its code, stale, unreachable), size, age and command.
Sessions are found in the session registry every daemon writes itself into
($PTYPLEX_RUNTIME_DIR, else $XDG_RUNTIME_DIR/ptyplex, else
/tmp/ptyplex-<uid>, or ~/.cache/ptyplex/sessions when another user holds
that name in /tmp; both variables must be absolute paths: a relative
XDG_RUNTIME_DIR is ignored, a relative PTYPLEX_RUNTIME_DIR refused) and by
their /tmp/interminai-* socket directories.
Each session is asked for its status; nothing is changed. With
PTYPLEX_RUNTIME_DIR set, only that registry is read.

A stale session is a socket whose daemon is gone (killed, or the machine
went down): nobody listens on it. A registry entry whose daemon is gone
while a session started since serves its socket is stale too (that
session is listed as itself). --prune removes stale sockets, their
private /tmp/interminai-* directories and their registry entries (only
the entry when another session serves the socket), and says what it
removed. Live sessions are never touched.

The command is shown as a shell reads it back: an argument with spaces or
shell characters in quotes ('seq 3; sleep 1000'), one with characters a
terminal would act on in $'...' with escapes. --json prints one JSON array
with the same fields, the command's arguments as they are. The MCP
server's list tool shows the same sessions.`

func runList(args []string) int {
	c := newCLI("list", "ptyplex list [--json] [--prune]", listAbout, false)
	asJSON := c.fs.Bool("json", false, "print the sessions as a JSON array")
	prune := c.fs.Bool("prune", false, "remove the sockets and registry entries of stale sessions")
	if done, code := c.parse(args); done {
		return code
	}
	if c.fs.NArg() > 0 {
		return c.usageError("unexpected arguments: %v", c.fs.Args())
	}
	// Someone else holding the usual registry directory is worth saying:
	// the sessions are still listed, from the fallback directory.
	if _, note, err := wire.RegistryDirNote(); err == nil && note != "" {
		fmt.Fprintf(os.Stderr, "Note: %s\n", note)
	}
	list, err := wire.List(context.Background())
	if err != nil {
		fmt.Fprintf(os.Stderr, "Error: %v\n", err)
		return exitFail
	}
	code := exitOK
	var removed []string
	if *prune {
		removed, err = wire.Prune(list)
		if err != nil {
			fmt.Fprintf(os.Stderr, "Error: %v\n", err)
			code = exitFail
		}
	}
	if *asJSON {
		if list == nil {
			list = []wire.Listed{}
		}
		b, _ := json.Marshal(list)
		fmt.Println(string(b))
		return code
	}
	if len(list) == 0 {
		fmt.Println("No sessions.")
		return code
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "SOCKET\tPID\tSTATE\tSIZE\tAGE\tCOMMAND")
	for _, l := range list {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", l.Socket, pidText(l.PID), stateText(l), sizeText(l.Size),
			(time.Duration(l.AgeSeconds) * time.Second).String(), commandText(l))
	}
	w.Flush()
	for _, r := range removed {
		fmt.Printf("Removed stale session %s\n", r)
	}
	return code
}

func stateText(l wire.Listed) string {
	if l.State == wire.StateExited && l.ExitCode != nil {
		return fmt.Sprintf("exited(%d)", *l.ExitCode)
	}
	return l.State
}

func pidText(pid int) string {
	if pid <= 0 {
		return "-"
	}
	return fmt.Sprint(pid)
}

func sizeText(s *wire.Size) string {
	if s == nil {
		return "-"
	}
	return fmt.Sprintf("%dx%d", s.Cols, s.Rows)
}

// commandText is the COMMAND column: the arguments as a shell reads them
// back, quoted where needed (--json has them as they are).
func commandText(l wire.Listed) string {
	if len(l.Command) == 0 {
		return "?"
	}
	return shquote.Join(l.Command)
}
