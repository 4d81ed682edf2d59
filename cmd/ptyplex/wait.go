//go:build unix

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/ptyplex/ptyplex/internal/session/waitcond"
	"github.com/ptyplex/ptyplex/session/wire"
)

func init() {
	register("wait", "wait for output, a screen condition, or the program's exit", runWait)
}

// exitTimeout is the exit code of a wait whose --timeout passed, as
// timeout(1) uses.
const exitTimeout = 124

const waitAbout = `
Default (or --activity, interminai's older explicit form): waits until the
program prints something or exits, then prints
  Terminal activity: true|false
  Application exited: true|false
--quiet waits for the program to exit and prints its exit code.
--line N (1-based screen line) waits until that line changes, or, with
--contains P / --not-contains P, until it contains / no longer contains the
text P. It prints "Condition met on line N", "Condition already met on line
N", or "Application exited" when the program ends first (exit 0 in each case).
A line below the screen's last row reads as empty (a resize may bring it);
one past 4096, the most rows a screen can have, always does (a note on
stderr says so). --line wins over --quiet.

ptyplex additions:
  --regex RE         like --contains, with a Go regular expression
  --contains/--not-contains/--regex without --line look at the whole screen
                     ("Condition met on screen")
  --quiet-for D      wait until no output arrives for duration D (e.g. 300ms);
                     prints "Terminal quiet for D" or "Application exited"
  --input            wait until the program waits for input: its foreground
                     process is blocked reading the terminal and all its
                     output is on the screen; prints "Waiting for input"
                     (or "Application exited"). On Linux the kernel says so
                     (the tasks' state and system call, every thread); on
                     macOS and FreeBSD, and for programs we may not inspect
                     (setuid), it falls back to 500ms without output and
                     prints "Waiting for input (quiet for 500ms)". Unlike
                     --quiet-for it neither returns during a pause between
                     bursts nor waits on a program that is busy in silence.
  --timeout D        give up after D: prints "Timed out after D", exits 124
Durations are Go durations (300ms, 5s, 1h30m); negative ones are refused,
and ones past about 292 years are clamped to that.
Waits are event-driven: the daemon answers the moment output or exit occurs.
--quiet-for counts from the moment wait starts; earlier output does not
count. A condition wait does not clear the activity flag that the default
mode and 'status' report. To wait for the reaction to input you type, use
'ptyplex input ... --wait-regex RE' (or --wait-contains, --wait-quiet):
that wait looks only at output produced after the input.

Matching (the same in the MCP server's wait and input tools):
` + wire.Semantics

type waitOpts struct {
	socket      string
	line        int
	contains    string
	notContains string
	regex       *regexp.Regexp
	quietFor    time.Duration
	deadline    time.Time // zero: none
	timeout     time.Duration
}

