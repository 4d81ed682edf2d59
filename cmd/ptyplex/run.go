//go:build unix

package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/ptyplex/ptyplex/internal/session/termfilter"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("run", "run a shell command at the session's prompt; print its output, exit with its status", runRun)
	register("commands", "list the shell's last commands with their exit codes and output lines", runCommands)
}

const runAbout = `
Types COMMAND at the prompt of a shell started with
'ptyplex start --shell-integration -- bash' (or zsh), waits until the shell
reports that it ended, prints the command's output alone (not the prompt or
the command line; from the scrollback if it scrolled off the screen) and
exits with the command's exit status, as 'sh -c COMMAND' would. Several
arguments are joined with spaces into one command line.

Use it for shell commands; use input/wait/output for programs that take
over the terminal (vim, a REPL, a pager). A command is typed only once the
prompt shows: after an earlier command that is still running has ended.

--timeout D stops waiting after D: what the command printed so far goes to
stdout, a note to stderr that it is still running, and run exits 124 (as
wait does). The command is left running; the next run waits for it to end
before it types. Without --timeout run waits as long as the command takes.
When the timeout passes while an earlier command still runs, COMMAND was
never typed: stdout is empty, stderr says so, and run exits 124.

A command that ends the shell (exit 7) exits with the shell's status, and
stderr says the shell exited. Once the shell has exited, run types nothing:
it fails with "Process not running: the shell exited (status N) ...", exit 1.

A shell that reports nothing (started without --shell-integration, and not
sending OSC 133 marks itself) gets an error naming the flag, exit 1.
The output is the screen's text: colours are dropped, tabs are spaces,
trailing spaces of a line are dropped (the screen does not keep them apart
from blank cells once a line scrolls into the scrollback), and lines the
scrollback no longer held are left out: a first line
"@@ ptyplex run: the first N lines of the output had already left the
scrollback ... @@" says so on stdout (and stderr repeats it). --keep-lines N
keeps up to N lines (at most 1,000,000): the session's scrollback grows to N
lines before the command is typed, and stays that large. Lines the command
erased itself, clearing the scrollback (clear), cannot be kept: the first
line then says "... were erased: the command cleared the scrollback ...".

Example:
  ptyplex start --shell-integration --socket /tmp/s -- bash
  ptyplex run --socket /tmp/s -- 'make test'; echo "status $?"`

func runRun(args []string) int {
	c := newCLI("run", "ptyplex run --socket PATH [--timeout D] [--keep-lines N] -- COMMAND", runAbout, true)
	c.positional = true
	timeout := c.durationVar("timeout", "stop waiting after `DURATION`, leaving the command running (exit 124; 0, the default: no timeout)")
	keep := c.fs.Int("keep-lines", 0, fmt.Sprintf("keep up to `N` lines of the output: grow the session's scrollback to N first (at most %d)", wire.MaxKeepLines))
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	command := strings.Join(c.fs.Args(), " ")
	if strings.TrimSpace(command) == "" {
		return c.usageError("the command to run is required: ptyplex run --socket PATH -- COMMAND")
	}
	if *keep < 0 || *keep > wire.MaxKeepLines || flagSet(c.fs, "keep-lines") && *keep == 0 {
		return c.usageError("invalid --keep-lines %d: expected 1..%d lines", *keep, wire.MaxKeepLines)
	}
	req := map[string]any{"type": "RUN", "command": command}
	if *keep > 0 {
		req["keep_lines"] = *keep
	}
	if *timeout > 0 {
		req["timeout_ms"] = min(max(timeout.Milliseconds(), 1), wire.MaxTimeoutMS)
	}
	var out wire.RunData
	if !call(c.socket, req, &out) {
		return exitFail
	}
	switch {
	case out.LinesLost > 0 && out.ScrollbackCleared:
		// Erased, not pushed out: --keep-lines would not have kept them.
		note := fmt.Sprintf("the first %d lines of the output were erased: the command cleared the scrollback (as clear does)", out.LinesLost)
		fmt.Printf("@@ ptyplex run: %s @@\n", note)
		fmt.Fprintf(os.Stderr, "ptyplex run: %s\n", note)
	case out.LinesLost > 0:
		// In the output itself, where the lines are missing: a reader of
		// stdout alone (an agent, a log) must not take the rest for all.
		note := fmt.Sprintf("the first %d lines of the output had already left the scrollback", out.LinesLost)
		fmt.Printf("@@ ptyplex run: %s (run --keep-lines N keeps up to N lines; or filter: | tail, | grep) @@\n", note)
		fmt.Fprintf(os.Stderr, "ptyplex run: %s\n", note)
	}
	if out.WaitingFor != "prompt" {
		// (Not typed: nothing printed is this command's, whatever an
		// older daemon sent.)
		fmt.Print(termfilter.EscapeBidi(out.Output)) // as output prints the screen
	}
	switch {
	case out.TimedOut:
		what := "the command is still running"
		if out.WaitingFor == "prompt" {
			what = "an earlier command is still running, so this one was not typed"
		}
		fmt.Fprintf(os.Stderr, "ptyplex run: timed out after %v: %s (left running; 'ptyplex run' waits for it to end before typing the next command)\n", *timeout, what)
		return exitTimeout
	case out.ShellExited:
		code := exitFail
		if out.ExitCode != nil {
			code = *out.ExitCode
		}
		fmt.Fprintf(os.Stderr, "ptyplex run: the shell exited (status %d)\n", code)
		return code
	case out.ExitCode == nil:
		fmt.Fprintln(os.Stderr, "ptyplex run: the shell reported no exit status for the command")
		return exitFail
	}
	return *out.ExitCode & 0xff
}