func runWait(args []string) int {
	c := newCLI("wait", "ptyplex wait --socket PATH [--activity | --quiet] [--line N [--contains P | --not-contains P | --regex RE]] [--quiet-for D | --input] [--timeout D]", waitAbout, true)
	quiet := c.fs.Bool("quiet", false, "wait for the program to exit and print its exit code")
	c.fs.Bool("activity", false, "wait for output or the exit (the default mode; for interminai's scripts)")
	line := c.fs.Int("line", 0, "1-based screen `line` to watch")
	contains := c.fs.String("contains", "", "wait until the line (or screen) contains `TEXT`")
	notContains := c.fs.String("not-contains", "", "wait until the line (or screen) no longer contains `TEXT`")
	regex := c.fs.String("regex", "", "wait until the line (or screen) matches the regular expression `RE`")
	quietFor := c.durationVar("quiet-for", "wait until there has been no output for `DURATION`")
	input := c.fs.Bool("input", false, "wait until the program is blocked reading the terminal, its output all shown")
	timeout := c.durationVar("timeout", "give up after `DURATION` (exit 124; 0, the default: no timeout)")
	if done, code := c.parse(args); done {
		return code
	}
	if !c.needSocket() {
		return exitUsage
	}
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	patterns := 0
	for _, n := range []string{"contains", "not-contains", "regex"} {
		if set[n] {
			patterns++
		}
	}
	// These two fail with interminai's words and exit code (1, not the
	// usage errors' 2): scripts written for it check them.
	if set["contains"] && set["not-contains"] {
		fmt.Fprintln(os.Stderr, "Error: --not-contains and --contains are mutually exclusive")
		return exitFail
	}
	if set["line"] && *line < 1 {
		fmt.Fprintf(os.Stderr, "Error: line number must be 1 or greater (1-based), not %d\n", *line)
		return exitFail
	}
	// A line below the screen reads as empty, as in interminai, since a
	// resize may bring it; one below the tallest screen there can be
	// never comes. interminai takes it all the same (so --not-contains
	// is met at once there, and scripts may count on that), so it is
	// taken here too, with a note that says what it will read.
	if set["line"] && *line > wire.MaxDim {
		fmt.Fprintf(os.Stderr, "ptyplex wait: note: --line %d is past the tallest screen there can be (%d rows): it always reads as empty\n", *line, wire.MaxDim)
	}
	if patterns > 1 {
		return c.usageError("--contains, --not-contains and --regex cannot be combined")
	}
	// interminai lets --line win over --quiet, and --quiet over a
	// pattern without --line (the switch below); only our own options
	// refuse it.
	if set["line"] {
		*quiet = false
	}
	if *quiet && (set["regex"] || set["quiet-for"]) {
		return c.usageError("--quiet cannot be combined with --regex or --quiet-for")
	}
	if set["activity"] && (*quiet || set["line"] || patterns > 0 || set["quiet-for"]) {
		return c.usageError("--activity cannot be combined with --quiet, --line, --contains, --not-contains, --regex or --quiet-for")
	}
	if set["quiet-for"] && (set["line"] || patterns > 0) {
		return c.usageError("--quiet-for cannot be combined with --line or a pattern")
	}
	if *input && (*quiet || set["activity"] || set["line"] || patterns > 0 || set["quiet-for"]) {
		return c.usageError("--input cannot be combined with --quiet, --activity, --line, a pattern or --quiet-for")
	}
	o := waitOpts{socket: c.socket, line: *line, contains: *contains, notContains: *notContains, quietFor: *quietFor, timeout: *timeout}
	if set["regex"] {
		re, err := regexp.Compile(*regex)
		if err != nil {
			return c.usageError("invalid --regex: %v", err)
		}
		o.regex = re
	}
	if *timeout > 0 {
		o.deadline = time.Now().Add(*timeout)
	}
	switch {
	case *input:
		sp := o.spec(false, false)
		sp.Mode = waitcond.Input
		return o.report(sp, exitOK)
	case *quiet:
		return o.waitExit()
	case set["line"] || patterns > 0:
		return o.waitCondition(set["contains"], set["not-contains"])
	case set["quiet-for"]:
		return o.waitQuiet()
	default:
		return o.waitActivity()
	}
}

// waitReq builds a WAIT request; with a deadline it carries the time left.
// ok is false when the deadline has already passed.
func (o *waitOpts) waitReq(activity bool, limit time.Duration) (map[string]any, bool) {
	req := map[string]any{"type": "WAIT", "activity": activity}
	if !o.deadline.IsZero() {
		left := time.Until(o.deadline)
		if left <= 0 {
			return nil, false
		}
		if limit <= 0 || left < limit {
			limit = left
		}
	}
	if limit > 0 {
		// A Duration never holds more than the daemon's maximum; the
		// clamp keeps it so should either change.
		req["timeout_ms"] = min(max(limit.Milliseconds(), 1), wire.MaxTimeoutMS)
	}
	return req, true
}

func (o *waitOpts) timedOut() int {
	fmt.Printf("Timed out after %v\n", o.timeout)
	return exitTimeout
}

func (o *waitOpts) waitActivity() int {
	w, code, ok := o.waitOnce(true)
	if !ok {
		return code
	}
	fmt.Printf("Terminal activity: %t\nApplication exited: %t\n", wire.IsTrue(w.Activity), wire.IsTrue(w.Exited))
	return exitOK
}

func (o *waitOpts) waitExit() int {
	w, code, ok := o.waitOnce(false)
	if !ok {
		return code
	}
	fmt.Println(exitCode(w.ExitCode))
	return exitOK
}

// waitOnce sends one WAIT bounded by --timeout. When it returns ok false,
// the outcome (a timeout or a failed call) is already reported and code is
// the exit status.
func (o *waitOpts) waitOnce(activity bool) (w wire.WaitData, code int, ok bool) {
	req, ok := o.waitReq(activity, 0)
	if !ok {
		return w, o.timedOut(), false
	}
	if !call(o.socket, req, &w) {
		return w, exitFail, false
	}
	if w.TimedOut {
		return w, o.timedOut(), false
	}
	return w, exitOK, true
}

// spec is the shared wait engine's form of the options (internal/session/waitcond,
// which the MCP server uses too).
func (o *waitOpts) spec(contains, notContains bool) waitcond.Spec {
	// A line past the screen's end is empty, as interminai's CLI reads
	// it: --not-contains is met, --contains waits (for a resize).
	sp := waitcond.Spec{Line: o.line, QuietFor: o.quietFor, PastScreenEmpty: true}
	if !o.deadline.IsZero() {
		sp.Timeout = max(time.Until(o.deadline), time.Millisecond)
	}
	switch {
	case o.quietFor > 0:
		sp.Mode = waitcond.Quiet
	case contains:
		sp.Mode, sp.Text = waitcond.Contains, o.contains
	case notContains:
		sp.Mode, sp.Text = waitcond.NotContains, o.notContains
	case o.regex != nil:
		sp.Mode, sp.Regex = waitcond.Regex, o.regex
	default:
		sp.Mode = waitcond.Change
	}
	return sp
}

// waitQuiet returns once quietFor passes without output.
func (o *waitOpts) waitQuiet() int {
	return o.report(o.spec(false, false), exitOK)
}

// waitCondition waits for a line or screen condition; the engine re-checks
// after every burst of output and never polls.
func (o *waitOpts) waitCondition(contains, notContains bool) int {
	return o.report(o.spec(contains, notContains), exitOK)
}

// report runs sp and prints its outcome the way `wait` always has.
// ifExited is the exit status when the program ends before the condition
// holds: 0 for `wait`, whose "Application exited" is one of its normal
// answers (as in interminai), 1 for `input --wait-*`, where it means the
// input got no answer.
func (o *waitOpts) report(sp waitcond.Spec, ifExited int) int {
	res, err := waitcond.Run(context.Background(), o.socket, sp)
	if err != nil {
		printError(err)
		return exitFail
	}
	where := "screen"
	if o.line > 0 {
		where = fmt.Sprintf("line %d", o.line)
	}
	switch {
	case res.TimedOut:
		return o.timedOut()
	case res.Already:
		fmt.Printf("Condition already met on %s\n", where)
	case res.Met && sp.Mode == waitcond.Input && res.Detection == "quiet":
		fmt.Printf("Waiting for input (quiet for %v)\n", wire.InputQuietFallback)
	case res.Met && sp.Mode == waitcond.Input:
		fmt.Println("Waiting for input")
	case res.Met && sp.Mode == waitcond.Quiet:
		fmt.Printf("Terminal quiet for %v\n", o.quietFor)
	case res.Met:
		fmt.Printf("Condition met on %s\n", where)
	default:
		fmt.Println("Application exited")
		return ifExited
	}
	return exitOK
}