const commandsAbout = `
Lists the last commands (at most 100) of a shell started with
'ptyplex start --shell-integration', oldest first, one a line:
  ID STATUS DURATION LINES COMMAND
STATUS is the exit code, "running", or "-" when the shell sent none. A
command that was running when the shell itself exited (exit N, exec, a
signal) ended with it: its STATUS is the shell's exit code (128+N for
signal N; "shell_exited": true in --json), never "running". LINES
is the output's range A..B in output's numbering ("output --from A --to B"
prints it), or "-" for no output (a running command's so far: "-" until
it prints a line). When the first N lines of the output have left the
scrollback, "(N-lost)" follows: "A..B(N-lost)" with A the oldest line
still held, "-(N-lost)" when none is. Every column but COMMAND is one
word. COMMAND is the text run typed, for a command run started; for one
typed otherwise, the line as the screen shows it between the prompt and
the output (the line editor's drawing of it). --json prints the daemon's
answer.

A program that has sent no shell-integration mark (a shell started
without --shell-integration) has no commands to list: commands says so
on stderr and exits 1, as run does ("integration": false in --json,
which is still printed).`

func runCommands(args []string) int {
	c := newCLI("commands", "ptyplex commands --socket PATH [--last N] [--json]", commandsAbout, true)
	last := c.fs.Int("last", 0, "only the newest `N` commands (0: all kept)")
	asJSON := c.fs.Bool("json", false, "print the answer as JSON")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	if *last < 0 {
		return c.usageError("invalid --last %d: must be 0 or more", *last)
	}
	req := map[string]any{"type": "COMMANDS"}
	if *last > 0 {
		req["last"] = *last
	}
	var out wire.CommandsData
	if !call(c.socket, req, &out) {
		return exitFail
	}
	// Without marks there are no commands to list: as run does, say
	// so and exit 1 (after the answer, with --json).
	code := exitOK
	if !out.Integration {
		defer fmt.Fprintln(os.Stderr, "ptyplex commands: no shell-integration marks seen: start the shell with 'ptyplex start --shell-integration -- bash'")
		code = exitFail
	}
	if *asJSON {
		b, err := wire.Marshal(out)
		if err != nil {
			printError(err)
			return exitFail
		}
		fmt.Println(string(termfilter.EscapeBidiJSON(b)))
		return code
	}
	for _, cmd := range out.Commands {
		status := "-"
		switch {
		case cmd.Running:
			status = "running"
		case cmd.ExitCode != nil:
			status = fmt.Sprint(*cmd.ExitCode)
		}
		dur := time.Duration(cmd.DurationMS) * time.Millisecond
		fmt.Printf("%d %s %v %s %s\n", cmd.ID, status, dur, linesColumn(cmd), termfilter.EscapeBidi(cmd.Command))
	}
	return code
}

// linesColumn is the LINES column of commands: the output's range, "-"
// for none, and how many of its first lines the scrollback lost.
func linesColumn(cmd wire.Command) string {
	lines := "-"
	if cmd.OutputLines > cmd.LinesLost {
		lines = fmt.Sprintf("%d..%d", cmd.From, cmd.To)
	}
	if cmd.OutputLines > 0 && cmd.LinesLost > 0 {
		lines += fmt.Sprintf("(%d-lost)", cmd.LinesLost)
	}
	return lines
}
